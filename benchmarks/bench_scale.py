"""Real sizes in seconds (issue 10): each case runs in its own process, so its peak memory is
its own, and prints its figures, their targets and the ratio (figure / target; <= 1 meets it).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_scale.py [CASE ...]

A case is a function returning rows (figure name, value, target or None, unit); add one to
CASES. Run in a terminal, the gather case shows `sectorviz report`'s progress bar on stderr.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sectorviz.command.flags import progress_bar  # noqa: E402
from sectorviz.model import analyze, pattern_from_dict  # noqa: E402
from sectorviz.model.budget import DEFAULT_MEMORY  # noqa: E402
from sectorviz.model.frontend import kernel_for  # noqa: E402
from sectorviz.paths import examples_dir  # noqa: E402

GIB = 2**30
LEVEL_VAR = "BENCH_SCALE_LEVEL"  # the compiled engine's level this process's kernels ask for
Row = tuple[str, float, float | None, str]


def peak_gib() -> float:
    """This process's peak resident memory so far (GiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB


def example(name: str, **params: int):
    """An example pattern with some params replaced."""
    path = examples_dir() / f"{name}.sectorviz.json"
    doc = json.loads(path.read_text())
    doc["params"].update(params)
    return pattern_from_dict(doc, path.parent)


def timed_analysis(pattern):
    """(Analysis, seconds), with the progress bar `sectorviz report` shows on a terminal."""
    kernel_for(pattern)  # parsing and array placement are not the run
    start = time.perf_counter()
    with progress_bar(quiet=False) as progress:
        result = analyze(pattern, progress=progress)
    return result, time.perf_counter() - start


def vector_add_pattern() -> list[Row]:
    """c[i] = a[i] + b[i] at 2^30 threads: 12 GiB of arrays, one class of warps."""
    result, seconds = timed_analysis(example("vector-add", n=2**30))
    assert result.totals.unique_sectors == 3 * 2**30 * 4 // 32
    return [("vector add, pattern, 2^30 threads: time", seconds, 1.0, "s"),
            ("vector add, pattern, 2^30 threads: peak memory", peak_gib(), 1.5, "GiB")]


def gather_random() -> list[Row]:
    """out[i] = data[index[i]] through 2^26 uniformly random indices (the lane path)."""
    n = 2**26
    pattern = pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "gather, 2^26 random indices",
        "params": {"n": n, "threads": 256},
        "launch": {"grid": ["(n + threads - 1) / threads"], "block": ["threads"]},
        "arrays": {"index": {"dtype": "int32", "length": "n",
                             "values": {"kind": "uniform", "low": 0, "high": n, "seed": 7}},
                   "data": {"dtype": "float32", "length": "n"},
                   "out": {"dtype": "float32", "length": "n"}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"}, "guard": "i < n",
        "accesses": [{"op": "load", "array": "index", "index": "i"},
                     {"op": "load", "array": "data", "index": "index[i]"},
                     {"op": "store", "array": "out", "index": "i"}]}, ROOT)
    kernel = kernel_for(pattern)
    _ = kernel.values  # the index array is input, not the run
    result, seconds = timed_analysis(pattern)
    lane_path = [k for k in range(len(kernel.instructions)) if k not in kernel.closed_forms]
    lanes = sum(result.instructions[k].active_lanes for k in lane_path)
    return [("gather, 2^26 random indices: time", seconds, None, "s"),
            ("gather, 2^26 random indices: peak memory", peak_gib(), DEFAULT_MEMORY / GIB,
             "GiB"),
            ("gather: lane-path throughput", lanes / seconds, None, "lane accesses/s")]


def cuda_pattern(source: Path, function: str, params: dict, arrays: dict, grid: list,
                 block: list):
    """A pattern whose kernel is `function` of a CUDA file."""
    level = {"level": os.environ[LEVEL_VAR]} if os.environ.get(LEVEL_VAR) else {}
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": function, "params": params,
        "launch": {"grid": grid, "block": block}, "arrays": arrays,
        "kernel": {"source": str(source), "function": function, **level}}, source.parent)


def matmul_rows(label: str, function: str, source: Path, grid: list, block: list
                ) -> list[Row]:
    """A matrix multiply kernel at n = 4096, exact in closed form; A, B and C are each read
    or written whole, so the unique sectors are 3 n^2 * 4 / 32."""
    n = 4096
    square = {"dtype": "float32", "shape": ["n", "n"]}
    pattern = cuda_pattern(source, function, {"n": n}, {"A": square, "B": square, "C": square},
                           grid, block)
    result, seconds = timed_analysis(pattern)
    assert result.totals.unique_sectors == 3 * n * n * 4 // 32
    return [(f"{label} matmul kernel, n = 4096: time", seconds, 5.0, "s"),
            (f"{label} matmul kernel, n = 4096: peak memory", peak_gib(), 1.5, "GiB")]


KERNELS = ROOT / "benchmarks" / "kernels" / "matmul.cu"


def naive_matmul() -> list[Row]:
    """The example's kernel: 16 x 16 blocks, a loop over k."""
    return matmul_rows("naive", "matmulNaive", examples_dir() / "matmul-naive.cu",
                       ["n / 16", "n / 16"], [16, 16])


def coalesced_matmul() -> list[Row]:
    """One thread per output, 1-D blocks of 1024, row and col by / and %."""
    return matmul_rows("coalesced", "matmulCoalesced", KERNELS, ["n * n / 1024"], [1024])


