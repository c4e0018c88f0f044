"""Before and after: `sectorviz compare`, the comparison model's matching and ratios, and the
JSON contract (A's and B's reports are exactly `report --json`)."""

import json
import re
from pathlib import Path

import pytest

from sectorviz.cli import main
from sectorviz.gather.compare import compare, match_instructions, match_shared
from sectorviz.model import analyze, load_pattern, pattern_from_dict, shared_stats
from sectorviz.model.memo import MEMO
from sectorviz.scene.compare import Pair, factor_words

EXAMPLES = Path(__file__).parents[2] / "resources" / "examples"
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
    assert code == 0 and set(doc) == {"a", "b", "warp", "instructions", "shared", "totals"}
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


# ---------------------------------------------------------------- shared memory

NAIVE_CUDA, TILED_CUDA = (str(EXAMPLES / f"transpose-{k}-cuda.sectorviz.json")
                          for k in ("naive", "tiled"))


def tile_variants(folder: Path) -> tuple[str, str]:
    """shared-tile-column's global load, tile store and column read, as two files: the tile
    32 x 32 (A) and padded to 33 floats a row (B), the instruction names unchanged."""
    doc = json.loads((EXAMPLES / "shared-tile-column.sectorviz.json").read_text())
    doc["accesses"] = doc["accesses"][:3]
    del doc["arrays"]["padded"]
    paths = []
    for name, ld in (("unpadded", None), ("padded", "dim + 1")):
        if ld:
            doc["arrays"]["tile"]["ld"] = ld
        doc["name"] = f"tile, {name}"
        paths.append(folder / f"{name}.sectorviz.json")
        paths[-1].write_text(json.dumps(doc))
    return tuple(map(str, paths))


def cuda_tile_variants(folder: Path) -> tuple[str, str]:
    """The CUDA tiled transpose with its tile unpadded (A) and as shipped, padded (B)."""
    source = (EXAMPLES / "transpose.cu").read_text()
    unpadded = source.replace("tile[TILE_DIM][TILE_DIM + 1]", "tile[TILE_DIM][TILE_DIM]")
    assert unpadded != source
    (folder / "transpose.cu").write_text(unpadded)
    doc = json.loads(Path(TILED_CUDA).read_text())
    doc["name"] = "Tiled transpose, unpadded tile"
    (folder / "unpadded.sectorviz.json").write_text(json.dumps(doc))
    return str(folder / "unpadded.sectorviz.json"), TILED_CUDA


def shared_case(tmp_path, case):
    if case == "padding":
        return tile_variants(tmp_path)
    if case == "cuda padding":
        return cuda_tile_variants(tmp_path)
    return {"pattern": (NAIVE, TILED), "cuda": (NAIVE_CUDA, TILED_CUDA)}[case]


@pytest.mark.parametrize("case, matched, grid, per_warp", [
    ("pattern", [(None, 0, "only in B"), (None, 1, "only in B")], [0, 65536], [0, 2]),
    ("cuda", [(None, 0, "only in B"), (None, 1, "only in B")], [0, 65536], [0, 2]),
    ("padding", [(0, 0, "name"), (1, 1, "name")], [4224, 256], [33, 2]),
    ("cuda padding", [(0, 0, "name"), (1, 1, "name")], [1081344, 65536], [33, 2])])
@pytest.mark.parametrize("warp", [None, 33])
def test_shared_numbers_are_the_two_reports(capsys, tmp_path, case, matched, grid, per_warp,
                                            warp):
    """Each shared pair's grid figures and explanations are the two `report --json`s', its
    per-warp wavefronts the analysis' per-warp counts; the totals are the reports' too."""
    a, b = shared_case(tmp_path, case)
    flags = ["--warp", str(warp)] * (warp is not None)
    code, out, _ = run(capsys, "compare", a, b, "--json", *flags)
    doc = json.loads(out)
    reports = [json.loads(run(capsys, "report", path, "--json", *flags)[1]) for path in (a, b)]
    assert code == 0 and [doc["a"], doc["b"]] == reports
    assert [(p["a"], p["b"], p["matched_by"]) for p in doc["shared"]] == matched
    per_warp_counts = [analyze(load_pattern(path), per_warp=True).per_warp_shared
                       for path in (a, b)]
    for pair in doc["shared"]:
        for side, (k, report, counts) in enumerate(zip((pair["a"], pair["b"]), reports,
                                                       per_warp_counts)):
            if k is None:
                assert all(pair[f][side] is None for f in ("wavefronts", "warp_wavefronts",
                                                           "explanation", "name"))
                continue
            single = report["shared"][k]
            for field in ("requests", "wavefronts", "ideal_wavefronts", "bank_conflicts",
                          "wavefronts_per_request", "explanation", "name"):
                assert pair[field][side] == single[field]
            assert pair["conflict_ratio"][side] == single["wavefronts"] / single["ideal_wavefronts"]
            assert pair["warp_wavefronts"][side] == counts[0, k, warp or 0]
            assert pair["warp_ideal_wavefronts"][side] == counts[1, k, warp or 0]
    t = doc["totals"]
    for field in ("wavefronts", "ideal_wavefronts", "bank_conflicts", "requests",
                  "wavefronts_per_request"):
        assert t[f"shared_{field}"] == [r["shared_totals"][field] for r in reports]
    assert t["shared_wavefronts"] == grid and t["warp_shared_wavefronts"] == per_warp
    assert t["warp_shared_wavefronts"] == [int(c[0, :, warp or 0].sum()) if c is not None else 0
                                           for c in per_warp_counts]
    assert t["shared_wavefronts_ratio"] == (grid[1] / grid[0] if grid[0] else None)


