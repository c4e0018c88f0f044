"""Review: every bad pattern exits 2 with one stderr line naming the file and the place."""

import copy
import json

import pytest

from sectorviz.cli import main

BASE = {
    "format": "sectorviz.pattern/1", "params": {"n": 1024},
    "launch": {"grid": [4], "block": [256]},
    "arrays": {"a": {"dtype": "float32", "length": "n"},
               "idx": {"dtype": "int32", "length": "n", "values": {"kind": "arange"}}},
    "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"}, "guard": "i < n",
    "accesses": [{"name": "ld", "op": "load", "array": "a", "index": "i"},
                 {"name": "gather", "op": "load", "array": "a", "index": "idx[i] % n"}],
}


def setting(*path_and_value):
    *path, value = path_and_value

    def mutate(doc):
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return mutate


def chain_of_lets(n):
    def mutate(doc):
        doc["let"] = {"i": "blockIdx.x * blockDim.x + threadIdx.x"}
        for k in range(n):
            doc["let"][f"l{k}"] = f"{'l' + str(k - 1) if k else 'i'} + 0"
        doc["accesses"][0]["index"] = f"l{n - 1}"
    return mutate


CASES = {  # name -> (mutation, place the error line must name)
    "dtype is a list": (setting("arrays", "a", "dtype", ["float32"]), "arrays.a.dtype"),
    "values kind is a list": (setting("arrays", "idx", "values", {"kind": ["arange"]}),
                              "arrays.idx.values.kind"),
    "values kind is an object": (setting("arrays", "idx", "values", {"kind": {}}),
                                 "arrays.idx.values.kind"),
    "param over 64 bits": (setting("params", "n", 2**70), "params.n"),
    "length over 64 bits": (setting("arrays", "a", "length", 2**70), "arrays.a.length"),
    "grid over 64 bits": (setting("launch", "grid", [2**70]), "launch.grid[0]"),
    "block over 64 bits": (setting("launch", "block", [2**64 + 256]), "launch.block[0]"),
    "guard over 64 bits": (setting("guard", 2**80), "guard"),
    "index over 64 bits": (setting("accesses", 0, "index", 2**70), "accesses[0].index"),
    "base over 64 bits": (setting("arrays", "a", "base", 2**63), "arrays.a.base"),
    "offset over 64 bits": (setting("arrays", "a", "offset_bytes", 2**64), "arrays.a.offset_bytes"),
    "array ends past 2^63": (setting("arrays", "a", "base", 2**63 - 64), "arrays.a"),
    "constant value over 64 bits": (
        setting("arrays", "idx", "values", {"kind": "constant", "value": 2**70}),
        "arrays.idx.values.value"),
    "uniform high over 64 bits": (
        setting("arrays", "idx", "values", {"kind": "uniform", "low": 0, "high": 2**70}),
        "arrays.idx.values.high"),
    "element size over 64 bits": (setting("arrays", "a", "dtype", {"bytes": 2**70}),
                                  "arrays.a.dtype.bytes"),
    "huge sector_bytes": (setting("sector_bytes", 2**40), "sector_bytes"),
    "sector_bytes over 64 bits": (setting("sector_bytes", 2**70), "sector_bytes"),
    "huge sector_size": (setting("sector_size", 2**40), "sector_size"),
    "sector_size and its old name": (lambda doc: doc.update(sector_size=32, sector_bytes=32),
                                     "sector_bytes"),
    "step over 64 bits": (setting("accesses", 0, "loops",
                                  [{"var": "k", "start": 0, "stop": 2, "step": 2**70}]),
                          "accesses[0].loops[0].step"),
    "long left-associative chain": (setting("guard", "+".join(["1"] * 20000)), "guard"),
    "long chain in an index": (setting("accesses", 0, "index", "+".join(["i"] + ["0"] * 900)),
                               "accesses[0].index"),
    "lets referring to lets, 150 deep": (chain_of_lets(150), "let.l"),
    "loops nested 1500 deep": (setting("accesses", 0, "loops", [
        {"var": f"k{j}", "start": 0, "stop": 1} for j in range(1500)]), "accesses[0].loops"),
}


def run(capsys, path):
    code = main(["report", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(code, err, path, place):
    assert code == 2, err
    assert "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith(f"{path}: "), err
    assert place in err, err


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_pattern_is_one_line(tmp_path, capsys, name):
    mutate, place = CASES[name]
    doc = copy.deepcopy(BASE)
    mutate(doc)
    path = tmp_path / "bad.sectorviz.json"
    path.write_text(json.dumps(doc))
    code, _, err = run(capsys, path)
    assert_one_line(code, err, path, place)


@pytest.mark.parametrize("text", ["[" * 100000 + "]" * 100000,
                                  '{"format": ' + "[" * 3000 + "]" * 3000 + "}"])
def test_deeply_nested_json_is_one_line(tmp_path, capsys, text):
    path = tmp_path / "deep.sectorviz.json"
    path.write_text(text)
    code, _, err = run(capsys, path)
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1
    assert err.startswith(f"{path}: ")


def test_a_shorter_let_chain_still_works(tmp_path, capsys):
    doc = copy.deepcopy(BASE)
    chain_of_lets(20)(doc)
    path = tmp_path / "ok.sectorviz.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(capsys, path)
    assert code == 0 and not err


@pytest.mark.parametrize("block", [32, 33])
def test_the_deepest_accepted_expressions_still_evaluate(block):
    """Just under the depth limit, with every loop level used: no RecursionError."""
    from sectorviz.model import analyze, pattern_from_dict
    from sectorviz.model.pattern import MAX_LOOPS
    lets = {"l0": "threadIdx.x"}
    for k in range(1, 36):
        lets[f"l{k}"] = f"l{k - 1} + 0"
    nested = "idx[" * 20 + "l35" + "]" * 20
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [2], "block": [block]},
        "arrays": {"a": {"dtype": "float32", "length": 64},
                   "idx": {"dtype": "int32", "length": 64, "values": {"kind": "arange"}}},
        "let": lets, "guard": "min(" * 10 + "l35" + ", 64)" * 10 + " < 64",
        "accesses": [{"op": "load", "array": "a", "index": nested,
                      "loops": [{"var": f"k{j}", "start": 0, "stop": 1}
                                for j in range(MAX_LOOPS)]}]})
    assert analyze(p).instructions[0].sectors == {32: 8, 33: 10}[block]
