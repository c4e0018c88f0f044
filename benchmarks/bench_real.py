"""SGEMM kernels at M = N = K = 4096 (issue 30): each `sectorviz report` of a kernel pattern
runs as its own process with the compiled engine, first compiling into an empty PTX cache,
then with the PTX cached; each prints its whole-process seconds, its peak resident memory,
the share of its warps counted in closed forms, and each figure against its target (ratio =
figure / target; <= 1 meets it).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_real.py [--sgemm-cuda DIR] [NAME ...]

Without --sgemm-cuda it reads the project's own stand-ins (benchmarks/kernels/sgemm.cu: the
same launch shapes and access patterns). The real kernels are siboehm's SGEMM_CUDA, kept
outside the repository:

    git clone https://github.com/siboehm/SGEMM_CUDA /tmp/SGEMM_CUDA
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_real.py --sgemm-cuda /tmp/SGEMM_CUDA

each file of src/kernels/ read unmodified, the template instantiation its runner (src/runner.cu)
launches named in the pattern.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
STAND_INS = ROOT / "benchmarks" / "kernels" / "sgemm.cu"
SIZE = 4096
GIB = 2**30
CACHED_S, COMPILING_S, PEAK_GIB = 2.0, 5.0, 1.5  # the targets, per kernel


class Case(NamedTuple):
    """One kernel: its name here, its source, the instantiation launched, grid and block,
    and compiler flags (-D: what the file takes from the files included before it)."""

    name: str
    source: Path
    function: str
    grid: tuple[str, str]
    block: tuple[str, str]
    flags: tuple[str, ...] = ()


def stand_ins() -> list[Case]:
    """The project's own kernels of benchmarks/kernels/sgemm.cu, SGEMM_CUDA's launches."""
    tiles128 = ("N / 128", "M / 128")
    return [Case("1 naive", STAND_INS, "gemmNaive", ("M / 32", "N / 32"), ("32", "32")),
            Case("2 coalesced", STAND_INS, "gemmCoalesced<32>", ("M / 32", "N / 32"),
                 ("1024", "1")),
            Case("3 shared-memory blocking", STAND_INS, "gemmShared<32>", ("M / 32", "N / 32"),
                 ("1024", "1")),
            Case("4 1D blocktiling", STAND_INS, "gemmTiles1D<64, 64, 8, 8>",
                 ("N / 64", "M / 64"), ("512", "1")),
            Case("5 2D blocktiling", STAND_INS, "gemmTiles2D<128, 128, 8, 8, 8>", tiles128,
                 ("256", "1")),
            Case("6 vectorized", STAND_INS, "gemmFloat4<128, 128, 8, 8, 8>", tiles128,
                 ("256", "1"))]


def sgemm_cuda(folder: Path) -> list[Case]:
    """SGEMM_CUDA's kernels 1-12 (src/kernels/), as its runner launches them at 4096."""
    k = folder / "src" / "kernels"
    tiles128 = ("N / 128", "M / 128")
    two_d = "<128, 128, 8, 8, 8>"
    warps = "<128, 128, 16, 64, 64, 4, 8, 4, 128>"
    warp_size = ("-DWARPSIZE=32",)  # 11 and 12 use the constant 10's file defines
    return [Case("1 naive", k / "1_naive.cuh", "sgemm_naive", ("M / 32", "N / 32"),
                 ("32", "32")),
            Case("2 coalesced", k / "2_kernel_global_mem_coalesce.cuh",
                 "sgemm_global_mem_coalesce<32>", ("M / 32", "N / 32"), ("1024", "1")),
            Case("3 shared-memory blocking", k / "3_kernel_shared_mem_blocking.cuh",
                 "sgemm_shared_mem_block<32>", ("M / 32", "N / 32"), ("1024", "1")),
            Case("4 1D blocktiling", k / "4_kernel_1D_blocktiling.cuh",
                 "sgemm1DBlocktiling<64, 64, 8, 8>", ("N / 64", "M / 64"), ("512", "1")),
            Case("5 2D blocktiling", k / "5_kernel_2D_blocktiling.cuh",
                 "sgemm2DBlocktiling" + two_d, tiles128, ("256", "1")),
            Case("6 vectorized", k / "6_kernel_vectorize.cuh", "sgemmVectorize" + two_d,
                 tiles128, ("256", "1")),
            Case("7 resolve bank conflicts", k / "7_kernel_resolve_bank_conflicts.cuh",
                 "sgemmResolveBankConflicts" + two_d, tiles128, ("256", "1")),
            Case("8 bank extra column", k / "8_kernel_bank_extra_col.cuh",
                 "sgemmResolveBankExtraCol" + two_d, tiles128, ("256", "1")),
            Case("9 autotuned", k / "9_kernel_autotuned.cuh",
                 "sgemmAutotuned<128, 128, 16, 8, 8>", tiles128, ("256", "1")),
            Case("10 warptiling", k / "10_kernel_warptiling.cuh",
                 "sgemmWarptiling" + warps, tiles128, ("128", "1")),
            Case("11 double buffering", k / "11_kernel_double_buffering.cuh",
                 "sgemmDoubleBuffering<128, 256, 16, 128, 32, 1, 8, 8, 256>",
                 ("N / 256", "M / 128"), ("256", "1"), warp_size),
            Case("12 double buffering (barriers)", k / "12_kernel_double_buffering.cuh",
                 "runSgemmDoubleBuffering2" + warps, tiles128, ("128", "1"), warp_size)]


