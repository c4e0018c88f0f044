"""Issue 28, item 3: nothing outlives sectorviz. A compile stuck on an include that is a
FIFO (it never ends by itself) is stopped by Ctrl-C, SIGTERM, SIGKILL or its time limit;
afterwards no process of it (nvcc, sh, gcc, cc1plus, the supervisor) runs and its private
folder (nvcc's tmpxft files with it) is gone. A lower hard memory cap is used, not an
internal error."""

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from compiled_helpers import SAXPY, needs_nvcc, write_pattern

from sectorviz.engine.compiled import bounded
from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.model import PatternError, load_pattern

STUCK = '#define STUCK "stuck/fifo.h"\n#include STUCK\n' + SAXPY  # a macro: nvcc's to check


def _stuck_pattern(tmp_path) -> Path:
    """A compiled-engine pattern whose kernel includes a FIFO -> its path."""
    root = tmp_path / "root"
    (root / "stuck").mkdir(parents=True)
    os.mkfifo(root / "stuck" / "fifo.h")
    write_pattern(root, STUCK, "saxpy", engine="compiled", flags=["-Istuck"])
    return root / "p.sectorviz.json"


def _processes_naming(text: str, but: int | None = None) -> list[int]:
    """The running processes whose command line holds `text` (other than `but`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in (but, os.getpid()):
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def _wait_for(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@needs_nvcc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_stopped_sectorviz_leaves_no_compiler_running(tmp_path, signum):
    pattern = _stuck_pattern(tmp_path)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    marker = str(pattern.parent / "stuck")  # on the command line of every compiler process
    env = {**os.environ, "TMPDIR": str(temporary)}
    app = subprocess.Popen([sys.executable, "-m", "sectorviz", "report", str(pattern)],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert _wait_for(lambda: any("cc1plus" in _cmdline(p) for p in
                                     _processes_naming(marker, app.pid)), 60), \
            "the compile never reached the FIFO"
        app.send_signal(signum)
        app.wait(30)
        assert _wait_for(lambda: not _processes_naming(marker), 15), \
            [_cmdline(p) for p in _processes_naming(marker)]
        assert _wait_for(lambda: not list(temporary.iterdir()), 15), list(temporary.iterdir())
    finally:
        app.kill()
        app.wait()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@needs_nvcc
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_compile_past_its_time_leaves_no_process_or_file(tmp_path, monkeypatch):
    pattern = _stuck_pattern(tmp_path)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.setattr(bounded, "COMPILE_SECONDS", 3.0)
    with pytest.raises(PatternError, match="took over 3 s and was stopped"):
        compile_kernel(load_pattern(pattern))
    assert not _processes_naming(str(pattern.parent / "stuck"))
    assert list(temporary.iterdir()) == []  # no private folder, no tmpxft_* file


@needs_nvcc
def test_a_lower_hard_memory_cap_is_used_and_said(tmp_path):
    write_pattern(tmp_path, SAXPY, "saxpy", engine="compiled")
    cap = 6 * 2**30

    def lower_cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    done = subprocess.run([sys.executable, "-c", "from sectorviz.engine.compiled.bounded import *;"
                           "print(memory_words(memory_limit()))"],
                          preexec_fn=lower_cap, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == ("6 GiB per process: this session's hard limit "
                                   "(ulimit -Hv), below sectorviz's 8 GiB")
    done = subprocess.run([sys.executable, "-m", "sectorviz", "report",
                           str(tmp_path / "p.sectorviz.json")], preexec_fn=lower_cap,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
