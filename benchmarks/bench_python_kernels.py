"""Benchmark: the Triton and Numba examples. For each, the compile cold (an empty PTX cache:
the child process, its import of Triton or Numba and the compile, and the SASS: Triton's own
cubin read by nvdisasm, or the PTX assembled by nvJitLink, named; target at most 3 s) and
the analysis with the PTX cached, against the equivalent CUDA kernel's analysis by the
compiled engine (NVRTC or nvcc, PTX cached too; target: no slower). For a Triton example, the
SASS step alone both ways: its own cubin read by nvdisasm against the PTX assembled by
nvJitLink and read (what Triton's cubin saves of a cold compile; median of 3).

Run: .venv/bin/python benchmarks/bench_python_kernels.py
"""

from __future__ import annotations

import base64
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from sectorviz.engine.compiled import sass
from sectorviz.engine.ptx.kernel import CompiledPtx
from sectorviz.engine.ptx.parse import parse_module
from sectorviz.engine.readings import compiled_ptx
from sectorviz.model import analyze, load_pattern
from sectorviz.model.memo import MEMO
from sectorviz.model.pattern import Pattern, with_kernel

EXAMPLES = Path(__file__).resolve().parent.parent / "resources" / "examples"
COMPILE_TARGET_S = 3.0
# each example, and the CUDA example doing the same accesses (None: there is none)
PAIRS = (("triton-vector-add", "vector-add-cuda"), ("triton-softmax", None),
         ("triton-layer-norm", None), ("triton-matmul", None),
         ("numba-vector-add", "vector-add-cuda"),
         ("numba-transpose-naive", "transpose-naive-cuda"),
         ("numba-transpose-tiled", "transpose-tiled-cuda"))


def cold_compile(pattern: Pattern) -> tuple[float, str, str]:
    """Seconds of one compile into an empty PTX cache, what made its SASS ("none"), and
    for a compile with its own cubin the SASS step both ways (sass_step; else "")."""
    with tempfile.TemporaryDirectory() as cache:
        os.environ["SECTORVIZ_CACHE_DIR"] = cache
        start = time.perf_counter()
        compiled = compiled_ptx(pattern)
        took = time.perf_counter() - start
        entry, = (json.loads(p.read_text()) for p in Path(cache).glob("*.json"))
    step = "" if entry.get("cubin") is None else \
        sass_step(compiled, base64.b64decode(entry["cubin"]))
    return took, "none" if compiled.sass is None else compiled.sass.assembler, step


def sass_step(compiled: CompiledPtx, cubin: bytes, repeats: int = 3) -> str:
    """`SASS step 0.44 s from its cubin, 0.62 s by nvJitLink`: medians of `repeats`."""
    target = parse_module(compiled.ptx).target
    own, jitlink = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        sass.cubin_machine_code(cubin, compiled.entry, target, "own")
        own.append(time.perf_counter() - start)
        start = time.perf_counter()
        sass.target_machine_code(compiled.ptx, compiled.entry, target, None)
        jitlink.append(time.perf_counter() - start)
    return (f"SASS step {statistics.median(own):.2f} s from its cubin, "
            f"{statistics.median(jitlink):.2f} s by nvJitLink")


def analysis_time(pattern: Pattern, repeats: int = 3) -> tuple[float, int]:
    """Fastest analysis with the PTX cached (the first run fills the cache), and sectors."""
    analyze(pattern)
    best, sectors = float("inf"), 0
    for _ in range(repeats):
        MEMO.clear()
        start = time.perf_counter()
        sectors = analyze(pattern).totals.sectors
        best = min(best, time.perf_counter() - start)
    return best, sectors


def main() -> None:
    with tempfile.TemporaryDirectory() as warm:
        for name, twin in PAIRS:
            pattern = load_pattern(EXAMPLES / f"{name}.sectorviz.json")
            cold, assembler, step = cold_compile(pattern)
            os.environ["SECTORVIZ_CACHE_DIR"] = warm
            took, sectors = analysis_time(pattern)
            verdict = "ok" if cold <= COMPILE_TARGET_S else "OVER TARGET"
            line = (f"{name}: compile cold {cold:.2f} s (target <= {COMPILE_TARGET_S:g} s: "
                    f"{verdict}; SASS by {assembler}{'; ' + step if step else ''}); analysis "
                    f"{took:.3f} s, {sectors:,} sectors")
            if twin is not None:
                cuda = with_kernel(load_pattern(EXAMPLES / f"{twin}.sectorviz.json"),
                                   "benchmark", engine="compiled")
                cuda_took, cuda_sectors = analysis_time(cuda)
                line += (f"; {twin} (compiled engine) {cuda_took:.3f} s, {cuda_sectors:,} "
                         f"sectors; ratio {took / cuda_took:.2f}x")
            print(line)


if __name__ == "__main__":
    main()