def values(text: str, label: str) -> list[str]:
    """The values of the sheet text's step rows labelled `label`."""
    return re.findall(rf"^  {re.escape(label)} +(\S.*)$", text, re.M)


def test_shared_sheet_and_headline(capsys, tmp_path):
    code, out, _ = run(capsys, "compare", NAIVE, TILED)
    assert code == 0
    assert "shared wavefronts — → 65,536, conflict-free (ideal wavefronts — → 65,536)" in out
    assert "shared wavefronts per warp (warp 0) — → 2, conflict-free" in out
    assert values(out, "load tile[tx][ty] (only in B)") == ["— → 1 wavefront, conflict-free"]
    assert "  B: load tile[tx][ty] (shared)" in out
    a, b = tile_variants(tmp_path)
    code, out, _ = run(capsys, "compare", a, b)
    assert "shared wavefronts per warp (warp 0) 33 → 2, 16.5x less, conflict-free" in out
    assert values(out, "load tile[tx][ty]") == ["32 → 1 wavefront, 32x less, conflict-free"]
    assert values(out, "bank conflicts") == ["3,968 → 0, none left"]
    assert values(out, "conflict ratio (wavefronts / ideal)") == ["16.50 → 1.00"]
    code, out, _ = run(capsys, "compare", b, a, "--json")
    assert json.loads(out)["totals"]["headline"] == (
        "sector demand 16 KiB → 16 KiB, same; useful 100% → 100%; shared wavefronts 256 → "
        "4,224, 16.5x more, 3,968 bank conflicts, 16.5x the ideal")
    code, out, _ = run(capsys, "compare", TILED, NAIVE)
    assert "shared wavefronts per warp (warp 0) 2 → —, none left" in out


def test_a_shared_instruction_by_name(capsys, tmp_path):
    a, b = tile_variants(tmp_path)
    code, out, _ = run(capsys, "compare", a, b, "--json", "--instruction", "load tile[tx][ty]")
    doc = json.loads(out)
    assert code == 0 and doc["instructions"] == []
    assert [(p["a"], p["b"], p["warp_wavefronts"]) for p in doc["shared"]] == [(1, 1, [32, 1])]
    code, out, _ = run(capsys, "compare", a, b, "--instruction", "0")
    assert "load in[row][tx]" in out and "load tile[tx][ty]  " not in out


def test_shared_matching_by_line_and_order():
    """Shared instructions pair by the global rule: CUDA names carry the source, so a
    renamed tile pairs by line; pattern files by order."""
    tiled = load_pattern(TILED_CUDA)
    assert match_shared(tiled, tiled) == (Pair(0, 0, "name", "shared"),
                                          Pair(1, 1, "name", "shared"))
    two = pattern_from_dict(shared_small(["store s", "load t"]), None)
    one = pattern_from_dict(shared_small(["load t"]), None)
    assert match_shared(two, one) == (Pair(0, None, "only in A", "shared"),
                                      Pair(1, 0, "name", "shared"))
    assert match_shared(one, two) == (Pair(0, 1, "name", "shared"),
                                      Pair(None, 0, "only in B", "shared"))
    renamed = pattern_from_dict(shared_small(["store u", "load v"]), None)
    assert [p.matched_by for p in match_shared(two, renamed)] == ["order", "order"]


def shared_small(names):
    doc = small(["load x"])
    doc["arrays"]["s"] = {"dtype": "float32", "length": 64, "space": "shared"}
    doc["accesses"] += [{"name": n, "op": n.split()[0], "array": "s", "index": "threadIdx.x"}
                        for n in names]
    return doc


def test_shared_past_the_budget_is_not_counted_and_says_so(capsys, monkeypatch):
    """Past the work budget B's shared side is not counted (its report's shared_note): the
    comparison says 'not counted' where the grid figures would be; the warp's stand. (The
    closed forms count the tiled transpose's tiles cheaply: here they are told they cannot,
    as for a kernel whose shared steps move lanes within bank words.)"""
    monkeypatch.setattr(shared_stats, "bank_shift_invariant", lambda batch: False)
    MEMO.clear()
    budget = ["--budget", "3000000"]
    code, out, _ = run(capsys, "compare", NAIVE_CUDA, TILED_CUDA, "--json", *budget)
    doc = json.loads(out)
    note = doc["b"]["shared_note"]
    assert code == 0 and note.startswith("not counted: the shared accesses of 32,768 warps")
    t = doc["totals"]
    assert t["shared_wavefronts"] == [0, None] and t["warp_shared_wavefronts"] == [0, 2]
    assert t["headline"].endswith("; shared wavefronts — → not counted")
    assert [p["wavefronts"] for p in doc["shared"]] == [[None, None]] * 2
    MEMO.clear()  # a second command starts afresh, as a new process does
    code, out, _ = run(capsys, "compare", NAIVE_CUDA, TILED_CUDA, *budget)
    assert f"shared wavefronts — → not counted (ideal wavefronts — → not counted; B: {note})" \
        in " ".join(out.split())  # the answer wraps at 100 columns
    assert values(out, "bank conflicts") == ["— → not counted"]
    assert "shared wavefronts per warp (warp 0) — → 2, conflict-free" in out
