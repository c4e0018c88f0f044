"""Helpers for the PTX engine's tests: PTX from nvcc (tests that need it are skipped where
nvcc is missing), a CompiledKernel of a pattern, an analysis counted with it, and the
closed forms against the lane path (`both`, with a Spy that shows the closed forms ran)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

import sectorviz.model.analysis as analysis_module
from sectorviz.engine.ptx.kernel import CompiledKernel, CompiledPtx
from sectorviz.engine.ptx.parse import parse_module
from sectorviz.model import analyze, pattern_from_dict

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
FLAGS = ["-ptx", "-O3", "-lineinfo", "-arch=sm_90"]
_ptx_cache: dict[str, str] = {}


DEBUG_FLAGS = ["-ptx", "-G", "-arch=sm_90"]  # a debug compile: device functions kept out of line


def nvcc_ptx(source: Path, flags: list[str] = FLAGS) -> str:
    """nvcc's PTX of a .cu file with `flags` (cached by content for the test run)."""
    text = source.read_text()
    key = hashlib.sha256((str(source) + text + " ".join(flags)).encode()).hexdigest()
    if key not in _ptx_cache:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.ptx"
            subprocess.run([NVCC, *flags, str(source), "-o", str(out)], check=True,
                           capture_output=True, timeout=120)
            _ptx_cache[key] = out.read_text()
    return _ptx_cache[key]


def kernel_parameters(text: str, function: str) -> tuple[str, ...]:
    """The parameter names of `__global__ ... function(...)` in CUDA text."""
    m = re.search(r"__global__[^;{]*?\b" + re.escape(function) + r"\s*\(([^)]*)\)", text, re.S)
    return tuple(re.findall(r"(\w+)\s*(?:\[[^\]]*\])?\s*$", p.strip())[0]
                 for p in m.group(1).split(",") if p.strip())


def entry_of(ptx: str, function: str) -> str:
    """The PTX entry of a function: its own name (extern "C") or the mangled one."""
    entries = list(parse_module(ptx).entries)
    base = function.split("<")[0]
    return next(e for e in entries if e == base or f"{len(base)}{base}" in e)


def compiled_for_file(source: Path, function: str, included: tuple[Path, ...] = (),
                      flags: list[str] = FLAGS) -> CompiledPtx:
    """The CompiledPtx of a .cu file (and the files it includes, which nvcc reads)."""
    ptx = nvcc_ptx(source, flags)
    level = "-G" if "-G" in flags else "-O3"
    return CompiledPtx(ptx, entry_of(ptx, function),
                       kernel_parameters(source.read_text(), function.split("<")[0]),
                       f"nvcc for sm_90 at {level}", tuple(str(f) for f in (source, *included)))


def inline_pattern(tmp_path: Path, code: str, function: str = "k", arrays: dict | None = None,
                   params: dict | None = None, grid=(1,), block=(32,),
                   headers: dict[str, str] | None = None, flags: list[str] = FLAGS):
    """(pattern, CompiledPtx) of inline CUDA code compiled by nvcc with `flags`: the code is
    written to tmp_path/kernel.cu (and `headers`, name -> text, beside it), and the pattern
    names it as its source."""
    source = tmp_path / "kernel.cu"
    source.write_text(code)
    included = []
    for name, text in (headers or {}).items():
        (tmp_path / name).write_text(text)
        included.append(tmp_path / name)
    doc = {"format": "sectorviz.pattern/1", "name": "test",
           "launch": {"grid": list(grid), "block": list(block)},
           "params": params or {},
           "arrays": arrays or {"a": {"dtype": "float32", "length": 1024}},
           "kernel": {"source": "kernel.cu", "function": function}}
    return pattern_from_dict(doc, tmp_path), compiled_for_file(source, function,
                                                               tuple(included), flags)


