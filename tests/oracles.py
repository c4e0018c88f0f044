"""Oracles and runners the tests share (tests never import other test modules): brute-force
references for the fast paths, and the runner of `sectorviz report` cases the fuzzers use."""

from __future__ import annotations

import contextlib
import io
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from sectorviz.cli import main
from sectorviz.model import analysis, analyze, pattern_from_dict
from sectorviz.model.errors import PatternError
from sectorviz.model.frontend import kernel_for
from sectorviz.paths import examples_dir

ROOT = Path(__file__).resolve().parents[1]
CASE_SECONDS = 60  # a case running longer has hung (the work budget stops real ones sooner)
SUBPROCESS_MEMORY = 4 * 2**30  # bytes of address space for a subprocess case

# the textbook GEMM, one thread per element of c (nvcc keeps c[i * n + j] in a register)
GEMM = """\
__global__ void gemm(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && j < n) {
        for (int k = 0; k < n; k++)
            c[i * n + j] += a[i * n + k] * b[k * n + j];
    }
}
"""


# ---------------------------------------------------------------- shared memory banks


def reference(address: list[int], width: int, active: list[bool]) -> tuple[int, int, int]:
    """One request -> (wavefronts, ideal, n-way), lane by lane: phases of 32, 16 or 8 lanes
    by width; per phase, each bank's set of distinct 4-byte words; a phase with an active lane
    takes max(words per bank) wavefronts and ideally ceil(distinct words / 32)."""
    lanes = 32 if width <= 4 else 16 if width <= 8 else 8
    waves = ideal = ways = 0
    for first in range(0, 32, lanes):
        banks: dict[int, set[int]] = {}
        for lane in range(first, first + lanes):
            if active[lane]:
                for byte in range(address[lane], address[lane] + width):
                    banks.setdefault(byte // 4 % 32, set()).add(byte // 4)
        if banks:
            most = max(len(words) for words in banks.values())
            waves += most
            ways = max(ways, most)
            ideal += -(-len(set().union(*banks.values())) // 32)
    return waves, ideal, ways


# ---------------------------------------------------------------- closed forms


def lane_path_only(pattern, **kwargs):
    """analyze() with every closed form switched off."""
    kernel = analysis.kernel_for(pattern)
    saved = kernel.__dict__.pop("closed_forms", None)
    kernel.__dict__["closed_forms"] = {}
    try:
        return analyze(pattern, **kwargs)
    finally:
        kernel.__dict__.pop("closed_forms")
        if saved is not None:
            kernel.__dict__["closed_forms"] = saved


# ---------------------------------------------------------------- report cases


class CaseTimeout(BaseException):
    """Raised by the alarm in a case that runs too long (not an Exception: the CLI's last
    line of defence must not swallow it)."""


@dataclass(frozen=True)
class Outcome:
    code: int | None
    out: str
    err: str
    seconds: float


def example_folder(folder: Path) -> Path:
    """`folder` with copies of the examples' kernel sources, where fuzzed patterns go."""
    for source in examples_dir().glob("*.cu"):
        shutil.copy(source, folder / source.name)
    return folder


def run_report(text: str, folder: Path, args: list[str], limit_s: float) -> Outcome:
    """`sectorviz report` in this process on `text` saved in `folder` -> what it did; a run
    past `limit_s` seconds is stopped (code None)."""
    path = folder / "fuzzed.sectorviz.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    start = time.perf_counter()
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["report", str(path), *args])
    except CaseTimeout:
        code = None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return Outcome(code, out.getvalue(), err.getvalue(), time.perf_counter() - start)


def _alarm(_signum, _frame):
    raise CaseTimeout


def run_report_subprocess(text: str, folder: Path, args: list[str], limit_s: float) -> Outcome:
    """`sectorviz report` in a fresh interpreter with SUBPROCESS_MEMORY bytes of address
    space, killed after `limit_s` seconds (code None)."""
    path = folder / "fuzzed.sectorviz.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}
    start = time.perf_counter()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "sectorviz", "report", str(path), *args], env=env,
            capture_output=True, text=True, errors="backslashreplace", timeout=limit_s,
            stdin=subprocess.DEVNULL, preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired as err:
        return Outcome(None, "", str(err.stderr or ""), time.perf_counter() - start)
    return Outcome(result.returncode, result.stdout, result.stderr,
                   time.perf_counter() - start)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (SUBPROCESS_MEMORY, SUBPROCESS_MEMORY))


def broken_promise(outcome: Outcome, folder: Path) -> str | None:
    """What about `outcome` breaks the promise (exit 0 with a sheet, or exit 2 with one line
    naming the file: the pattern, or the kernel's .cu for an error in it), or None."""
    path = str(folder / "fuzzed.sectorviz.json")
    if outcome.code is None:
        return f"no answer after {outcome.seconds:.0f} s"
    if "Traceback" in outcome.err:
        return "traceback: " + outcome.err.strip().splitlines()[-1]
    if outcome.code == 0:
        return None if outcome.out and not outcome.err else f"exit 0 with stderr {outcome.err!r}"
    if outcome.code != 2:
        return f"exit {outcome.code}: {outcome.err[-300:]!r}"
    if outcome.err.count("\n") != 1 or not outcome.err.endswith("\n"):
        return f"{outcome.err.count(chr(10))} stderr lines: {outcome.err[:300]!r}"
    # the pattern file, or for an error in its kernel's source the .cu it names
    named = next((f for f in (path, *map(str, folder.glob("*.cu")))
                  if outcome.err.startswith(f"{f}: ")), None)
    if named is None or outcome.out:
        return f"line does not name the file, or stdout not empty: {outcome.err[:300]!r}"
    message = outcome.err[len(named) + 2:-1]
    if not message.strip() or not message.isprintable():
        return f"empty or unprintable message: {message[:300]!r}"
    if "internal error" in message:
        return message
    return None


