"""Issue 22, item 5: a measured CSV holds only what a measurement can be: finite,
non-negative numbers with commas grouping by three, each metric in one column, grid and
block sizes that parse (and then must match)."""

from __future__ import annotations

import json

import pytest

from sectorviz.cli import main
from sectorviz.model import PatternError
from sectorviz.model.measured import read_ncu_csv

METRIC = "dram__bytes_read.sum"


def csv_file(tmp_path, value="1,024", grid="(4096, 1, 1)", header=("Kernel Name", "Grid Size",
                                                                   METRIC)):
    path = tmp_path / "m.csv"
    units = ",".join('""' if h in ("Kernel Name", "Grid Size") else '"byte"' for h in header)
    row = {"Kernel Name": "k()", "Grid Size": grid}
    cells = ",".join(f'"{row.get(h, value)}"' for h in header)
    path.write_text(",".join(f'"{h}"' for h in header) + "\n" + units + "\n" + cells + "\n")
    return path


@pytest.mark.parametrize("value, expected", [("1,024", 1024.0), ("262,144", 262144.0),
                                             ("12,582,912", 12582912.0), ("0.5", 0.5),
                                             ("1e3", 1000.0), ("0", 0.0)])
def test_good_measurements(tmp_path, value, expected):
    assert read_ncu_csv(csv_file(tmp_path, value))[0].values[METRIC] == expected


@pytest.mark.parametrize("value", ["NaN", "nan", "inf", "-inf", "Infinity", "1e400", "-1",
                                   "-0.5", "2,62,14,4", "1,0240", ",1", "1,", "1.2.3", "0x10"])
def test_bad_measurements_are_one_line(tmp_path, value):
    with pytest.raises(PatternError) as info:
        read_ncu_csv(csv_file(tmp_path, value))
    assert str(info.value).startswith(f"--measured, row 3, {METRIC}: {value!r} is ")


def test_a_metric_in_two_columns_is_refused(tmp_path):
    path = csv_file(tmp_path, header=("Kernel Name", METRIC, "Grid Size", METRIC))
    with pytest.raises(PatternError, match=f"^--measured, row 1: the metric {METRIC} heads 2 "
                                           "columns; give it once$"):
        read_ncu_csv(path)


@pytest.mark.parametrize("grid, dims", [("(4096, 1, 1)", (4096, 1, 1)), ("(16,2,1)", (16, 2, 1)),
                                        ("4096", (4096, 1, 1)), ("", None)])
def test_launch_sizes_that_parse(tmp_path, grid, dims):
    assert read_ncu_csv(csv_file(tmp_path, grid=grid))[0].grid == dims


@pytest.mark.parametrize("grid", ["(-4096, 1, 1)", "four thousand", "(1, 2, 3, 4)", "(1.5, 1, 1)"])
def test_launch_sizes_that_do_not_parse_are_refused(tmp_path, grid):
    with pytest.raises(PatternError, match="^--measured, row 3, Grid Size: '.*' is not a "
                                           r"launch size such as \(4096, 1, 1\)$"):
        read_ncu_csv(csv_file(tmp_path, grid=grid))


def test_json_never_holds_a_bare_nan(tmp_path, capsys):
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [4096], "block": [32]},
           "arrays": {"a": {"dtype": "float32", "length": 4096 * 32}},
           "accesses": [{"name": "load", "op": "load", "array": "a",
                         "index": "blockIdx.x * 32 + threadIdx.x"}]}
    (tmp_path / "p.json").write_text(json.dumps(doc))
    code = main(["report", str(tmp_path / "p.json"), "--json", "--kernel", "k",
                 "--measured", str(csv_file(tmp_path, "NaN"))])
    out, err = capsys.readouterr()
    assert code == 2 and not out and "'NaN' is not a number" in err