def ptx_pattern(ptx: str, entry: str, params: tuple[str, ...], arrays: dict,
                pattern_params: dict | None = None, grid=(1,), block=(32,)):
    """(pattern, CompiledPtx) of hand-written PTX (no compiler needed)."""
    doc = {"format": "sectorviz.pattern/1", "name": "ptx test",
           "launch": {"grid": list(grid), "block": list(block)},
           "params": pattern_params or {}, "arrays": arrays,
           "kernel": {"code": "// PTX given directly", "function": entry}}
    return pattern_from_dict(doc), CompiledPtx(ptx, entry, params, "hand-written PTX", ())


@contextlib.contextmanager
def counted_by(kernel):
    """Within the block, `analyze` counts every pattern with `kernel`."""
    old = analysis_module.kernel_for
    analysis_module.kernel_for = lambda pattern: kernel
    try:
        yield
    finally:
        analysis_module.kernel_for = old


def analyze_compiled(pattern, compiled: CompiledPtx):
    """-> (analysis counted by the PTX engine, its CompiledKernel)."""
    kernel = CompiledKernel(pattern, compiled)
    with counted_by(kernel):
        return analyze(pattern), kernel


@contextlib.contextmanager
def lane_path():
    """Within the block, SECTORVIZ_LANE_PATH turns the closed forms off."""
    old = os.environ.get("SECTORVIZ_LANE_PATH")
    os.environ["SECTORVIZ_LANE_PATH"] = "1"
    try:
        yield
    finally:
        if old is None:
            del os.environ["SECTORVIZ_LANE_PATH"]
        else:
            os.environ["SECTORVIZ_LANE_PATH"] = old


class Spy:
    """A CompiledKernel whose closed_trace records the warps it covered and its batches."""

    def __init__(self, kernel: CompiledKernel):
        self.kernel, self.covered, self.batches = kernel, 0, []
        original = kernel.closed_trace

        def closed_trace(lo, most, sector_bytes, per_warp=False):
            step = original(lo, most, sector_bytes, per_warp)
            if step is not None:
                self.covered += step[0] - lo
                self.batches.extend(step[1])
            return step

        kernel.closed_trace = closed_trace

    @property
    def loops_run_whole(self) -> bool:
        """Whether some batch stands for more than one iteration of a loop of the kernel."""
        return any(b.executions > 1 for _, _, b in self.batches)

    def iterated(self) -> set[int]:
        """Global instructions with more than one batch in a chunk: a loop run an iteration
        at a time."""
        ks = [k for space, k, _ in self.batches if space == "global"]
        return {k for k in ks if ks.count(k) > 1}


def both(pattern, compiled, per_warp=False):
    """(analysis with the closed forms, their Spy, analysis by the lane path)."""
    spy = Spy(CompiledKernel(pattern, compiled))
    with counted_by(spy.kernel):
        closed = analyze(pattern, per_warp=per_warp)
    with lane_path(), counted_by(CompiledKernel(pattern, compiled)):
        lanes = analyze(pattern, per_warp=per_warp)
    return closed, spy, lanes


def assert_same(closed, lanes):
    assert closed == lanes
    assert len(closed.histograms) == len(lanes.histograms)
    for a, b in zip(closed.histograms, lanes.histograms):
        assert np.array_equal(np.trim_zeros(a, "b"), np.trim_zeros(b, "b"))
    for a, b in ((closed.per_warp_sectors, lanes.per_warp_sectors),
                 (closed.per_warp_requests, lanes.per_warp_requests)):
        assert (a is None) == (b is None) and (a is None or np.array_equal(a, b))


def closed_everywhere(pattern, compiled) -> Spy:
    """The closed forms' Spy, once their analysis equals the lane path's and they covered
    every warp (the fast path this compares actually ran)."""
    closed, spy, lanes = both(pattern, compiled)
    assert_same(closed, lanes)
    assert spy.covered == spy.kernel.warps
    return spy


def lines_with(ptx: str, *words: str) -> list[str]:
    """The PTX lines holding any of `words` (what a test prints to show its reasoning)."""
    return [line.strip() for line in ptx.splitlines() if any(w in line for w in words)]
