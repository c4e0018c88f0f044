"""Helpers for the PTX engine's tests: PTX from nvcc (tests that need it are skipped where
nvcc is missing), a CompiledKernel of a pattern, and an analysis counted with it."""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import sectorviz.model.analysis as analysis_module
from sectorviz.model import analyze, pattern_from_dict
from sectorviz.model.ptx.kernel import CompiledKernel, CompiledPtx
from sectorviz.model.ptx.parse import parse_module

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc is not installed")
FLAGS = ["-ptx", "-O3", "-lineinfo", "-arch=sm_90"]
_ptx_cache: dict[str, str] = {}


def nvcc_ptx(source: Path) -> str:
    """nvcc's PTX of a .cu file (cached by content for the test run)."""
    text = source.read_text()
    key = hashlib.sha256((str(source) + text).encode()).hexdigest()
    if key not in _ptx_cache:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out.ptx"
            subprocess.run([NVCC, *FLAGS, str(source), "-o", str(out)], check=True,
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


def compiled_for_file(source: Path, function: str, included: tuple[Path, ...] = ()
                      ) -> CompiledPtx:
    """The CompiledPtx of a .cu file (and the files it includes, which nvcc reads)."""
    ptx = nvcc_ptx(source)
    return CompiledPtx(ptx, entry_of(ptx, function),
                       kernel_parameters(source.read_text(), function.split("<")[0]),
                       "nvcc for sm_90 at -O3", tuple(str(f) for f in (source, *included)))


def inline_pattern(tmp_path: Path, code: str, function: str = "k", arrays: dict | None = None,
                   params: dict | None = None, grid=(1,), block=(32,),
                   headers: dict[str, str] | None = None):
    """(pattern, CompiledPtx) of inline CUDA code compiled by nvcc: the code is written to
    tmp_path/kernel.cu (and `headers`, name -> text, beside it), and the pattern names it
    as its source."""
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
                                                               tuple(included))


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


def lines_with(ptx: str, *words: str) -> list[str]:
    """The PTX lines holding any of `words` (what a test prints to show its reasoning)."""
    return [line.strip() for line in ptx.splitlines() if any(w in line for w in words)]
