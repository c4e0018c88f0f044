"""Issue "The first hour with a real kernel", item 2: the inputs a kernel needs. A float param
reaches a kernel's float argument in both engines; a float where an integer is needed is
refused in one line naming the key."""

from __future__ import annotations

import json

import pytest

from sectorviz.cli import main

ENGINES = ("source", "compiled")

# lanes whose x is above the threshold store one float: x[i] = i, threshold 15.5 -> lanes 16..31
THRESHOLD = """extern "C" __global__ void k(const float *x, float *y, float threshold) {
    int i = threadIdx.x;
    if (x[i] > threshold) y[i] = 1.0f;
}
"""


def write(tmp_path, code: str, engine: str, params: dict, **top) -> str:
    """tmp_path/k.cu holding `code` and a pattern for its kernel k (one warp) -> its path."""
    (tmp_path / "k.cu").write_text(code)
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
           "params": params,
           "arrays": {"x": {"length": 32, "values": {"kind": "arange"}}, "y": {"length": 32}},
           "kernel": {"source": "k.cu", "function": "k", "engine": engine}, **top}
    path = tmp_path / "k.sectorviz.json"
    path.write_text(json.dumps(doc))
    return str(path)


def report(capsys, path: str, *args: str) -> tuple[int, str, str]:
    code = main(["report", path, *args])
    out, err = capsys.readouterr()
    return code, out, err


def stores(out: str) -> dict:
    """The --json sheet -> its store instruction's statistics."""
    return next(i for i in json.loads(out)["instructions"] if i["op"] == "store")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_float_param_decides_a_branch_on_a_float_argument(tmp_path, capsys, engine):
    """16 lanes (16..31) store 4 bytes each: 64 bytes, sectors 2 and 3 of y."""
    code, out, err = report(capsys, write(tmp_path, THRESHOLD, engine, {"threshold": 15.5}),
                            "--json")
    assert code == 0, err
    store = stores(out)
    assert (store["active_lanes"], store["sectors"]) == (16, 2)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_exponent_makes_a_float(tmp_path, capsys, engine):
    """1e1 = 10: lanes 11..31 store, 84 bytes from byte 44: sectors 1, 2 and 3."""
    code, out, err = report(capsys, write(tmp_path, THRESHOLD, engine, {"threshold": 1e1}),
                            "--json")
    assert code == 0, err
    assert (stores(out)["active_lanes"], stores(out)["sectors"]) == (21, 3)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_float_for_an_integer_argument_is_refused_naming_the_key(tmp_path, capsys, engine):
    code_text = THRESHOLD.replace("float threshold", "int threshold")
    code, out, err = report(capsys, write(tmp_path, code_text, engine, {"threshold": 15.5}))
    assert code == 2 and not out and err.count("\n") == 1, err
    assert "params.threshold" in err and "15.5 is not an integer" in err


def test_a_float_param_in_a_launch_expression_is_refused_naming_the_key(tmp_path, capsys):
    path = write(tmp_path, THRESHOLD, "source", {"threshold": 15.5, "b": 32.0})
    doc = json.loads((tmp_path / "k.sectorviz.json").read_text())
    doc["launch"]["block"] = ["b"]
    (tmp_path / "k.sectorviz.json").write_text(json.dumps(doc))
    code, out, err = report(capsys, path)
    assert code == 2 and not out and err.count("\n") == 1, err
    assert "launch.block[0]" in err and "params.b is a floating-point number" in err


def test_a_number_too_large_for_a_float_is_refused(tmp_path, capsys):
    path = write(tmp_path, THRESHOLD, "source", {"threshold": 0})
    (tmp_path / "k.sectorviz.json").write_text(
        (tmp_path / "k.sectorviz.json").read_text().replace('"threshold": 0', '"threshold": 1e999'))
    code, out, err = report(capsys, path)
    assert code == 2 and not out and err.count("\n") == 1, err
    assert "params.threshold" in err and "not a finite number" in err


HISTOGRAM = """extern "C" __global__ void k(const unsigned char *data, unsigned int *bins) {
    atomicAdd(&bins[data[threadIdx.x]], 1u);
}
"""


