"""Issue 22, item 3: every output atomic and honest. Exports (and screenshots, see
tests/ui/test_screenshot_output.py) never replace a file the run read or a read-only file,
never write through a link, name the path the user typed; an interrupted run says
'interrupted' (exit 130 / 143) and leaves no temporary file; a full stdout is one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sectorviz import atomic
from sectorviz.atomic import write_atomic
from sectorviz.cli import main

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def gather(folder: Path, name: str = "p.sectorviz.json") -> Path:
    np.save(folder / "idx.npy", np.arange(64))
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [2], "block": [32]},
           "arrays": {"idx": {"dtype": "int32", "length": 64,
                              "values": {"kind": "file", "path": "idx.npy"}},
                      "x": {"dtype": "float32", "length": 64}},
           "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
           "accesses": [{"name": "gather", "op": "load", "array": "x", "index": "idx[i]"}]}
    path = folder / name
    path.write_text(json.dumps(doc))
    return path


def export(capsys, pattern, out, *extra):
    code = main(["export", str(pattern), "-o", str(out), *extra])
    _, err = capsys.readouterr()
    return code, err


def test_the_pattern_as_its_own_output_is_refused(tmp_path, capsys):
    pattern = gather(tmp_path, "p.md")  # `export p.md -o p.md`
    before = pattern.read_bytes()
    code, err = export(capsys, pattern, pattern)
    assert code == 2 and err == (f"{pattern}: it is a file this run read (the pattern or one "
                                 "of its files); choose another name\n")
    assert pattern.read_bytes() == before


def test_a_values_file_as_the_output_is_refused(tmp_path, capsys):
    pattern = gather(tmp_path)
    link = tmp_path / "idx.md"
    os.link(tmp_path / "idx.npy", link)  # a hard link: the same file under an output name
    before = link.read_bytes()
    code, err = export(capsys, pattern, link)
    assert code == 2 and "it is a file this run read" in err and link.read_bytes() == before


def test_a_read_only_target_is_refused(tmp_path, capsys):
    pattern = gather(tmp_path)
    out = tmp_path / "d.svg"
    out.write_text("keep")
    out.chmod(0o444)
    code, err = export(capsys, pattern, out)
    assert code == 2 and err == f"{out}: it is read-only\n" and out.read_text() == "keep"


def test_a_link_at_the_target_is_replaced_not_written_through(tmp_path, capsys):
    pattern = gather(tmp_path)
    (tmp_path / "elsewhere.txt").write_text("keep")
    out = tmp_path / "d.svg"
    out.symlink_to(tmp_path / "elsewhere.txt")
    code, err = export(capsys, pattern, out)
    assert code == 0, err
    assert not out.is_symlink() and out.read_bytes().startswith(b"<?xml")
    assert (tmp_path / "elsewhere.txt").read_text() == "keep"


@pytest.mark.parametrize("make, name, reason", [
    (lambda p: p.mkdir(), "d.svg", "it is a folder"),
    (lambda p: None, "missing/d.svg", "No such file or directory"),
])
def test_errors_name_the_path_typed(tmp_path, capsys, make, name, reason):
    pattern = gather(tmp_path)
    out = tmp_path / name
    make(out)
    code, err = export(capsys, pattern, out)
    assert code == 2 and err == f"{out}: {reason}\n"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_leftovers_of_killed_runs_are_removed_on_the_next_write(tmp_path):
    dead = tmp_path / f".d.svg.sectorviz-{_dead_pid()}-abcd1234.tmp"
    mine = tmp_path / f".d.svg.sectorviz-{os.getpid()}-abcd1234.tmp"
    other = tmp_path / ".d.svg.abcd1234.tmp"  # not ours: never touched
    for path in (dead, mine, other):
        path.write_text("x")
    write_atomic(tmp_path / "e.txt", "new")
    assert not dead.exists() and mine.exists() and other.exists()
    assert (tmp_path / "e.txt").read_text() == "new"


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, OSError(28, "No space left")])
def test_an_interrupted_write_keeps_the_old_file_and_removes_its_temporary(tmp_path,
                                                                          monkeypatch, interrupt):
    out = tmp_path / "d.txt"
    out.write_text("old")

    def stop(*_):
        raise interrupt
    monkeypatch.setattr(atomic.os, "fsync", stop)
    with pytest.raises(type(interrupt) if isinstance(interrupt, OSError) else interrupt) as info:
        write_atomic(out, "new")
    if isinstance(interrupt, OSError):
        assert info.value.filename == str(out)  # the path given, not the temporary file's
    assert out.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["d.txt"]


SLOW = {"format": "sectorviz.pattern/1", "launch": {"grid": [65536], "block": [1024]},
        "arrays": {"a": {"dtype": "float32", "length": 2**26}},
        "accesses": [{"name": "l", "op": "load", "array": "a",
                      "index": "(blockIdx.x * 1024 + threadIdx.x * 7 + j) % 67108864",
                      "loops": [{"var": "j", "start": 0, "stop": 1000}]}]}


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_with_one_line(tmp_path, signum, code):
    path = tmp_path / "slow.sectorviz.json"
    path.write_text(json.dumps(SLOW))
    run = subprocess.Popen([sys.executable, "-m", "sectorviz", "report", str(path),
                            "--budget", "1e15"], env=ENV, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3)
        run.send_signal(signum)
        out, err = run.communicate(timeout=60)
    finally:
        run.kill()  # a run the signal did not end would count for hours
    assert (run.returncode, out, err) == (code, "", "interrupted\n")


def test_a_full_stdout_is_one_line_and_exit_2():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    pattern = str(ROOT / "resources" / "examples" / "vector-add.sectorviz.json")
    for extra in ([], ["--json"]):
        with open("/dev/full", "w") as full:
            run = subprocess.run([sys.executable, "-m", "sectorviz", "report", pattern,
                                  *extra], env=ENV, stdout=full, stderr=subprocess.PIPE,
                                 text=True, timeout=120, check=False)
        assert run.returncode == 2
        assert run.stderr == "sectorviz: cannot write the output: No space left on device\n"
