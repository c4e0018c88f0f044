"""Hostile kernels: loops that never end, code that expands without bound and sources nested
too deeply stop with one line naming the place, by the work budget or a documented limit.

Cases that would hang if a limit regressed run `sectorviz report` in a subprocess with a
timeout, so that a regression fails instead of hanging the suite."""

from __future__ import annotations

import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from cuda_helpers import kernel_pattern

from sectorviz.cli import main
from sectorviz.cuda import compile as compile_module
from sectorviz.cuda.kernel import LANE_PATH
from sectorviz.cuda.shared import shared_analysis
from sectorviz.cuda.source import MAX_NESTING
from sectorviz.model import PatternError, analyze
from sectorviz.model.budget import Budget, default_work, set_default_work
from sectorviz.model.frontend import kernel_for

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, code: str, grid=(1,), block=(32,)) -> Path:
    doc = json.loads(kernel_pattern(code, grid=grid, block=block).source)
    path = tmp_path / "k.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


def report(path: Path, *flags: str, timeout: int = 120) -> tuple[int, str]:
    """`sectorviz report` in a subprocess -> (exit status, stderr)."""
    done = subprocess.run([sys.executable, "-m", "sectorviz", "report", str(path), *flags],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    return done.returncode, done.stderr


def one_line(code: int, err: str, path: Path) -> str:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(f"{path}: ") and "Traceback" not in err, err
    return err[len(f"{path}: "):].strip()


def kernel(body: str) -> str:
    return "__global__ void k(float* a) {\n" + body + "\n}\n"


ENDLESS = {
    "for(;;)": "  for (;;) a[threadIdx.x] = 0;",
    "while(1)": "  int i = 0; while (1) { i++; } a[i % 1024] = 0;",
    "do while(1)": "  do { a[threadIdx.x] = 1; } while (1);",
    "wrapping 64-bit": "  for (unsigned long long i = 1; i != 0; i += 2) a[threadIdx.x] = 0;",
}


@pytest.mark.parametrize("name", sorted(ENDLESS))
def test_endless_loops_stop_by_the_budget_at_their_line(tmp_path, name):
    path = write(tmp_path, kernel(ENDLESS[name]))
    line = one_line(*report(path, "--budget", "2e6", timeout=60), path)
    assert line.startswith("line 2, column ") and \
        "passes the work budget of 2,000,000 units (lane-executions and interpreter steps); " \
        "raise it with --budget N" in line, line


LONG = {  # loops every lane runs alike: counted whole by the closed forms, in any budget
    "2^31 trips": ("  for (int i = 0; i < 2147483647; i++) a[threadIdx.x] = i;", 2**31 - 1),
    "5 nested x 64": ("  " + "".join(f"for (int i{d} = 0; i{d} < 64; i{d}++) "
                                     for d in range(5)) + "a[threadIdx.x] = 0;", 64**5),
}


@pytest.mark.parametrize("name", sorted(LONG))
def test_long_loops_run_alike_are_counted_whole(monkeypatch, name):
    code, trips = LONG[name]
    p = kernel_pattern(kernel(code))
    store = analyze(p, budget=Budget(work=2 * 10**6)).instructions[0]
    assert (store.requests, store.sectors) == (trips, 4 * trips)
    monkeypatch.setenv(LANE_PATH, "1")  # the lane path stops by the budget at the loop
    with pytest.raises(PatternError, match="line 2, column .*passes the work budget of "
                                           "2,000,000 units"):
        analyze(p, budget=Budget(work=2 * 10**6))


def test_an_endless_loop_stops_by_a_small_budget(tmp_path):
    """The default-budget case below, quickly: the same one line from `report --budget`."""
    path = write(tmp_path, kernel(ENDLESS["while(1)"]), block=(256,))
    line = one_line(*report(path, "--budget", "1000000", timeout=120), path)
    assert line.startswith("line 2, column 14: this loop passes the work budget of "
                           "1,000,000 units"), line


def test_an_endless_loop_stops_by_the_default_budget(tmp_path, capsys):
    """`report` without --budget spends the default budget (the app's Settings > Work
    Budget), set small here: a test never waits for DEFAULT_WORK units (minutes)."""
    path = write(tmp_path, kernel(ENDLESS["while(1)"]), block=(256,))
    previous = default_work()
    set_default_work(10**6)
    try:
        code = main(["report", str(path)])
    finally:
        set_default_work(previous)
    line = one_line(code, capsys.readouterr().err, path)
    assert line.startswith("line 2, column 14: this loop passes the work budget of "
                           "1,000,000 units"), line


def test_shared_memory_analysis_spends_one_budget_too():
    p = kernel_pattern(kernel("  __shared__ float s[32];\n  for (;;) s[threadIdx.x] = 1;"),
                       grid=(64,))
    with pytest.raises(PatternError, match=r"^line 3, column \d+: this (loop|access) passes the "
                                           r"work budget of 1,000,000 units"):
        shared_analysis(p, Budget(work=10**6))


def test_a_loop_charges_its_steps_per_iteration(monkeypatch):
    """`for (k = 0; k < 10; k++) s += k;` over one warp: 10 iterations of (1 + nodes) steps
    on the lane path (the closed forms run such a loop's body once)."""
    monkeypatch.setenv(LANE_PATH, "1")
    p = kernel_pattern(kernel("  int s = 0;\n  for (int k = 0; k < 10; k++) s += k;\n"
                              "  a[threadIdx.x] = s;"))
    lean = Budget()
    analyze(p, budget=lean)
    looped = kernel_pattern(kernel("  int s = 0;\n  for (int k = 0; k < 20; k++) s += k;\n"
                                   "  a[threadIdx.x] = s;"))
    more = Budget()
    analyze(looped, budget=more)
    assert (more.spent - lean.spent) % 10 == 0 and more.spent - lean.spent >= 10 * 3 * 64


def test_straight_line_code_is_charged_per_chunk(monkeypatch):
    monkeypatch.setenv(LANE_PATH, "1")  # the closed forms run it once per class of warps
    body = "".join(f"  int v{i} = threadIdx.x * {i};\n" for i in range(400)) + "  a[v3 % 1024] = 0;"
    p = kernel_pattern(kernel(body), grid=(4096,), block=(256,))
    with pytest.raises(PatternError, match="^kernel: the kernel's code passes the work budget "
                                           "of 2,000,000 units"):
        analyze(p, budget=Budget(work=2 * 10**6))


def test_chunks_shrink_with_the_kernels_variables():
    """2,000 variables over 2^16 threads would hold 1 GiB in one chunk of lanes; chunks of
    fewer warps keep the run's memory small."""
    body = "".join(f"  int v{i} = threadIdx.x * {i};\n" for i in range(2000))
    p = kernel_pattern(kernel(body + "  a[(v7 + v1999) & 1023] = 0;"), grid=(256,), block=(256,))
    kernel_for(p)
    tracemalloc.start()
    try:
        a = analyze(p, budget=Budget(work=2**32))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert a.instructions[0].requests == 2048 and peak < 2**28


def test_a_launch_past_the_budget_is_refused_before_it_runs(monkeypatch):
    p = kernel_pattern(kernel("  a[threadIdx.x] = 0;"), grid=(2**22,), block=(1024,))
    assert analyze(p).totals.requests == 2**27  # closed forms: what they compute
    monkeypatch.setenv(LANE_PATH, "1")
    with pytest.raises(PatternError, match="^launch: the launch of 4,294,967,296 threads asks "
                                           "for 4,294,967,296 units of work"):
        analyze(p)


# ------------------------------------------------------------ expansion


def device_twice(n: int) -> str:
    """n device functions, each calling the one before twice: 2^n calls inlined."""
    return "__device__ int f0(int x) { return x; }\n" + "".join(
        f"__device__ int f{i}(int x) {{ return f{i - 1}(x) + f{i - 1}(x + 1); }}\n"
        for i in range(1, n)) + kernel(f"  a[f{n - 1}(threadIdx.x) % 1024] = 0;")


def macro_twice(n: int) -> str:
    """n function-like macros, each expanding the one before twice."""
    return "#define M0(x) (x)\n" + "".join(
        f"#define M{i}(x) (M{i - 1}(x) + M{i - 1}(x))\n" for i in range(1, n)) + \
        kernel(f"  a[M{n - 1}(threadIdx.x) % 1024] = 0;")


def object_macro_twice(n: int) -> str:
    """n object-like macros, each the one before twice."""
    return "#define A0 1\n" + "".join(f"#define A{i} (A{i - 1} + A{i - 1})\n"
                                      for i in range(1, n)) + \
        kernel(f"  a[A{n - 1} % 1024 + threadIdx.x] = 0;")


@pytest.mark.parametrize("source, where, macro", [
    (device_twice(20), "line 6, column 43", ""),
    (macro_twice(20), "line 22, column 5", " (in the expansion of M19)"),
    (object_macro_twice(20), "line 22, column 5", " (in the expansion of A19)")])
def test_expansion_is_capped_at_the_use_that_passes_the_size(monkeypatch, source, where, macro):
    """A device function's body names its own line; inside macro text, the macro's use."""
    monkeypatch.setattr(compile_module, "MAX_COMPILED_NODES", 20000)
    with pytest.raises(PatternError) as info:
        analyze(kernel_pattern(source))
    assert str(info.value) == (f"{where}: the kernel grows past 20,000 syntax nodes with device "
                               f"functions inlined and macros expanded at each use{macro}")


@pytest.mark.parametrize("source", [device_twice(40), macro_twice(40)])
def test_forty_levels_of_doubling_are_refused_by_depth(source):
    with pytest.raises(PatternError, match=f"nested more than {MAX_NESTING} levels deep, "
                                           "counting device functions and macros expanded"):
        analyze(kernel_pattern(source))


def test_expansion_at_the_default_cap_ends_in_one_line(tmp_path):
    path = write(tmp_path, device_twice(20))
    line = one_line(*report(path), path)
    assert f"the kernel grows past {compile_module.MAX_COMPILED_NODES:,} syntax nodes" in line, line


def test_small_expansions_still_compile():
    """f5(t) and M5(t) are 32 t + a constant: each lane in its own sector."""
    for source in (device_twice(6), macro_twice(6)):
        assert analyze(kernel_pattern(source)).instructions[0].sectors == 32


# ------------------------------------------------------------ nesting


NESTED = {  # source nested far too deeply -> (expected line 1 column, what the error says)
    "500 parentheses": kernel("  a[" + "(" * 500 + "threadIdx.x" + ")" * 500 + "] = 0;"),
    "1,000 braces": kernel("  " + "{" * 1000 + "a[threadIdx.x] = 0;" + "}" * 1000),
    "3,000 ifs": kernel("  " + "if (threadIdx.x < 64)\n" * 3000 + "a[threadIdx.x] = 0;"),
    "300 loops": kernel("  " + "for (int q = 0; q < 1; q++) " * 300 + "a[threadIdx.x] = 0;"),
    "1,000 namespaces": "namespace x { " * 1000 + kernel("  a[threadIdx.x] = 0;") + " }" * 1000,
    "10,000 minus signs": kernel("  a[threadIdx.x + " + "- " * 10000 + "1] = 0;"),
}


@pytest.mark.parametrize("name", sorted(NESTED))
def test_deep_nesting_is_one_line_naming_the_place(tmp_path, capsys, name):
    path = write(tmp_path, NESTED[name])
    assert main(["report", str(path)]) == 2
    line = one_line(2, capsys.readouterr().err, path)
    assert line.startswith("line ") and ", column " in line, line
    assert f"nested more than {MAX_NESTING} levels deep" in line, line


@pytest.mark.parametrize("source", [
    kernel("  a[" + "(" * 190 + "threadIdx.x" + ")" * 190 + "] = 0;"),
    kernel("  " + "{" * 190 + "a[threadIdx.x] = 0;" + "}" * 190),
    kernel("  " + "if (threadIdx.x < 64) " * 190 + "a[threadIdx.x] = 0;"),
    kernel("  " + "for (int q = 0; q < 1; q++) " * 190 + "a[threadIdx.x] = 0;"),
    kernel("  a[threadIdx.x" + " + 0" * 190 + "] = 0;"),
    "namespace x { " * 90 + kernel("  a[threadIdx.x] = 0;") + " }" * 90])
def test_nesting_under_the_limit_compiles_and_runs(source):
    assert analyze(kernel_pattern(source)).instructions[0].sectors == 4


def test_a_syntax_error_deep_inside_is_found_without_recursion():
    code = kernel("  a[" + "(" * 150 + "threadIdx.x @ 1" + ")" * 150 + "] = 0;")
    with pytest.raises(PatternError, match=r"^line 2, column 167: syntax error near '@ 1'"):
        analyze(kernel_pattern(code))


def test_a_recursion_error_is_the_last_line_of_defence():
    """Called with most of Python's stack already in use, the deepest accepted kernel cannot
    compile: one line, not a traceback."""
    p = kernel_pattern(kernel("  a[" + "(" * 189 + "threadIdx.x" + ")" * 189 + "] = 0;"))

    def deep(levels: int):
        return analyze(p) if levels == 0 else deep(levels - 1)

    limit = sys.getrecursionlimit()
    with pytest.raises(PatternError, match="^kernel: the kernel nests too deeply to compile"):
        deep(limit - 300)