# ---------------------------------------------------------------- golden numbers (issue 29)

# frozen from the C++ interpreter (sectorviz/cuda at commit 8147168, by
# benchmarks/freeze_golden.py, both deleted since: issue 29)
GOLDEN = ROOT / "tests" / "engine" / "golden"
FIGURES = ("requests", "active_lanes", "sectors", "wavefronts")
Place = tuple[str, str | None, int | None, str, str]  # (kind, file, line, op, array)


def golden_entries(name: str) -> list[dict]:
    """The frozen patterns of GOLDEN/`name` (examples.json, test_kernels.json)."""
    import json
    return json.loads((GOLDEN / name).read_text())["patterns"]


def golden_pattern(entry: dict, engine: str = "source"):
    """A frozen entry -> its pattern, read by `engine` (its kernel's "engine" key)."""
    import json

    from sectorviz.model import pattern_from_dict
    doc = entry["pattern"] if "pattern" in entry else \
        json.loads((ROOT / entry["base"] / entry["example"]).read_text())
    return pattern_from_dict({**doc, "kernel": {**doc["kernel"], "engine": engine}},
                             ROOT / entry["base"])


def frozen_figures(result) -> list[dict]:
    """An analysis -> one row per memory instruction: kind, name, op, array, file, line,
    requests, active lanes and sectors (global, local) or wavefronts (shared)."""
    rows = []
    for kind, stats, figure in (("global", result.instructions, "sectors"),
                                ("shared", result.shared, "wavefronts"),
                                ("local", result.local, "sectors")):
        for s in stats:
            rows.append({"kind": kind, "name": s.name, "op": s.op, "array": s.array,
                         "file": s.file, "line": s.line, "requests": s.requests,
                         "active_lanes": s.active_lanes, figure: getattr(s, figure)})
    return rows


def by_place(rows: list[dict]) -> dict[Place, dict[str, int]]:
    """Rows -> their figures summed per (kind, file, line, op, array): how two readings'
    instructions are matched (an unrolled or repeated access sums over its copies)."""
    places: dict[Place, dict[str, int]] = {}
    for row in rows:
        sums = places.setdefault((row["kind"], row["file"], row["line"], row["op"],
                                  row["array"]), {})
        for figure in FIGURES:
            if figure in row:
                sums[figure] = sums.get(figure, 0) + row[figure]
    return places


# ---------------------------------------------------------------- the as-written reading (issue 29)
# the C++ interpreter's tests ported to the kernel's debug compile read by the PTX engine: a
# kernel pattern from inline code, its analysis through the product's own path (`analyze`,
# read as written by tests/conftest.py's default), per-line sums of what it counts


def kernel_pattern(code: str, function: str = "k", arrays: dict | None = None,
                   params: dict | None = None, grid=(1,), block=(32,), **kernel):
    """A pattern whose kernel is `code` (`kernel` adds keys: engine, flags, ...); arrays
    default to one float32 array `a` of 1024."""
    doc = {"format": "sectorviz.pattern/1", "name": "test",
           "launch": {"grid": list(grid), "block": list(block)},
           "params": params or {},
           "arrays": arrays or {"a": {"dtype": "float32", "length": 1024}},
           "kernel": {"code": code, "function": function, **kernel}}
    return pattern_from_dict(doc)


def run(code: str, **kw):
    """-> (analysis, kernel) of an inline kernel."""
    p = kernel_pattern(code, **kw)
    return analyze(p), kernel_for(p)


def per_line(stats) -> dict[int, tuple[int, int]]:
    """Global (or local) instruction stats -> {source line: (requests, sectors)}, summed over
    the instructions of a line (a debug compile may split one access into several, or name
    two accesses of one statement by the same line)."""
    out: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for s in stats:
        out[s.line][0] += s.requests
        out[s.line][1] += s.sectors
    return {line: (r, n) for line, (r, n) in sorted(out.items())}


def shared_per_line(stats) -> dict[int, tuple[int, int]]:
    """Shared instruction stats -> {source line: (requests, wavefronts)}, summed."""
    out: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for s in stats:
        out[s.line][0] += s.requests
        out[s.line][1] += s.wavefronts
    return {line: (r, n) for line, (r, n) in sorted(out.items())}


def elements(code: str, **kw) -> list[tuple[int, str, list[int]]]:
    """Every global execution of the first warp, in the order the debug compile runs them:
    (source line, op "load" / "store" / "atom" / ..., active lanes' element indices)."""
    p = kernel_pattern(code, **kw)
    kernel = kernel_for(p)
    out = []
    for k, b in kernel.trace(0, 1):
        inst = kernel.instructions[k]
        out.append((inst.line, inst.op,
                    [int(e) for e, on in zip(np.broadcast_to(b.element, b.active.shape)[0],
                                             b.active[0]) if on]))
    return out


# a known engine gap of the as-written reading, marked on the tests that meet it
UNSET_BITS = pytest.mark.xfail(
    raises=PatternError, strict=True,
    reason="engine gap (UNSET_BITS in test_golden_as_written): -G builds a tiled_partition's "
           "object in the frame by read-modify-write of bitfields never stored first, and the "
           "PTX engine tracks known values per register, not per bit")
