"""Hostile files (issue 15, item 2): pattern and `.npy` values files must be regular files,
read without blocking and with a cap; a pipe, a device, a folder or a bad name is one line.

Cases that would hang on a regression (a named pipe, /dev/zero) run `sectorviz report` in a
subprocess under a timeout, so they fail instead of hanging the suite.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sectorviz.cli import main
from sectorviz.model import PatternError
from sectorviz.model.files import read_bytes, read_text

ROOT = Path(__file__).resolve().parents[2]
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")


def report(capsys, path):
    code = main(["report", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def report_subprocess(path):
    """`sectorviz report PATH` in a fresh interpreter; a hang fails after 60 s."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "sectorviz", "report", str(path)],
                            capture_output=True, text=True, env=env, timeout=60,
                            stdin=subprocess.DEVNULL)
    return result.returncode, result.stdout, result.stderr


def gather(values_path, n=64):
    """A pattern whose array `idx` takes its n values from `values_path`."""
    return {"format": "sectorviz.pattern/1", "launch": {"grid": [n // 32], "block": [32]},
            "arrays": {"idx": {"dtype": "int32", "length": n,
                               "values": {"kind": "file", "path": str(values_path)}},
                       "x": {"dtype": "float32", "length": n}},
            "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
            "accesses": [{"name": "gather", "op": "load", "array": "x", "index": "idx[i]"}]}


def write_pattern(folder, doc, name="p.sectorviz.json"):
    path = folder / name
    path.write_text(json.dumps(doc))
    return path


def assert_one_line(code, out, err, path, expected):
    assert code == 2 and not out, err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err == f"{path}: {expected}\n"


# ---------------------------------------------------------------- the pattern file


@needs_fifo
def test_a_named_pipe_as_the_pattern_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.sectorviz.json"
    os.mkfifo(fifo)
    assert_one_line(*report_subprocess(fifo), fifo, "cannot read pipe.sectorviz.json: "
                                                    "not a regular file")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_as_the_pattern_is_refused_before_reading(device):
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    name = Path(device).name
    assert_one_line(*report_subprocess(device), device, f"cannot read {name}: "
                                                       "not a regular file")


def test_a_folder_as_the_pattern(tmp_path, capsys):
    assert_one_line(*report(capsys, tmp_path), tmp_path, f"cannot read {tmp_path.name}: "
                                                         "it is a folder")


def test_a_missing_pattern_says_why(tmp_path, capsys):
    path = tmp_path / "nope.sectorviz.json"
    assert_one_line(*report(capsys, path), path, "cannot read nope.sectorviz.json: "
                                                 "No such file or directory")


def test_a_nul_byte_in_the_pattern_path(capsys):
    path = "p\x00.sectorviz.json"  # named as an escape: no raw NUL reaches the terminal
    assert_one_line(*report(capsys, path), "p\\x00.sectorviz.json",
                    "the file name contains a NUL byte")


@pytest.mark.parametrize("data, reason", [
    (b"\xff\xfe{}", "not UTF-8 text (byte 0)"),
    (b'{"format": "sectorviz.pattern/1"\x00}', "it holds a NUL byte (at character 32)"),
])
def test_a_pattern_that_is_not_text(tmp_path, capsys, data, reason):
    path = tmp_path / "p.sectorviz.json"
    path.write_bytes(data)
    assert_one_line(*report(capsys, path), path, f"cannot read p.sectorviz.json: {reason}")


def test_a_pattern_over_the_size_cap(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("sectorviz.model.pattern.MAX_FILE_BYTES", 100)
    path = tmp_path / "p.sectorviz.json"
    path.write_text(" " * 101)
    assert_one_line(*report(capsys, path), path, "cannot read p.sectorviz.json: it is 101 "
                                                 "bytes; at most 100 are read")


# ---------------------------------------------------------------- .npy values files


@needs_fifo
def test_a_named_pipe_as_the_values_file(tmp_path):
    os.mkfifo(tmp_path / "idx.npy")
    path = write_pattern(tmp_path, gather("idx.npy"))
    assert_one_line(*report_subprocess(path), path,
                    "arrays.idx.values.path: cannot read idx.npy: not a regular file")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_the_values_file_is_refused_unopened(tmp_path, device):
    """A device lies outside the pattern's root: refused before it is touched."""
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    path = write_pattern(tmp_path, gather(device))
    assert_one_line(*report_subprocess(path), path,
                    f"arrays.idx.values.path: {device} lies outside the pattern's root "
                    f"{tmp_path} (only files there or in an --include-dir are read)")


def test_files_outside_the_patterns_root_are_refused_alike(tmp_path, capsys):
    """Missing, a folder, not .npy: one and the same line, so a pattern file cannot find
    out whether a path outside its root exists."""
    folder, elsewhere = tmp_path / "patterns", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (elsewhere / "text.npy").write_text("not numpy")
    (elsewhere / "dir.npy").mkdir()
    for name in ("missing.npy", "text.npy", "dir.npy"):
        path = write_pattern(folder, gather(f"../elsewhere/{name}"))
        assert_one_line(*report(capsys, path), path,
                        f"arrays.idx.values.path: ../elsewhere/{name} lies outside the "
                        f"pattern's root {folder} (only files there or in an --include-dir "
                        "are read)")


def test_a_link_out_of_the_root_counts_as_outside(tmp_path, capsys):
    (tmp_path / "secret.npy").write_text("secret")
    folder = tmp_path / "patterns"
    folder.mkdir()
    (folder / "idx.npy").symlink_to(tmp_path / "secret.npy")
    path = write_pattern(folder, gather("idx.npy"))
    code, out, err = report(capsys, path)
    assert code == 2 and not out and "idx.npy lies outside the pattern's root" in err
    assert "secret" not in err


@pytest.mark.parametrize("make, reason", [
    (lambda p: None, "No such file or directory"),
    (lambda p: p.mkdir(), "it is a folder"),
    (lambda p: p.write_text("not numpy"), "not a .npy file (or its header is damaged)"),
    (lambda p: p.write_bytes(b"\x93NUMPY\x01\x00\xff\xff{'descr': "),
     "not a .npy file (or its header is damaged)"),
    (lambda p: p.write_bytes(b"\x93NUMPY\x01\x00\x01\x00{'descr': '<i8', }\n"),
     "not a .npy file (or its header is damaged)"),  # a header cut to "{": TokenError
    (lambda p: np.save(p, np.zeros((8, 8), dtype=np.int32)),
     "it must hold a 1-D integer array, got int32 with shape (8, 8)"),
    (lambda p: np.save(p, np.zeros(64, dtype=np.float32)),
     "it must hold a 1-D integer array, got float32 with shape (64,)"),
    (lambda p: np.save(p, np.array([{"a": 1}] * 64, dtype=object), allow_pickle=True),
     "it must hold a 1-D integer array, got object with shape (64,)"),
    (lambda p: np.save(p, np.arange(10)), "it holds 10 values, the array needs 64"),
    (lambda p: p.write_bytes(_npy(np.arange(64, dtype=np.int16))[:-2]),
     "it is shorter than its header says (64 values of 2 bytes after 128 bytes of header)"),
])
def test_bad_values_files_in_the_folder_say_why(tmp_path, capsys, make, reason):
    make(tmp_path / "idx.npy")
    path = write_pattern(tmp_path, gather("idx.npy"))
    assert_one_line(*report(capsys, path), path,
                    f"arrays.idx.values.path: cannot read idx.npy: {reason}")


def test_bad_names_for_the_values_file(tmp_path, capsys):
    path = write_pattern(tmp_path, gather("idx\x00.npy"))
    assert_one_line(*report(capsys, path), path,
                    "arrays.idx.values.path: the file name contains a NUL byte")
    path = write_pattern(tmp_path, gather("\ud800.npy"))
    code, out, err = report(capsys, path)
    assert_one_line(code, out, err, path, "arrays.idx.values.path: cannot read \\ud800.npy: "
                                          "the file name cannot be encoded for this system")


def _npy(values: np.ndarray) -> bytes:
    import io
    stream = io.BytesIO()
    np.save(stream, values)
    return stream.getvalue()


@pytest.mark.parametrize("values", [np.arange(64)[::-1], np.arange(64, dtype=">u2")[::-1],
                                    np.arange(10**6)[::-1] % 64])
def test_values_files_that_work(tmp_path, capsys, values):
    """Any integer type and byte order; a longer file gives its first values."""
    np.save(tmp_path / "idx.npy", values)
    path = write_pattern(tmp_path, gather("idx.npy"))
    code = main(["report", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and not err
    assert json.loads(out)["totals"]["sectors"] == 8


def test_only_the_header_and_the_needed_values_are_read(tmp_path, monkeypatch):
    """10^6 values in the file, 64 needed: the header (at most its cap), then 64 values."""
    from sectorviz.model import kernel
    np.save(tmp_path / "idx.npy", np.arange(10**6))
    reads = []

    def spy(path, limit, place, whole=True, roots=None):
        data = read_bytes(path, limit, place, whole, roots)
        reads.append((limit, whole, len(data)))
        return data

    monkeypatch.setattr(kernel, "read_bytes", spy)
    values = kernel._values_file(tmp_path / "idx.npy", 64, "here")
    assert values.tolist() == list(range(64))
    header = kernel.NPY_HEADER_BYTES
    assert reads == [(header, False, header), (128 + 8 * 64, False, 128 + 8 * 64)]


# ---------------------------------------------------------------- files.py itself


def test_read_bytes_caps(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    assert read_bytes(path, 10, "p") == b"x" * 10
    assert read_bytes(path, 4, "p", whole=False) == b"xxxx"
    with pytest.raises(PatternError, match="^p: cannot read f: it is 10 bytes; at most 9"):
        read_bytes(path, 9, "p")
    assert read_text(path, "p") == "x" * 10


@pytest.mark.parametrize("dtype, held", [(np.int64, 0), (np.int16, 2 * 1000)])
def test_a_converted_values_file_holds_its_bytes_in_the_budget(tmp_path, dtype, held):
    """Values read as int64 are used where they lie; others are converted, so the file's
    bytes count against the memory cap while the copy is made."""
    from sectorviz.model import kernel
    from sectorviz.model.budget import Budget, work_budget
    np.save(tmp_path / "idx.npy", np.arange(1000, dtype=dtype))
    with work_budget(Budget()) as budget:
        values = kernel._values_file(tmp_path / "idx.npy", 1000, "here")
    assert values.dtype == np.int64 and values.tolist() == list(range(1000))
    assert budget.held == held


def test_a_values_file_past_the_memory_cap(tmp_path):
    from sectorviz.model import kernel
    from sectorviz.model.budget import Budget, work_budget
    np.save(tmp_path / "idx.npy", np.arange(1000, dtype=np.int16))
    with work_budget(Budget(memory=1999)), pytest.raises(
            PatternError, match="^here: 1,000 values read from idx.npy needs"):
        kernel._values_file(tmp_path / "idx.npy", 1000, "here")