def histogram(tmp_path, engine: str, **top) -> str:
    """A one-warp byte histogram whose data has no values -> its pattern's path."""
    (tmp_path / "k.cu").write_text(HISTOGRAM)
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
           "arrays": {"data": {"length": 1024}, "bins": {"length": 256}},
           "kernel": {"source": "k.cu", "function": "k", "engine": engine}, **top}
    path = tmp_path / "k.sectorviz.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_address_from_missing_data_offers_the_json_to_add(tmp_path, capsys, engine):
    """data (uint8) indexes bins (256 long): [0, 256), both the dtype's range and bins'."""
    code, out, err = report(capsys, histogram(tmp_path, engine))
    assert code == 2 and not out and err.count("\n") == 1, err
    assert err.rstrip().endswith(
        'add "values": {"kind": "uniform", "seed": 0, "low": 0, "high": 256} to arrays.data')


@pytest.mark.parametrize("engine", ENGINES)
def test_assume_values_counts_with_stated_values(tmp_path, capsys, engine):
    """--assume-values uniform gives data the values its message offers, and says so."""
    code, out, err = report(capsys, histogram(tmp_path, engine), "--assume-values", "uniform",
                            "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["assumed_values"] == {
        "data": {"kind": "uniform", "seed": 0, "low": 0, "high": 256}}
    # 32 bytes of data from byte 0: one sector
    assert [(i["array"], i["sectors"]) for i in doc["instructions"]][0] == ("data", 1)


def test_the_assume_values_key_states_the_values_in_the_text_report(tmp_path, capsys):
    code, out, err = report(capsys, histogram(tmp_path, "source", assume_values="uniform"))
    assert code == 0, err
    assert out.startswith("assumed values: arrays.data uniform integers in [0, 256), seed 0 "
                          "(not given in the pattern)\n")


def test_given_values_are_never_assumed(tmp_path, capsys):
    """data has values: nothing is assumed, nothing is said."""
    path = histogram(tmp_path, "source", assume_values="uniform")
    doc = json.loads((tmp_path / "k.sectorviz.json").read_text())
    doc["arrays"]["data"]["values"] = {"kind": "constant", "value": 3}
    (tmp_path / "k.sectorviz.json").write_text(json.dumps(doc))
    code, out, err = report(capsys, path, "--json")
    assert code == 0, err
    assert "assumed_values" not in json.loads(out)
    # every lane adds to bins[3]: one sector
    assert [(i["array"], i["sectors"]) for i in json.loads(out)["instructions"]] == [
        ("data", 1), ("bins", 1)]


def test_an_unknown_assumption_is_refused_naming_the_key(tmp_path, capsys):
    code, out, err = report(capsys, histogram(tmp_path, "source", assume_values="normal"))
    assert code == 2 and not out and err.count("\n") == 1, err
    assert "assume_values" in err and "expected one of uniform" in err


def test_sweep_and_batch_points_assume_what_the_key_asks_and_say_so(tmp_path, capsys):
    """The pattern key works beyond report: each sweep point and batch file assumes the
    values (the same ones report assumes) and names them under "assumed_values"."""
    path = histogram(tmp_path, "source", assume_values="uniform")
    assert main(["batch", str(path), "--jsonl", "-", "--jobs", "1", "--quiet"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    entry = json.loads(line)
    assert entry["report"]["assumed_values"] == {
        "data": {"kind": "uniform", "seed": 0, "low": 0, "high": 256}}
    code, out, err = report(capsys, path, "--json")
    assert code == 0, err
    assert entry["report"]["totals"] == json.loads(out)["totals"]


def test_export_and_compare_apply_the_key_and_say_so(tmp_path, capsys):
    path = histogram(tmp_path, "source", assume_values="uniform")
    out = tmp_path / "sheet.md"
    assert main(["export", str(path), "-o", str(out)]) == 0
    assert capsys.readouterr().err == ("assumed values: arrays.data uniform integers in "
                                       "[0, 256), seed 0 (not given in the pattern)\n")
    assert "sector demand" in out.read_text()
    assert main(["compare", str(path), str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["a"]["totals"]["sectors"] > 0