def pattern_doc(case: Case) -> dict[str, object]:
    """The pattern file of a case (beside a copy of its source): A (M x K), B (K x N) and C
    (M x N) floats."""
    def matrix(rows: str, cols: str) -> dict[str, object]:
        return {"dtype": "float32", "shape": [rows, cols]}
    return {"format": "sectorviz.pattern/1", "name": f"SGEMM {case.name}",
            "params": {"M": SIZE, "N": SIZE, "K": SIZE},
            "launch": {"grid": list(case.grid), "block": list(case.block)},
            "arrays": {"A": matrix("M", "K"), "B": matrix("K", "N"), "C": matrix("M", "N")},
            "kernel": {"source": case.source.name, "function": case.function,
                       "flags": list(case.flags)}}


def report_in_process(pattern: str) -> None:
    """The child: `sectorviz report PATTERN --quiet`, counting the warps the closed forms
    cover; prints a last line of JSON {"rc", "closed", "warps"}."""
    sys.path.insert(0, str(ROOT))
    from sectorviz.command.main import main
    from sectorviz.engine.ptx.kernel import CompiledKernel
    from sectorviz.engine.ptx.sass_reading import SassKernel
    from sectorviz.model.frontend import ClosedStep

    covered = {"closed": 0, "warps": 0}

    def counting(kind: type[CompiledKernel]) -> None:
        """The reading's closed_trace (SASS or PTX level), counting the warps it covers."""
        original = kind.closed_trace

        def counted(self: CompiledKernel, lo: int, most: int, sector_bytes: int,
                    per_warp: bool = False) -> ClosedStep | None:
            step = original(self, lo, most, sector_bytes, per_warp)
            covered["warps"] = self.warps
            if step is not None and most > 1:  # one warp's detail is not the count
                covered["closed"] = max(covered["closed"], step[0])
            return step

        kind.closed_trace = counted  # type: ignore[method-assign]

    counting(CompiledKernel)
    counting(SassKernel)
    with open(os.devnull, "w") as quiet:
        stdout, sys.stdout = sys.stdout, quiet
        try:
            rc = main(["report", pattern, "--quiet"])
        finally:
            sys.stdout = stdout
    print(json.dumps(dict(covered, rc=rc)))


class Run(NamedTuple):
    seconds: float
    cpu: float  # user + system seconds
    peak_gib: float
    closed: float  # share of warps in closed forms
    failure: str


def timed(pattern: Path, env: dict[str, str]) -> Run:
    """One child process: its wall and CPU seconds, peak RSS and closed-form share."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, __file__, "--child", str(pattern)], cwd=ROOT,
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    assert child.stdout is not None and child.stderr is not None
    out, err = child.stdout.read(), child.stderr.read()
    child.returncode = os.waitstatus_to_exitcode(status)
    peak, cpu = usage.ru_maxrss * 1024 / GIB, usage.ru_utime + usage.ru_stime
    lines = out.strip().splitlines()
    if child.returncode or not lines:
        why = (err.strip().splitlines() or ["no output"])[-1]
        return Run(seconds, cpu, peak, 0.0, why)
    got = json.loads(lines[-1])
    failure = "" if got["rc"] == 0 else f"report exit {got['rc']}: " + \
        ((err.strip().splitlines() or [""])[-1])
    return Run(seconds, cpu, peak, got["closed"] / max(1, got["warps"]), failure)


def figure(label: str, value: float, target: float, unit: str) -> str:
    verdict = "met" if value <= target else "NOT met"
    return f"  {label}: {value:.3g} {unit}, target <= {target:g} {unit}, ratio " \
           f"{value / target:.2f} ({verdict})"


def bench(case: Case, folder: Path) -> None:
    """Compiling, then cached: print each figure of one kernel."""
    pattern = folder / f"{case.name.replace(' ', '-')}.sectorviz.json"
    (folder / case.source.name).write_bytes(case.source.read_bytes())  # inside the root
    pattern.write_text(json.dumps(pattern_doc(case), indent=1))
    env = dict(os.environ, SECTORVIZ_ENGINE="compiled",
               SECTORVIZ_CACHE_DIR=str(folder / "ptx-cache"))
    compiling = timed(pattern, env)
    cached = timed(pattern, env)
    print(f"{case.name} ({case.function}, {case.source.name}):")
    for run in (compiling, cached):
        if run.failure:
            print(f"  failed (NOT met): {run.failure}")
            return
    print(figure("whole process, PTX cached", cached.seconds, CACHED_S, "s"))
    print(figure("whole process, compiling", compiling.seconds, COMPILING_S, "s"))
    print(figure("peak memory", max(compiling.peak_gib, cached.peak_gib), PEAK_GIB, "GiB"))
    print(f"  CPU seconds (user + system): {cached.cpu:.3g} cached, {compiling.cpu:.3g} "
          "compiling")
    print(f"  warps counted in closed forms: {cached.closed:.1%}")


def main(argv: list[str]) -> None:
    """`[--sgemm-cuda DIR] [NAME ...]`: the stand-ins, or SGEMM_CUDA's kernels from DIR; a
    NAME picks kernels by a word of their name ("5", "vectorized")."""
    if argv[:1] == ["--child"]:
        report_in_process(argv[1])
        return
    cases = stand_ins()
    if argv[:1] == ["--sgemm-cuda"]:
        cases, argv = sgemm_cuda(Path(argv[1]).resolve()), argv[2:]
    picked = [c for c in cases if not argv or any(a in c.name.split() for a in argv)]
    print(f"M = N = K = {SIZE}, compiled engine, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as folder:
        for case in picked:
            bench(case, Path(folder))


if __name__ == "__main__":
    main(sys.argv[1:])
