"""`report --measured ncu.csv`: Nsight Compute's raw CSV (a header row of metric names, a
units row, a row per launch) read, the launch matched by kernel name, grid and index, and
each boundary's prediction set against the measurement."""

import json
from pathlib import Path

import pytest

from sectorviz.cli import main
from sectorviz.model import PatternError
from sectorviz.model.measured import METRICS, kernel_name, read_ncu_csv
from sectorviz.paths import examples_dir

FIXTURE = Path(__file__).parents[1] / "measured" / "vector-add.ncu.csv"
VECTOR_ADD = str(examples_dir() / "vector-add-cuda.sectorviz.json")


def report(capsys, *args):
    code = main(["report", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("text, name", [
    ("vectorAdd(const float *, const float *, float *, int)", "vectorAdd"),
    ("void reduce<float, 256>(float *, int)", "reduce<float, 256>"),
    ("void f<(int)2>(S<(int)3>)", "f<(int)2>"),
    ("plain", "plain"),
])
def test_kernel_names_drop_void_and_parameters(text, name):
    assert kernel_name(text) == name


def test_the_csv_is_read_with_its_units():
    first, second = read_ncu_csv(FIXTURE)
    assert (first.name, first.grid, first.block) == ("vectorAdd", (4096, 1, 1), (256, 1, 1))
    assert first.values["dram__bytes_read.sum"] == 8.39e6  # Mbyte
    assert first.values["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 262144 * 32
    assert second.grid == (16, 1, 1)


def test_ncus_own_messages_around_the_report_are_skipped(tmp_path):
    csv = tmp_path / "with-messages.csv"
    csv.write_text("==PROF== Connected to process 4242 (/tmp/vector-add)\n"
                   "==PROF== Profiling \"vectorAdd\" - 0: 0%....50%....100% - 9 passes\n"
                   + FIXTURE.read_text() + "==PROF== Disconnected from process 4242\n")
    assert read_ncu_csv(csv) == read_ncu_csv(FIXTURE)


def test_predicted_against_measured_per_boundary(capsys):
    code, out, err = report(capsys, VECTOR_ADD, "--json", "--measured", FIXTURE,
                            "--machine", "H100-SXM")
    assert code == 0 and not err
    rows = {m["boundary"]: m for m in json.loads(out)["measured"]}
    loads = rows["L1 request side, loads"]
    assert (loads["predicted_bytes"], loads["measured_bytes"], loads["ratio"]) == (
        8388608, 8388608, 1.0)
    reads = rows["L2 -> DRAM reads, cache model"]
    assert reads["metric"] == "dram__bytes_read.sum"
    assert reads["ratio"] == pytest.approx(8.39e6 / 8388608)
    both = rows["below L1, perfect reuse"]  # a sum of two metrics
    assert both["measured_bytes"] == pytest.approx(8.39e6 + 4.2e6)
    code, out, _ = report(capsys, VECTOR_ADD, "--measured", FIXTURE)
    assert "ratio = measured / predicted" in " ".join(out.split())  # lines wrap at 100
    assert "ratio 1.000" in out
    assert "cache model" not in out  # without a machine, no estimate to compare


@pytest.mark.parametrize("args, message", [
    (["--launch", "1"], "has grid (16, 1, 1), the pattern (4096, 1, 1)"),
    (["--launch", "2"], "--launch: launch 2 of 'vectorAdd' outside [0, 2)"),
    (["--kernel", "matmul"], "no launch of kernel 'matmul' in the CSV (it has 'vectorAdd')"),
])
def test_mismatches_are_one_line(capsys, args, message):
    code, out, err = report(capsys, VECTOR_ADD, "--measured", FIXTURE, *args)
    assert code == 2 and not out and message in err and err.count("\n") == 1


def test_a_pattern_without_a_kernel_takes_the_csvs_only_kernel_or_names_the_choices(
        capsys, tmp_path):
    pattern = examples_dir() / "vector-add.sectorviz.json"
    code, out, _ = report(capsys, pattern, "--measured", FIXTURE)
    assert code == 0 and out == report(capsys, pattern, "--measured", FIXTURE,
                                       "--kernel", "vectorAdd")[1]
    two = tmp_path / "two.csv"
    lines = FIXTURE.read_text().splitlines(keepends=True)
    two.write_text("".join(lines + [lines[-1].replace('"vectorAdd(', '"other(')]))
    code, _, err = report(capsys, pattern, "--measured", two)
    assert code == 2 and err.count("\n") == 1
    assert "the CSV holds kernels 'other', 'vectorAdd'; a pattern without a CUDA kernel must " \
           "name one (report --kernel NAME)" in err


@pytest.mark.parametrize("text, message", [
    ("a,b\n1,2\n", "no header row with 'Kernel Name'"),
    ('"Kernel Name","dram__bytes_read.sum"\n"","parsec"\n"k()","1"\n', "unknown unit 'parsec'"),
    ('"Kernel Name","dram__bytes_read.sum"\n"","byte"\n"k()","lots"\n', "'lots' is not a number"),
    ('"Kernel Name","dram__bytes_read.sum"\n"","byte"\n"k()"\n', "row 3: 1 columns"),
])
def test_bad_csvs_are_one_line(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(PatternError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_ncu_csv(path)


def test_ncu_metrics_prints_the_list_for_ncu(capsys):
    assert main(["ncu-metrics"]) == 0
    out = capsys.readouterr().out.strip()
    assert out.split(",") == list(METRICS)
    assert "dram__bytes_read.sum" in out and "lts__t_sectors_srcunit_tex_op_read.sum" in out
