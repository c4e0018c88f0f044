"""Hostile input, third round, item 1: outputs never lie. A pipe, device, socket or folder
given as an output (export -o, sweep -o, batch --csv/--jsonl) is refused before anything is
written or run; a missing folder, a full disk and an output over an input are one line
naming the file and exit 2, never an internal error."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

import pytest

from sectorviz import atomic
from sectorviz.cli import main

SPECIAL = "sectorviz writes regular files only"
TINY = {"format": "sectorviz.pattern/1", "params": {"n": 64},
        "launch": {"grid": [1], "block": [32]},
        "arrays": {"a": {"dtype": "float32", "length": "n"}},
        "accesses": [{"name": "load a[i]", "op": "load", "array": "a", "index": "threadIdx.x"}]}


def tiny(folder: Path, name: str = "p.sectorviz.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(TINY))
    return path


def commands(pattern: Path, out: Path) -> dict[str, list[str]]:
    """Every command line that writes `out`, by the flag that names it."""
    return {"export -o": ["export", str(pattern), "-o", str(out)],
            "sweep -o": ["sweep", str(pattern), "--param", "n=64,128", "--jobs", "1",
                         "-o", str(out)],
            "batch --csv": ["batch", str(pattern), "--jobs", "1", "--csv", str(out)],
            "batch --jsonl": ["batch", str(pattern), "--jobs", "1", "--jsonl", str(out)]}


FLAGS = list(commands(Path("p"), Path("o")))


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_socket(path: Path) -> None:
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))


def make_link_to_device(path: Path) -> None:
    path.symlink_to(os.devnull)


@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize("make, kind", [(make_fifo, "a named pipe"),
                                        (make_socket, "a socket"),
                                        (make_link_to_device, "a link to a character device")])
def test_a_special_file_is_refused_before_anything_is_written(tmp_path, capsys, flag, make,
                                                              kind):
    out = tmp_path / "out.csv"
    make(out)
    before = os.lstat(out)
    code, printed, err = run(capsys, commands(tiny(tmp_path), out)[flag])
    assert (code, printed, err) == (2, "", f"{out}: it is {kind}; {SPECIAL}\n")
    after = os.lstat(out)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)


@pytest.mark.parametrize("flag", ["batch --csv", "batch --jsonl"])
def test_dev_full_is_refused_and_left_a_device(tmp_path, capsys, flag):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    code, printed, err = run(capsys, commands(tiny(tmp_path), Path("/dev/full"))[flag])
    assert (code, printed, err) == (2, "", f"/dev/full: it is a character device; {SPECIAL}\n")
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)


@pytest.mark.parametrize("flag", FLAGS)
def test_a_missing_folder_is_one_line(tmp_path, capsys, flag):
    out = tmp_path / "missing" / "out.csv"
    code, printed, err = run(capsys, commands(tiny(tmp_path), out)[flag])
    assert (code, printed, err) == (2, "", f"{out}: No such file or directory\n")


@pytest.mark.parametrize("flag", ["sweep -o", "batch --csv", "batch --jsonl"])
def test_a_full_disk_is_one_line_naming_the_file(tmp_path, capsys, monkeypatch, flag):
    def full(_fd: int) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(atomic.os, "fsync", full)
    out = tmp_path / "out.csv"
    code, _, err = run(capsys, commands(tiny(tmp_path), out)[flag])
    assert (code, err) == (2, f"{out}: No space left on device\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.sectorviz.json"]


@pytest.mark.parametrize("flag", ["sweep -o", "batch --csv"])
def test_the_pattern_as_the_output_is_one_line(tmp_path, capsys, flag):
    pattern = tiny(tmp_path, "p.csv")
    before = pattern.read_bytes()
    code, _, err = run(capsys, commands(pattern, pattern)[flag])
    assert (code, err) == (2, f"{pattern}: it is a file this run read (the pattern or one of "
                              "its files); choose another name\n")
    assert pattern.read_bytes() == before


def test_batch_refuses_an_input_as_output_before_its_workers_read_it(tmp_path, capsys):
    pattern, other = tiny(tmp_path, "p.csv"), tiny(tmp_path)
    before = pattern.read_bytes()
    code, printed, err = run(capsys, ["batch", str(pattern), str(other), "--jobs", "2",
                                      "--quiet", "--csv", str(pattern)])
    assert (code, printed) == (2, "") and err.startswith(f"{pattern}: it is a file this run read")
    assert pattern.read_bytes() == before


def test_batch_refuses_one_file_for_both_outputs(tmp_path, capsys):
    out = tmp_path / "out.txt"
    code, printed, err = run(capsys, ["batch", str(tiny(tmp_path)), "--jobs", "1",
                                      "--jsonl", str(out), "--csv", str(out)])
    assert (code, printed, err) == (2, "", f"sectorviz batch: --jsonl and --csv both name "
                                           f"{out}\n")
    assert not out.exists()


def test_sweep_refuses_an_empty_output_name(tmp_path, capsys):
    code, printed, err = run(capsys, ["sweep", str(tiny(tmp_path)), "--param", "n=64",
                                      "--jobs", "1", "-o", ""])
    assert (code, printed) == (2, "") and err.startswith("sectorviz sweep: no format for a name")
