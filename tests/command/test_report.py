"""`sectorviz report`: the sheet, its JSON keys, warp detail, and one-line errors for bad input."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sectorviz.cli import main
from sectorviz.paths import examples_dir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = examples_dir()

VECTOR_ADD = str(EXAMPLES / "vector-add.sectorviz.json")
STAT_KEYS = {"requests", "active_lanes", "logical_bytes", "useful_bytes", "sectors",
             "sector_size", "sector_bytes", "ideal_sectors", "excess_sectors",
             "sectors_per_request",
             "useful_fraction", "min", "max", "mode", "unique_sectors"}


def report(capsys, *args):
    code = main(["report", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_table(capsys):
    code, out, err = report(capsys, VECTOR_ADD)
    assert code == 0 and not err
    assert "load a[i]" in out and "store c[i]" in out
    assert "sector demand 12 MiB" in out
    assert "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" in out
    assert "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum" in out
    assert "perfect reuse" in out and "no reuse" in out


def test_json_keys(capsys):
    code, out, _ = report(capsys, VECTOR_ADD, "--json")
    doc = json.loads(out)
    assert code == 0
    assert isinstance(doc["instructions"], list) and len(doc["instructions"]) == 3
    for ins in doc["instructions"]:
        assert STAT_KEYS | {"name", "op", "array", "width"} <= set(ins)
    assert STAT_KEYS <= set(doc["totals"])
    assert doc["totals"]["sectors"] == 393216
    assert doc["sector_size"] == doc["totals"]["sector_size"] == 32
    assert doc["totals"]["sector_bytes"] == 393216 * 32
    assert [i["sector_bytes"] for i in doc["instructions"]] == [131072 * 32] * 3
    assert [b["metric"] for b in doc["boundaries"]][:2] == [
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]


def test_warp_detail(capsys):
    code, out, _ = report(capsys, EXAMPLES / "transpose-naive.sectorviz.json", "--json",
                          "--warp", "33")
    warp = json.loads(out)["warp"]
    assert code == 0 and warp["warp"] == 33 and warp["block"] == [1, 0, 0]
    store = warp["instructions"][1]["executions"][0]
    assert store["sectors"] == 32
    lane5 = store["lanes"][5]
    assert lane5["thread"] == [5, 1, 0]
    assert (lane5["row"], lane5["col"]) == (32 + 5, 1)
    assert lane5["address"] == 1024 * 1024 * 4 + ((32 + 5) * 1024 + 1) * 4
    code, out, _ = report(capsys, EXAMPLES / "shifted.sectorviz.json", "--warp", "0")
    assert "lane 31" in out and "sectors [4]" in out


def write(tmp_path, doc, name="p.sectorviz.json"):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def base(**changes):
    doc = {"format": "sectorviz.pattern/1", "params": {"n": 64},
           "launch": {"grid": [2], "block": [32]},
           "arrays": {"x": {"dtype": "float32", "length": "n"},
                      "m": {"dtype": "float32", "shape": [8, 8]}},
           "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
           "accesses": [{"name": "load", "op": "load", "array": "x", "index": "i"}]}
    doc.update(changes)
    return doc


def access(**fields):
    return [{"name": "a", "op": "load", "array": "x", "index": "i", **fields}]


BAD = {
    "bad json": ('{"format": ', "line 1, column 12: invalid JSON"),
    "nan": ('{"format": NaN}', "NaN is not a number"),
    "not an object": ("[1, 2]", "expected an object"),
    "wrong format": (base(format="other/1"), "format: expected 'sectorviz.pattern/1'"),
    "unknown key": (base(acesses=[]), "did you mean 'accesses'?"),
    "unknown access key": (base(accesses=access(indx="i")),
                           "accesses[0].indx: unknown key 'indx' (did you mean 'index'?)"),
    "unknown name": (base(accesses=access(index="ii + 1")),
                     "accesses[0].index, column 1: unknown name 'ii' (did you mean 'i'?)"),
    "syntax": (base(accesses=access(index="i +* 2")),
               "accesses[0].index, column 4: expected a value"),
    "division by zero": (base(accesses=access(index="i / (n - 64)")),
                         "accesses[0].index, column 3: division by zero"),
    "index out of range": (base(accesses=access(index="i + 1")),
                           "accesses[0].index: element index 64 outside [0, 64) at warp 1 lane 31"),
    "negative index": (base(accesses=access(index="i - 1")), "element index -1 outside [0, 64)"),
    "row out of shape": (base(accesses=[{"op": "load", "array": "m", "at": ["i", "0"]}]),
                         "accesses[0].at[0]: row 8 outside [0, 8)"),
    "col out of shape": (base(accesses=[{"op": "load", "array": "m", "at": ["0", "i % 9"]}]),
                         "accesses[0].at[1]: col 8 outside [0, 8)"),
    "grid too large": (base(launch={"grid": ["2147483648"], "block": [32]}),
                       "launch.grid[0]: 2147483648 is outside CUDA's limit"),
    "grid y too large": (base(launch={"grid": [1, 65536], "block": [32]}), "launch.grid[1]"),
    "block too large": (base(launch={"grid": [1], "block": [64, 32]}),
                        "launch.block: 2048 threads per block"),
    "unknown dtype": (base(arrays={"x": {"dtype": "flaot32", "length": 64}}),
                      "did you mean 'float32'?"),
    "unknown array": (base(accesses=[{"op": "load", "array": "y", "index": "i"}]),
                      "accesses[0].array: unknown array 'y'"),
    "injection": (base(accesses=access(index="__import__('os').system('touch /tmp/pwned')")),
                  "accesses[0].index, column 12: unexpected character"),
    "python name": (base(accesses=access(index="exit(1)")), "unknown function 'exit'"),
    "array as a value": (base(accesses=access(index="x + 1")),
                         "'x' is an array; read an element as x[index]"),
    "not readable": (base(accesses=access(index="x[i]")), "array 'x' has no 'values'"),
    "step zero": (base(accesses=access(loops=[{"var": "k", "start": 0, "stop": 4, "step": 0}])),
                  "accesses[0].loops[0].step: step must not be 0"),
    "bool param": (base(params={"n": True}), "params.n: expected an integer, got true/false"),
    "let order": (base(let={"j": "i", "i": "threadIdx.x"}), "let.j, column 1: unknown name 'i'"),
    "duplicate name": (base(accesses=access() + access()),
                       "accesses[1].name: name 'a' is used twice"),
    "huge values": (
        base(arrays={"x": {"dtype": "int32", "length": 2**28, "values": {"kind": "arange"}}},
             accesses=access(index="x[i]")),
        "arrays.x.values: 268435456 readable elements is over the limit"),
    "kernel and accesses": (base(kernel={"code": "", "function": "f"}),
                            "cannot be used with 'kernel'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_exits_2_with_one_line(tmp_path, capsys, case):
    doc, expected = BAD[case]
    path = write(tmp_path, doc)
    code, out, err = report(capsys, path)
    assert code == 2 and not out
    assert err.count("\n") == 1 and err.startswith(f"{path}: ")
    assert expected in err
    assert not (tmp_path / "pwned").exists()


def test_missing_file_and_bad_arguments(tmp_path, capsys):
    code, _, err = report(capsys, tmp_path / "nope.json")
    assert code == 2 and "cannot read nope.json: No such file" in err and err.count("\n") == 1
    code, _, err = report(capsys, VECTOR_ADD, "--warp", "32768")
    assert code == 2 and "--warp: warp 32768 outside [0, 32768)" in err
    code, _, err = report(capsys, VECTOR_ADD, "--warp", "x")
    assert code == 2 and "invalid int value" in err and err.count("\n") == 1


def test_a_file_name_with_a_newline_stays_one_line_and_whole(tmp_path, capsys):
    code, out, err = report(capsys, tmp_path / "first\nsecond.json")
    assert code == 2 and not out and err.count("\n") == 1
    assert f"{tmp_path}/first\\nsecond.json: " in err
    assert "cannot read first\\nsecond.json: No such file" in err


def test_a_loop_past_the_budget_is_refused_before_the_run(tmp_path, capsys):
    path = write(tmp_path, base(accesses=access(index="0",
                                                loops=[{"var": "k", "start": 0, "stop": 1000}])))
    code, _, err = report(capsys, path, "--budget", "100000")
    assert code == 2 and err.count("\n") == 1
    assert ("launch: the launch of 64 threads x (1,000 executions of accesses[0]) asks for "
            "2,112,000 units of work") in err and "--budget N" in err
    code, out, _ = report(capsys, path, "--budget", "2^22", "--json")
    assert code == 0 and json.loads(out)["instructions"][0]["requests"] == 2000


def test_values_from_npy_file_and_pickle_refused(tmp_path, capsys):
    np.save(tmp_path / "idx.npy", np.arange(64)[::-1])
    doc = base(arrays={"idx": {"dtype": "int32", "length": 64,
                               "values": {"kind": "file", "path": "idx.npy"}},
                       "x": {"dtype": "float32", "length": 64}},
               accesses=access(index="idx[i]"))
    code, out, _ = report(capsys, write(tmp_path, doc), "--json")
    assert code == 0 and json.loads(out)["totals"]["sectors"] == 8
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    doc["arrays"]["idx"]["values"]["path"] = "obj.npy"
    code, _, err = report(capsys, write(tmp_path, doc))
    assert code == 2 and "arrays.idx.values.path" in err


def test_loops_with_per_lane_bounds_and_negative_steps(tmp_path, capsys):
    doc = base(launch={"grid": [1], "block": [32]},
               accesses=access(index="k", loops=[{"var": "k", "start": "threadIdx.x", "stop": -1,
                                                  "step": -1}]))
    code, out, _ = report(capsys, write(tmp_path, doc), "--json")
    ins = json.loads(out)["instructions"][0]
    # lane l runs l + 1 iterations: the warp executes 32 times, with 32, 31, ..., 1 lanes
    assert ins["requests"] == 32 and ins["active_lanes"] == 32 * 33 // 2


def test_runs_as_a_console_script():
    result = subprocess.run([sys.executable, "-m", "sectorviz", "report", VECTOR_ADD, "--json"],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 0 and json.loads(result.stdout)["warps"] == 32768
