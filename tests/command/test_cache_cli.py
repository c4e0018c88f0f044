"""The cache model on the command line and on the examples: --machine, --l2-bytes, --order,
the `cache` JSON object, the sheet's fifth step, export's flags, one-line errors."""

import json

import pytest

from sectorviz.cli import main
from sectorviz.paths import examples_dir

EXAMPLES = examples_dir()
ROW_SUM = str(EXAMPLES / "row-sum-loop.sectorviz.json")
CACHE_KEYS = {"machine", "l2_bytes", "ways", "order", "l2_sector_hits", "l2_sector_misses",
              "dram_read_bytes", "dram_write_bytes", "time_floor_s"}


def report(capsys, *args):
    code = main(["report", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_adds_the_cache_only_with_a_machine(capsys):
    code, out, _ = report(capsys, ROW_SUM, "--json")
    assert code == 0 and "cache" not in json.loads(out)
    code, out, _ = report(capsys, ROW_SUM, "--json", "--machine", "H100-SXM")
    cache = json.loads(out)["cache"]
    assert code == 0 and set(cache) == CACHE_KEYS
    # row-sum-loop reads its 1 MiB matrix 8 times and writes 16 KiB: in a 50 MiB L2 every
    # sector misses once and the rest hit
    assert (cache["machine"], cache["l2_bytes"], cache["order"]) == (
        "H100-SXM", 50 * 2**20, "warp-serial")
    assert (cache["l2_sector_misses"], cache["l2_sector_hits"]) == (32768, 229376)
    assert (cache["dram_read_bytes"], cache["dram_write_bytes"]) == (2**20, 16384)
    assert cache["time_floor_s"] == pytest.approx((2**20 + 16384) / 3.35e12)


def test_l2_bytes_and_order_override_the_preset(capsys):
    # a 4 KiB L2 keeps no row between its 8 passes: every load sector misses
    _, out, _ = report(capsys, ROW_SUM, "--json", "--machine", "V100", "--l2-bytes", 4096,
                       "--order", "waves")
    cache = json.loads(out)["cache"]
    assert (cache["l2_bytes"], cache["order"], cache["l2_sector_hits"],
            cache["l2_sector_misses"]) == (4096, "waves", 0, 262144)


def test_the_sheet_shows_the_estimate_and_its_assumption(capsys):
    code, out, _ = report(capsys, ROW_SUM, "--machine", "H200-SXM")
    step5 = " ".join(out[out.index("5. Traffic"):].split())  # its lines wrap at 100 columns
    assert code == 0
    assert step5.index("no reuse") < step5.index("L2 -> DRAM reads, cache model") < \
        step5.index("perfect reuse")
    assert "dram__bytes_write.sum" in step5 and "byte masks not modelled" in step5
    assert "at 4.8 TB/s" in step5 and "a lower bound, not a runtime" in step5


@pytest.mark.parametrize("args, message", [
    (["--machine", "H100"], "invalid choice"),
    (["--order", "waves"], "--order: needs --machine NAME"),
    (["--machine", "V100", "--l2-bytes", "100"], "machine.l2_bytes"),
])
def test_bad_flags_are_one_line(capsys, args, message):
    code, out, err = report(capsys, ROW_SUM, *args)
    assert code == 2 and not out and message in err and err.count("\n") == 1


def test_export_takes_the_machine(tmp_path, capsys):
    out = tmp_path / "sheet.csv"
    assert main(["export", ROW_SUM, "-o", str(out), "--machine", "L40S"]) == 0
    assert "L2 -> DRAM writes, cache model" in out.read_text()


EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.glob("*.sectorviz.json"))
SLOW = {"matmul-naive-cuda.sectorviz.json", "aos-cuda.sectorviz.json"}  # seconds each


@pytest.mark.parametrize("name", [n for n in EXAMPLE_FILES if n not in SLOW])
@pytest.mark.parametrize("order", ["warp-serial", "waves"])
def test_examples_estimate_between_the_bounds(capsys, name, order):
    """Every distinct sector crosses at least once (read, or written back); DRAM reads are
    at most the sectors requested, and so are the writes."""
    _, out, _ = report(capsys, EXAMPLES / name, "--json", "--machine", "A100-80GB",
                       "--order", order)
    doc = json.loads(out)
    cache, sectors = doc["cache"], doc["totals"]
    crossing = cache["dram_read_bytes"] + cache["dram_write_bytes"]
    assert sectors["unique_sectors"] * 32 <= crossing
    assert cache["dram_read_bytes"] <= sectors["sectors"] * 32
    assert cache["dram_write_bytes"] <= sectors["sectors"] * 32


def test_a_run_too_big_for_the_lane_path_is_refused_in_one_line(tmp_path, capsys):
    """Closed forms count 2^30 threads quickly; the model needs every request's sectors,
    so the same launch with a machine is refused up front by the work budget."""
    doc = json.loads((EXAMPLES / "vector-add.sectorviz.json").read_text())
    doc["params"]["n"] = 2**30
    path = tmp_path / "big.sectorviz.json"
    path.write_text(json.dumps(doc))
    assert report(capsys, path, "--json")[0] == 0
    code, out, err = report(capsys, path, "--machine", "H100-SXM")
    assert code == 2 and not out and err.count("\n") == 1
    assert "passes" in err or "asks for" in err
