"""Before and after: `sectorviz compare`, the comparison model's matching and ratios, and the
JSON contract (A's and B's reports are exactly `report --json`)."""

import json
from pathlib import Path

import pytest

from sectorviz.cli import main
from sectorviz.model import analyze, load_pattern, pattern_from_dict
from sectorviz.scene.compare import compare, factor_words, match_instructions, Pair

EXAMPLES = Path(__file__).parents[1] / "resources" / "examples"
NAIVE, TILED = (str(EXAMPLES / f"transpose-{k}.sectorviz.json") for k in ("naive", "tiled"))
GATHER, ADD = (str(EXAMPLES / f) for f in ("gather-distinct.sectorviz.json",
                                           "vector-add.sectorviz.json"))
AOS, SOA = (str(EXAMPLES / f"{k}-cuda.sectorviz.json") for k in ("aos", "soa"))


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("a, b, per_warp, ratio", [
    (NAIVE, TILED, [36, 8], 8 / 36), (GATHER, ADD, [40, 12], 12 / 40),
    (AOS, SOA, [216, 36], 36 / 216)])
def test_comparison_numbers_are_the_two_reports(capsys, a, b, per_warp, ratio):
    code, out, _ = run(capsys, "compare", a, b, "--json")
    doc = json.loads(out)
    assert code == 0 and set(doc) == {"a", "b", "warp", "instructions", "totals"}
    for key, path in (("a", a), ("b", b)):
        assert run(capsys, "report", path, "--json")[1] == json.dumps(doc[key], indent=2) + "\n"
    t = doc["totals"]
    assert t["warp_sectors"] == per_warp
    assert t["sectors"] == [doc["a"]["totals"]["sectors"], doc["b"]["totals"]["sectors"]]
    assert t["sectors_ratio"] == pytest.approx(ratio) == t["sector_bytes_ratio"]
    assert t["useful_fraction"] == [doc["a"]["totals"]["useful_fraction"],
                                    doc["b"]["totals"]["useful_fraction"]]
    for pair in doc["instructions"]:
        ia, ib = doc["a"]["instructions"][pair["a"]], doc["b"]["instructions"][pair["b"]]
        assert pair["sectors"] == [ia["sectors"], ib["sectors"]]
        assert pair["sectors_ratio"] == ib["sectors"] / ia["sectors"]
        assert pair["explanation"] == [ia["explanation"], ib["explanation"]]
    assert sum(p["warp_sectors"][0] for p in doc["instructions"]) == per_warp[0]


def test_headline_and_sheet(capsys):
    code, out, _ = run(capsys, "compare", NAIVE, TILED)
    assert code == 0
    assert "sector demand 36 MiB → 8 MiB, 4.5x less (1,179,648 → 262,144 sectors)" in out
    assert "useful 22.2% → 100% of the fetched bytes" in out
    assert "sectors per warp (warp 0) 36 → 8, 4.5x less" in out
    assert "store c[col][row] → store c[out_row][out_col]  32 → 4 sectors, 8x less" in out
    code, out, _ = run(capsys, "compare", GATHER, ADD, "--json")
    assert json.loads(out)["totals"]["headline"] == (
        "sector demand 40 MiB → 12 MiB, 3.33x less; useful 30% → 100%")


def test_warp_and_instruction(capsys):
    code, out, _ = run(capsys, "compare", NAIVE, TILED, "--json", "--warp", "33",
                       "--instruction", "store c[col][row]")
    doc = json.loads(out)
    assert code == 0 and doc["warp"] == 33 and doc["a"]["warp"]["warp"] == 33
    assert run(capsys, "report", NAIVE, "--json", "--warp", "33")[1] == \
        json.dumps(doc["a"], indent=2) + "\n"
    assert [(p["a"], p["b"], p["matched_by"]) for p in doc["instructions"]] == [(1, 1, "order")]


def test_matching_by_name_line_and_order():
    by = {p.a: (p.b, p.matched_by) for p in match_instructions(*map(load_pattern, (AOS, SOA)))}
    assert by == {k: (k, "line") for k in range(9)}
    two = pattern_from_dict(small(["store y", "load x", "load z"]), None)
    one = pattern_from_dict(small(["load x", "load w"]), None)
    assert match_instructions(two, one) == (Pair(0, 1, "order"), Pair(1, 0, "name"),
                                            Pair(2, None, "only in A"))
    assert match_instructions(one, two) == (Pair(0, 1, "name"), Pair(1, 0, "order"),
                                            Pair(None, 2, "only in B"))
    c = compare(two, analyze(two), one, analyze(one))
    assert c.pair_json(c.pairs[2])["sectors_ratio"] is None


def small(names):
    return {"format": "sectorviz.pattern/1", "name": "s", "launch": {"grid": [1], "block": [32]},
            "arrays": {"x": {"dtype": "float32", "length": 64}},
            "accesses": [{"name": n, "op": n.split()[0], "array": "x", "index": "threadIdx.x"}
                         for n in names]}


def test_factor_words():
    assert [factor_words(r) for r in (8 / 36, 6.0, 1.0, 0.0, None, 0.3)] == [
        "4.5x less", "6x more", "same", "none left", "new", "3.33x less"]


@pytest.mark.parametrize("argv, line", [
    (["compare", NAIVE, "/no/such.json"], "/no/such.json: "),
    (["compare", NAIVE, TILED, "--warp", "32768"],
     f"{NAIVE}: --warp: warp 32768 outside [0, 32768)"),
    (["compare", NAIVE, TILED, "--instruction", "nope"], f"{NAIVE}: instruction: no instruction"),
    (["compare", NAIVE], "sectorviz compare: the following arguments are required: other"),
])
def test_bad_input_is_one_line_naming_the_file(capsys, argv, line):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.startswith(line) and err.count("\n") == 1
