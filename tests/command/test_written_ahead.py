"""The reading as written worked out in a child process while the report counts the
compiled reading (command/written_ahead.py): the child's reading is the one the report would
have read itself, a child for another pattern is ended and not used, and the report prints
the same with and without it."""

from __future__ import annotations

import sys
import threading

import pytest

from sectorviz.cli import main
from sectorviz.command.written_ahead import WrittenAhead
from sectorviz.engine.compiled.compiler import find_compiler
from sectorviz.model import load_pattern
from sectorviz.model.compiler_changes import written_reading
from sectorviz.model.memo import MEMO
from sectorviz.model.pattern import with_kernel
from sectorviz.paths import examples_dir

pytestmark = [
    pytest.mark.skipif(find_compiler() is None, reason="no CUDA compiler here"),
    pytest.mark.skipif(sys.platform != "linux", reason="the child runs on Linux only"),
]
MATMUL = examples_dir() / "matmul-tiled-cuda.sectorviz.json"


def _compiled():
    return with_kernel(load_pattern(MATMUL), "kernel.engine", engine="compiled")


def test_the_child_reads_the_kernel_as_written_as_the_report_would():
    pattern = _compiled()
    done = threading.Event()
    other = threading.Thread(target=done.wait, daemon=True)  # a thread of this process:
    other.start()  # the child is a fresh interpreter, started all the same
    try:
        ahead = WrittenAhead(pattern)
    finally:
        done.set()
    assert ahead.pipe is not None  # a child was started
    child = ahead.process
    found = ahead.result(pattern)
    assert not child.is_alive() and ahead.pipe is None
    here = written_reading(pattern)
    assert not isinstance(found, str) and not isinstance(here, str)
    assert found.totals == here.totals
    assert [s.sectors for s in found.instructions] == [s.sectors for s in here.instructions]


def test_a_child_for_another_pattern_is_ended_and_not_used():
    pattern = _compiled()
    ahead = WrittenAhead(pattern)
    child = ahead.process
    other = with_kernel(pattern, "kernel.level", level="ptx")
    assert ahead.result(other) is None
    assert not child.is_alive()


def test_the_source_engine_starts_no_child():
    pattern = with_kernel(load_pattern(MATMUL), "kernel.engine", engine="source")
    assert WrittenAhead(pattern).pipe is None


def test_the_report_is_the_same_with_the_child(capsys, monkeypatch):
    monkeypatch.setenv("SECTORVIZ_ENGINE", "compiled")
    assert main(["report", "--quiet", str(MATMUL)]) == 0
    with_child = capsys.readouterr().out
    MEMO.clear()  # nothing of the first report is reused
    monkeypatch.setattr("sectorviz.command.written_ahead.sys.platform", "darwin")  # no child
    assert main(["report", "--quiet", str(MATMUL)]) == 0
    assert capsys.readouterr().out == with_child
    assert "7. What the compiler changed" in with_child