def block_coalesced_matmul() -> list[Row]:
    """SGEMM_CUDA's second kernel: 1-D blocks of 1024 owning 32 x 32 tiles, row and col by /
    and % of a template constant (nvcc writes the column as one bfi)."""
    return matmul_rows("block-coalesced", "matmulBlockCoalesced<32>", KERNELS,
                       ["n / 32", "n / 32"], [1024])


def tiled_matmul() -> list[Row]:
    """32 x 32 shared-memory tiles, __syncthreads, a loop over tiles."""
    return matmul_rows("tiled", "matmulTiled", KERNELS, ["n / 32", "n / 32"], [32, 32])


def vector_add_kernel() -> list[Row]:
    """vectorAdd from the example's .cu at 2^30 threads."""
    n = 2**30
    vector = {"dtype": "float32", "length": "n"}
    pattern = cuda_pattern(examples_dir() / "vector-add.cu", "vectorAdd", {"n": n},
                           {"a": vector, "b": vector, "c": vector}, ["n / 256"], [256])
    result, seconds = timed_analysis(pattern)
    assert result.totals.unique_sectors == 3 * n * 4 // 32
    return [("vector add, kernel, 2^30 threads: time", seconds, 1.0, "s")]


CASES: dict[str, Callable[[], list[Row]]] = {
    "vector-add-pattern": vector_add_pattern,
    "gather-random": gather_random,
    "naive-matmul": naive_matmul,
    "coalesced-matmul": coalesced_matmul,
    "block-coalesced-matmul": block_coalesced_matmul,
    "tiled-matmul": tiled_matmul,
    "vector-add-kernel": vector_add_kernel,
}


# with the compiled engine, the whole process of these cases (start, compile, count) is timed
# twice: with an empty PTX cache, then with the PTX cached: targets (seconds) of each
WHOLE_PROCESS = {"naive-matmul": (5.0, 2.0), "tiled-matmul": (5.0, 2.0),
                 "block-coalesced-matmul": (5.0, 2.0),
                 "vector-add-kernel": (None, None)}


def run_case(name: str, env: dict[str, str]) -> tuple[list[Row], float]:
    """(the rows a case prints, the seconds its process took) in its own process."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--case", name], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        why = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return [(f"{name}: failed (NOT met): {why}", 0.0, None, "")], seconds
    return [tuple(row) for row in json.loads(done.stdout.splitlines()[-1])], seconds


# the second reading of the PTX machine (issue 29): "as written", a -G compile
AS_WRITTEN = {"SECTORVIZ_ENGINE": "source"}


def whole_process(name: str, env: dict[str, str], label: str = "") -> list[Row]:
    """A case's rows, then its whole-process seconds compiling and with the PTX cached
    (`label` names the reading in each row's name)."""
    compiling, cached = WHOLE_PROCESS[name]
    with tempfile.TemporaryDirectory() as cache:
        env = dict(env, SECTORVIZ_CACHE_DIR=cache)
        _, first = run_case(name, env)
        rows, second = run_case(name, env)
    return [(f"{label}{row[0]}", *row[1:]) for row in rows] + [
        (f"{label}{name}: whole process, compiling", first, compiling, "s"),
        (f"{label}{name}: whole process, PTX cached", second, cached, "s")]


def print_rows(rows: list[Row]) -> None:
    for name, value, target, unit in rows:
        if not unit:
            print(name)
        elif target is None:
            print(f"{name}: {value:,.3g} {unit}")
        else:
            verdict = "met" if value <= target else "NOT met"
            print(f"{name}: {value:.3g} {unit}, target <= {target:g} {unit}, "
                  f"ratio {value / target:.2f} ({verdict})")


def main(argv: list[str]) -> None:
    """`[--engine compiled|source] [CASE ...]`: each case in its own process; a CUDA kernel's
    engine is SECTORVIZ_ENGINE's (the --engine flag sets it); a case that fails prints its
    one line as a figure not met. With the compiled engine the CUDA kernel cases also time
    their whole process, compiling into an empty PTX cache, then with the PTX cached, counted
    in SASS (ptxas and nvdisasm run once per compile, cached) and in PTX, and again read "as
    written" by the same machine (a -G compile: AS_WRITTEN), as a second reading.
    `--engine as-written` runs that reading alone."""
    if argv[:1] == ["--case"]:
        print(json.dumps(CASES[argv[1]]()))
        return
    env = dict(os.environ)
    if argv[:1] == ["--engine"]:
        env["SECTORVIZ_ENGINE"], argv = argv[1], argv[2:]
    if env.get("SECTORVIZ_ENGINE") == "as-written":
        env.update(AS_WRITTEN)
    debug = env.get("SECTORVIZ_ENGINE") == "source"
    print(f"CUDA kernels read by the {env.get('SECTORVIZ_ENGINE', 'default')} engine"
          f"{' (as written: a -G compile)' if debug else ''}")
    for name in argv or list(CASES):
        if name in WHOLE_PROCESS:
            if env.get("SECTORVIZ_ENGINE") != "compiled":
                print_rows(whole_process(name, env))
                continue
            for level in ("sass", "ptx"):  # counted in SASS (the default), then in PTX
                print(f"{name}, counted in {level.upper()}:")
                print_rows(whole_process(name, dict(env, **{LEVEL_VAR: level})))
            print_rows(whole_process(name, {**env, **AS_WRITTEN}, "as written (-G): "))
        else:
            print_rows(run_case(name, env)[0])


if __name__ == "__main__":
    main(sys.argv[1:])
