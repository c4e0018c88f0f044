"""`sectorviz sweep`: each point's numbers against the hand derivation and against a plain
`report --json` of that configuration; failed points; the outputs."""

import csv
import json

import pytest

from sectorviz.cli import main
from sectorviz.export.formats import scene_bytes
from sectorviz.scene.palette import theme
from sectorviz.scene.sweep_chart import sweep_chart_scene

SPR = {1: 4, 2: 8, 4: 16, 8: 32}  # sectors per request of the strided load, by stride


def sweep_json(capsys, *argv):
    assert main(["sweep", *map(str, argv), "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def report_of(capsys, tmp_path, doc, params):
    """What `report --json` prints for `doc` with `params` (written to a file of its own)."""
    path = tmp_path / "point.sectorviz.json"
    path.write_text(json.dumps({**doc, "params": {**doc["params"], **params}}))
    assert main(["report", str(path), "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def test_stride_sweep_counts_each_stride_by_hand(capsys, stride_file):
    out = sweep_json(capsys, stride_file, "--param", "stride=1,2,4,8,16", "--jobs", "1")
    assert out["params"] == ["stride"]
    assert [p["params"] for p in out["points"]] == [{"stride": s} for s in (1, 2, 4, 8, 16)]
    for point in out["points"][:4]:
        totals = point["report"]["totals"]
        stride = point["params"]["stride"]
        assert (totals["requests"], totals["sectors"]) == (1, SPR[stride])
        assert totals["sectors_per_request"] == SPR[stride]
        assert totals["ideal_sectors"] == 4  # 128 useful bytes
    assert out["points"][4] == {
        "params": {"stride": 16},
        "error": "accesses[0].index: element index 256 outside [0, 256) at warp 0 lane 16"}


def test_each_point_is_what_report_prints_for_it(capsys, tmp_path, stride_file):
    doc = json.loads(stride_file.read_text())
    out = sweep_json(capsys, stride_file, "--param", "stride=1,4", "--param", "threads=32,64",
                     "--jobs", "1")
    assert [p["params"] for p in out["points"]] == [
        {"stride": 1, "threads": 32}, {"stride": 1, "threads": 64},
        {"stride": 4, "threads": 32}, {"stride": 4, "threads": 64}]
    for point in out["points"]:
        if "report" in point:
            assert point["report"] == report_of(capsys, tmp_path, doc, point["params"])
    # threads = 64 with stride 4 reads index 63 * 4 = 252 < 256: two warps of 16 sectors
    assert out["points"][3]["report"]["totals"]["sectors"] == 32


def test_a_launch_over_the_limits_is_a_failed_point_not_a_stop(capsys, stride_file):
    out = sweep_json(capsys, stride_file, "--param", "threads=1024:2049:1024", "--param",
                     "stride=0:1", "--jobs", "1")
    assert [sorted(p) for p in out["points"]] == [["params", "report"], ["error", "params"]]
    assert out["points"][1]["error"] == "launch.block[0]: 2048 is outside CUDA's limit [1, 1024]"


def test_the_pool_gives_what_one_process_gives(capsys, stride_file):
    argv = (stride_file, "--param", "stride=1:9")
    assert sweep_json(capsys, *argv, "--jobs", "2") == sweep_json(capsys, *argv, "--jobs", "1")


def test_the_printed_table_shows_the_metric_and_the_reason(capsys, stride_file):
    assert main(["sweep", str(stride_file), "--param", "stride=8,16", "--metric",
                 "sector_bytes", "--jobs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["stride", "load", "a[i*stride]", "total", "error"]
    assert lines[1].split() == ["8", "1,024", "1,024"]  # 32 sectors of 32 bytes
    assert lines[2].split()[0] == "16" and "element index 256 outside" in lines[2]


def test_the_csv_has_every_figure_and_the_error(tmp_path, capsys, stride_file):
    out = tmp_path / "sweep.csv"
    assert main(["sweep", str(stride_file), "--param", "stride=2,16", "-o", str(out),
                 "--jobs", "1", "--quiet"]) == 0
    columns, two, sixteen = csv.reader(out.read_text().splitlines())
    assert columns[:2] == ["stride", "error"]
    assert {"warps", "threads", "totals.sectors", "totals.unique_sectors",
            "load a[i*stride].sectors", "load a[i*stride].sectors_per_request"} <= set(columns)
    row = dict(zip(columns, two))
    assert (row["stride"], row["error"], row["totals.sectors"]) == ("2", "", "8")
    assert row["load a[i*stride].sectors_per_request"] == "8.0"
    assert sixteen[:2] == ["16", "accesses[0].index: element index 256 outside [0, 256) at "
                                 "warp 0 lane 16"]
    assert set(sixteen[2:]) == {""}


def test_markdown_table(tmp_path, stride_file):
    out = tmp_path / "sweep.md"
    assert main(["sweep", str(stride_file), "--param", "stride=1,2", "-o", str(out),
                 "--jobs", "1", "--quiet"]) == 0
    lines = out.read_text().splitlines()
    assert lines[0].startswith("| stride | error | sector_size | warps |")
    assert lines[1].startswith("|---:|---|---:|---:|")
    assert lines[3].startswith("| 2 |  | 32 | 1 |")


@pytest.mark.parametrize("suffix", [".svg", ".tex"])
def test_the_chart_is_the_sweep_scene_printed_by_the_diagram_printers(capsys, tmp_path,
                                                                      stride_file, suffix):
    argv = (stride_file, "--param", "stride=1,2,4,16", "--jobs", "1", "--theme", "dark")
    out = tmp_path / f"chart{suffix}"
    assert main(["sweep", *map(str, argv), "-o", str(out), "--quiet"]) == 0
    capsys.readouterr()
    points = sweep_json(capsys, *argv)["points"]
    scene = sweep_chart_scene("Strided load", ["stride"], points, "sectors_per_request",
                              theme("dark"))
    assert out.read_bytes() == scene_bytes(scene, suffix)


@pytest.mark.parametrize("suffix, start", [(".png", b"\x89PNG"), (".pdf", b"%PDF")])
def test_the_chart_as_png_and_pdf(tmp_path, stride_file, suffix, start):
    out = tmp_path / f"chart{suffix}"
    assert main(["sweep", str(stride_file), "--param", "stride=1,2,4", "-o", str(out),
                 "--jobs", "1", "--quiet"]) == 0
    assert out.read_bytes()[:len(start)] == start


@pytest.mark.parametrize("argv, words", [
    (["--param", "tile=8"], "--param tile: the pattern has no param 'tile'"),
    (["--param", "strid=1"], "(did you mean 'stride'?)"),
    (["--param", "stride=1", "--param", "stride=2"], "a --param is given twice"),
    (["--param", "stride=1", "-o", "x.txt"], "no format for .txt"),
    (["--param", "stride=1", "--param", "threads=32", "--param", "pad=0", "-o", "x.svg"],
     "the chart draws one or two params"),
    (["--param", "stride=0:0"], "gives no values"),
    (["--param", "stride=1", "--jobs", "0"], "is not a whole number of at least 1"),
    (["--param", "stride=1", "--scale", "8"], "--scale 8 outside [1, 4]"),
    (["--param", "stride=0:10000", "--param", "threads=0:10000"],
     "the params give 10,000 x 10,000 = 100,000,000 points; at most 100,000"),
    (["--param", "stride=9223372036854775808"], "outside the int64 range"),
])
def test_bad_command_lines_are_one_line_exit_2(capsys, stride_file, argv, words):
    assert main(["sweep", str(stride_file), *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_a_bad_pattern_names_the_file(capsys, tmp_path):
    bad = tmp_path / "bad.sectorviz.json"
    bad.write_text("{")
    assert main(["sweep", str(bad), "--param", "n=1"]) == 2
    assert capsys.readouterr().err.startswith(f"{bad}: line 1")


@pytest.mark.parametrize("command", ["sweep", "batch", "check"])
def test_a_bug_is_one_line_naming_the_first_file(capsys, monkeypatch, stride_file, command):
    def broken(*args, **kwargs):
        raise RuntimeError("a bug")
    monkeypatch.setattr("sectorviz.sweep.executor.run_tasks", broken)
    params = ["--param", "stride=1"] if command == "sweep" else ["other.json"]
    assert main([command, str(stride_file), *params]) == 2
    err = capsys.readouterr().err
    assert err == f"{stride_file}: internal error: RuntimeError; please report\n"


@pytest.mark.parametrize("command", ["sweep", "batch", "check"])
def test_jobs_past_the_cores_are_clamped_with_a_note(capsys, monkeypatch, stride_file, command):
    monkeypatch.setattr("sectorviz.command.sweep.default_jobs", lambda: 1)  # one core: no pool
    params = ["--param", "stride=1,2"] if command == "sweep" else []
    status = main([command, str(stride_file), *params, "--jobs", "10000", "--quiet"])
    err = capsys.readouterr().err.splitlines()
    assert status == 0
    assert err[0] == f"sectorviz {command}: --jobs 10,000 is more than this run's cores (1); " \
                     "using 1"
