"""The CUDA front end's closed forms give exactly what the lane path gives: numbers, per-warp
counts and errors, over generated affine kernels with nested loops, guards and partial warps;
and the naive matrix multiply at n = 4096 gives the numbers worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cuda_helpers import kernel_pattern
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sectorviz.cli import main
from sectorviz.cuda.kernel import LANE_PATH
from sectorviz.model import PatternError, analyze, pattern_from_dict
from sectorviz.model.frontend import kernel_for
from sectorviz.model.memo import MEMO
from sectorviz.paths import examples_dir


def outcome(pattern, monkeypatch, lanes: bool, per_warp: bool = True):
    """analyze() on one path -> (instructions, totals[, per-warp counts]) or the error's text.
    Without per_warp, the closed forms may take a box of blocks as one row per class."""
    with monkeypatch.context() as m:
        if lanes:
            m.setenv(LANE_PATH, "1")
        else:
            m.delenv(LANE_PATH, raising=False)
        try:
            a = analyze(pattern, per_warp=per_warp)
        except PatternError as err:
            return str(err)
    if not per_warp:
        return a.instructions, a.totals
    return (a.instructions, a.totals, a.per_warp_sectors.tolist(), a.per_warp_requests.tolist(),
            a.per_warp_ideal.tolist())


def same_on_both_paths(pattern, monkeypatch):
    lanes = outcome(pattern, monkeypatch, lanes=True)
    assert outcome(pattern, monkeypatch, lanes=False) == lanes
    whole = outcome(pattern, monkeypatch, lanes=False, per_warp=False)
    assert whole == (lanes if isinstance(lanes, str) else lanes[:2])
    return lanes


def used_closed_forms(pattern) -> bool:
    kernel = kernel_for(pattern)
    return kernel.closed_trace(0, kernel.warps, pattern.sector_bytes) is not None


# ---------------------------------------------------------------- generated kernels

VARS = ("tx", "ty", "bx", "by")


@st.composite
def affine(draw, names, small=False):
    """An affine integer expression over `names` (text), coefficients mostly non-negative."""
    terms = [str(draw(st.integers(0, 40)))]
    for name in names:
        c = draw(st.sampled_from([0, 0, 1, 2, 3, 4, 8, 16, 17, 32, 64, -1]) if not small
                 else st.sampled_from([0, 1, 2, -1]))
        if c:
            terms.append(f"{c} * {name}")
    return " + ".join(terms)


@st.composite
def kernels(draw):
    """(CUDA source, params, element type, launch) of a kernel whose loads and stores are
    affine in the thread and block coordinates and the loop counters, with guards, nested
    loops (some with lane-dependent bounds, some that break) and a division now and then."""
    ctype, dtype = draw(st.sampled_from([("float", "float32"), ("char", "int8"),
                                         ("double", "float64"), ("short", "int16")]))
    outer = draw(st.sampled_from(["0", "ty", "1"]))
    outer_stop = draw(st.sampled_from(["n", "3", "n / 2 + 1", "tx % 3 + 1"]))
    outer_step = draw(st.sampled_from(["1", "2"]))
    inner_stop = draw(st.sampled_from(["0", "2", "4", "j + 2"]))
    lets = ["int tx = threadIdx.x;", "int ty = threadIdx.y;", "int bx = blockIdx.x;",
            "int by = blockIdx.y;"]
    mid = draw(st.sampled_from(["", "int h = (tx + 32 * bx) / 8;", "int h = (bx * 64 + tx) % 32;",
                                "int h = tx / 2;"]))
    names = list(VARS) + (["h"] if mid else [])
    index = draw(affine(names))
    guard = draw(st.sampled_from(["", f"if ({draw(affine(VARS, True))} >= n + 8) return;",
                                  f"if ({draw(affine(VARS, True))} < 40) {{"]))
    close = "}" if guard.endswith("{") else ""
    inner_guard = draw(st.sampled_from(["", "if (q < 1)", f"if ({draw(affine(VARS, True))} < 30)",
                                        "if (j > 1) break;"]))
    step_j, step_q = draw(st.sampled_from([0, 1, 4, 9, 32, 33])), draw(st.sampled_from([0, 1, 64]))
    body = f"""
        {ctype} v = a[i + {step_j} * j];
        for (int q = 0; q < {inner_stop}; ++q) {{
            {inner_guard} v += a[i + {step_j} * j + {step_q} * q + 3];
        }}
        a[i + {step_j} * j + 1] = v;"""
    code = f"""
    __global__ void k({ctype}* a, int n) {{
        {' '.join(lets)}
        {mid}
        int i = {index};
        {guard}
        for (int j = {outer}; j < {outer_stop}; j += {outer_step}) {{{body}
        }}
        {close}
    }}"""
    params = {"n": draw(st.integers(0, 5))}
    launch = dict(block=(draw(st.sampled_from([16, 32, 48, 64, 96])), draw(st.integers(1, 3))),
                  grid=(draw(st.integers(1, 3)), draw(st.integers(1, 2))))
    length = draw(st.integers(1, 4000))
    return code, params, {"a": {"dtype": dtype, "length": length}}, launch


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(kernels())
def test_closed_forms_match_the_lane_path(monkeypatch, case):
    code, params, arrays, launch = case
    same_on_both_paths(kernel_pattern(code, arrays=arrays, params=params, **launch), monkeypatch)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 70), block=st.sampled_from([(16, 16), (32, 8), (8, 8), (48, 2)]),
       sector=st.sampled_from([32, 64]))
def test_matrix_multiply_matches_the_lane_path(monkeypatch, n, block, sector):
    doc = json.loads((examples_dir() / "matmul-naive-cuda.sectorviz.json").read_text())
    doc["params"].update(n=n, block=block[0])
    doc["launch"]["block"] = [block[0], block[1]]
    doc["launch"]["grid"] = [f"(n + {block[0] - 1}) / {block[0]}",
                             f"(n + {block[1] - 1}) / {block[1]}"]
    doc["sector_size"] = sector
    p = pattern_from_dict(doc, base_dir=examples_dir())
    same_on_both_paths(p, monkeypatch)
    assert used_closed_forms(p)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(width=st.sampled_from([8, 16, 32, 48, 64, 96, 128]), rows=st.integers(1, 9),
       block=st.sampled_from([32, 64, 96, 128]), trips=st.sampled_from(["w", "3", "rows"]),
       dtype=st.sampled_from([("float", "float32"), ("double", "float64")]),
       sector=st.sampled_from([32, 64, 128]))
def test_rows_and_columns_by_division_match_the_lane_path(monkeypatch, width, rows, block,
                                                          trips, dtype, sector):
    """row = idx / w, col = idx % w: in closed form where w divides the block's term (a
    quotient that changes inside a warp too), else the lane path."""
    ctype, name = dtype
    code = f"""
    __global__ void k(const {ctype}* a, {ctype}* c, int w, int rows) {{
        int idx = blockIdx.x * blockDim.x + threadIdx.x;
        int row = idx / w;
        int col = idx % w;
        if (row < rows) {{
            {ctype} s = 0;
            for (int j = 0; j < {trips}; ++j)
                s += a[row * w + j] + a[j * w + col];
            c[row * w + col] = s;
        }}
    }}"""
    n = width * max(rows, width)
    vector = {"dtype": name, "length": n + width}
    p = kernel_pattern(code, arrays={"a": vector, "c": vector},
                       params={"w": width, "rows": rows},
                       grid=(-(-width * rows // block),), block=(block,))
    p = pattern_from_dict({**json.loads(p.source), "sector_size": sector})
    same_on_both_paths(p, monkeypatch)


def test_a_quotient_that_changes_inside_a_warp_stays_in_closed_form(monkeypatch):
    """threadIdx.x / 8 and % 8 (SGEMM_CUDA's tile loads): four rows of eight in each warp,
    the same on both paths, and the whole grid one box."""
    code = """
    __global__ void k(const float* a, float* c, int n) {
        const unsigned row = threadIdx.x / 8, col = threadIdx.x % 8;
        c[blockIdx.x * 64 + row * 8 + col] = a[(blockIdx.x * 64 + row) * n + col];
    }"""
    vector = {"dtype": "float32", "length": 64 * 64 * 16}
    p = kernel_pattern(code, arrays={"a": vector, "c": vector}, params={"n": 64},
                       grid=(16,), block=(64,))
    same_on_both_paths(p, monkeypatch)
    kernel = kernel_for(p)
    assert kernel.closed_trace(0, 1, 32)[0] == kernel.warps
    rows = {s.source: (s.requests, s.sectors) for s in analyze(p).instructions}
    assert rows["a[(blockIdx.x * 64 + row) * n + col]"] == (32, 32 * 4)  # 4 rows of 32 B


# ---------------------------------------------------------------- kernels by hand

VARIANTS = (Path(__file__).resolve().parents[2] / "benchmarks" / "kernels" / "matmul.cu"
            ).read_text()


def matmul(code: str, function: str, n: int, grid, block):
    square = {"dtype": "float32", "shape": ["n", "n"]}
    return kernel_pattern(code, function, arrays={"A": square, "B": square, "C": square},
                          params={"n": n}, grid=grid, block=block)


@pytest.mark.parametrize("n", [32, 96])
def test_coalesced_and_tiled_matrix_multiply_match_the_lane_path(monkeypatch, n):
    for p in (matmul(VARIANTS, "matmulCoalesced", n, (n * n // 32,), (32,)),
              matmul(VARIANTS, "matmulBlockCoalesced<32>", n, (n // 32, n // 32), (1024,)),
              matmul(VARIANTS, "matmulTiled", n, (n // 32, n // 32), (32, 32))):
        same_on_both_paths(p, monkeypatch)
        assert used_closed_forms(p)


def test_block_coalesced_matrix_multiply_at_4096_by_hand():
    """Blocks of 1024 threads, row = 32 blockIdx.x + threadIdx.x / 32 (one per warp), col =
    32 blockIdx.y + threadIdx.x % 32 (the lane): the column stays within 0..31 of its block's
    base, so the whole grid is one box in closed form. Per k a warp reads one word of A (1
    sector) and 32 consecutive floats of B (4 sectors); its store is 128 bytes (4)."""
    n = 4096
    p = matmul(VARIANTS, "matmulBlockCoalesced<32>", n, (n // 32, n // 32), (1024,))
    kernel = kernel_for(p)
    assert kernel.closed_trace(0, 1, 32)[0] == kernel.warps  # one box, not a row per warp
    a = analyze(p)
    warps = n * n // 32
    rows = {s.source: (s.requests, s.sectors) for s in a.instructions}
    assert rows == {"A[row * n + k]": (warps * n, warps * n),
                    "B[k * n + col]": (warps * n, 4 * warps * n),
                    "C[row * n + col]": (warps, 4 * warps)}
    assert a.totals.unique_sectors == 3 * n * n * 4 // 32


def test_naive_matrix_multiply_at_4096_by_hand():
    """16 x 16 blocks: a warp is two half-rows of 16 threads (rows r, r + 1, 16 columns).
    Per k, A[row * n + k] is one word in each of two rows: 2 sectors; B[k * n + col] is 16
    consecutive floats (64 bytes, 64-aligned): 2 sectors; the store is 2 x 64 bytes: 4.
    Every sector of A, B and C is touched: n * n * 4 / 32 = 2^21 each."""
    n = 4096
    p = matmul(open(examples_dir() / "matmul-naive.cu").read(), "matmulNaive", n,
               (n // 16, n // 16), (16, 16))
    a = analyze(p)
    warps = (n // 16) ** 2 * 8
    per_matrix = n * n * 4 // 32
    assert a.warps == warps
    rows = {s.source: (s.requests, s.sectors, s.min, s.max, s.useful_bytes, s.unique_sectors)
            for s in a.instructions}
    assert rows == {
        "a[k]": (warps * n, 2 * warps * n, 2, 2, 2 * 4 * warps * n, per_matrix),
        "b[k * stride]": (warps * n, 2 * warps * n, 2, 2, 64 * warps * n, per_matrix),
        "C[row * n + col]": (warps, 4 * warps, 4, 4, 128 * warps, per_matrix)}
    assert a.totals.unique_sectors == 3 * per_matrix


def test_report_on_the_matmul_example_matches_the_lane_path(monkeypatch, capsys, tmp_path):
    """`sectorviz report --json` on the example at n = 256, both paths."""
    doc = json.loads((examples_dir() / "matmul-naive-cuda.sectorviz.json").read_text())
    source = doc["kernel"]["source"]  # beside the pattern: its root holds what it reads
    (tmp_path / source).write_text((examples_dir() / source).read_text())
    doc["params"]["n"] = 96
    path = tmp_path / "mm.sectorviz.json"
    path.write_text(json.dumps(doc))
    reports = []
    for lanes in (False, True):
        with monkeypatch.context() as m:
            m.setenv(LANE_PATH, "1" if lanes else "0")
            MEMO.clear()
            assert main(["report", str(path), "--json"]) == 0
            reports.append(json.loads(capsys.readouterr().out))
    assert reports[0] == reports[1]
    assert reports[0]["totals"]["requests"] == 96 * 96 // 32 * (2 * 96 + 1)


def test_loop_runs_are_counted_whole():
    """A loop every lane runs alike is one RepeatedBatch per access, with its trips."""
    p = matmul(VARIANTS, "matmulCoalesced", 64, (128,), (32,))
    kernel = kernel_for(p)
    hi, events = kernel.closed_trace(0, kernel.warps, 32, per_warp=True)
    assert hi == kernel.warps
    assert [(k, b.loops) for _, k, b in events] == [(0, ((64, 4),)), (1, ((64, 256),)),
                                                  (2, ())]
    assert np.all(events[0][2].full)


def test_errors_are_the_lane_paths(monkeypatch):
    code = """
    __global__ void k(float* a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        for (int j = 0; j < n; ++j) a[i + 40 * j] = 0.0f;
    }"""
    p = kernel_pattern(code, params={"n": 30}, grid=(2,), block=(48,))
    assert same_on_both_paths(p, monkeypatch) == (
        "line 4, column 37: element index 1024 of 'a' outside [0, 1024) at warp 2 lane 16")


def test_a_box_of_blocks_is_one_row_per_class():
    """The whole grid of the naive multiply (n = 64, 4 x 4 blocks of 16 x 16): one row per
    warp of a block, block coordinates and k as runs: a[k] moves 16 rows (4096 bytes) per
    block row and 4 bytes per k; b[k * stride] 64 bytes per block column and a row per k."""
    n = 64
    p = matmul((examples_dir() / "matmul-naive.cu").read_text(), "matmulNaive", n, (4, 4),
               (16, 16))
    kernel = kernel_for(p)
    hi, events = kernel.closed_trace(0, 1, 32)
    assert hi == kernel.warps == 128
    assert [(k, len(b.base), b.loops) for _, k, b in events] == [
        (0, 8, ((4, 0), (4, 16 * n * 4), (n, 4))),
        (1, 8, ((4, 16 * 4), (4, 0), (n, n * 4))),
        (2, 8, ((4, 16 * 4), (4, 16 * n * 4)))]


def test_shared_accesses_are_counted_in_closed_form(monkeypatch):
    """The tiled multiply's shared tiles: counted from the closed forms' batches (no warp
    runs lane by lane), with the lane path's wavefronts, ideal and n-ways."""
    n = 64
    p = matmul((examples_dir() / "matmul-tiled.cu").read_text(), "matmulTiled", n,
               (n // 16, n // 16), (16, 16))
    MEMO.clear()
    lanes = lane_path_analysis(p, monkeypatch)
    MEMO.clear()
    kernel = kernel_for(p)
    monkeypatch.setattr(type(kernel), "events", _no_lane_path)
    fast = analyze(p)
    assert fast.shared == lanes.shared and fast.shared_totals == lanes.shared_totals
    assert fast.shared_totals.requests == (n // 16) ** 2 * 8 * (n // 16) * (2 + 2 * 16)


def lane_path_analysis(p, monkeypatch):
    with monkeypatch.context() as m:
        m.setenv(LANE_PATH, "1")
        return analyze(p)


def _no_lane_path(*args, **kwargs):
    raise AssertionError("the lane path ran")


@st.composite
def shared_kernels(draw):
    """(CUDA source, params, launch, element bytes) of a kernel that fills a __shared__ array
    at an affine index and reads it back in a loop at another, then stores one float."""
    ctype, width = draw(st.sampled_from([("float", 4), ("double", 8), ("int", 4),
                                         ("short", 2), ("char", 1)]))
    store = draw(affine(("tx", "ty"), small=False).filter(lambda e: "-" not in e))
    load = draw(affine(("tx", "ty")).filter(lambda e: "-" not in e))
    step = draw(st.sampled_from([0, 1, 2, 8, 32, 33]))
    code = f"""
    __global__ void k(float* a, int n) {{
        __shared__ {ctype} s[4096];
        int tx = threadIdx.x, ty = threadIdx.y;
        s[{store}] = ({ctype}) tx;
        __syncthreads();
        float v = 0;
        for (int j = 0; j < n; ++j) v += s[{load} + {step} * j];
        a[(blockIdx.x * blockDim.y + ty) * blockDim.x + tx] = v;
    }}"""
    launch = dict(block=(draw(st.sampled_from([16, 32, 48, 64])), draw(st.integers(1, 3))),
                  grid=(draw(st.integers(1, 3)),))
    return code, {"n": draw(st.integers(0, 5))}, launch, width, step


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(shared_kernels())
def test_shared_closed_forms_match_the_lane_path(monkeypatch, case):
    """Wavefronts, ideal, requests and n-ways from the closed forms equal the lane path's;
    where every step moves whole bank words (4-byte multiples), the closed forms ran."""
    from sectorviz.model.shared_stats import SharedCounter

    code, params, launch, width, step = case
    p = kernel_pattern(code, arrays={"a": {"dtype": "float32", "length": 3 * 3 * 64}},
                       params=params, **launch)
    MEMO.clear()
    lanes = lane_path_analysis(p, monkeypatch)
    ran = []
    original = SharedCounter._add_repeated
    monkeypatch.setattr(SharedCounter, "_add_repeated",
                        lambda self, *a: ran.append(1) or original(self, *a))
    MEMO.clear()
    fast = analyze(p)
    assert (fast.shared, fast.shared_totals) == (lanes.shared, lanes.shared_totals)
    if (step * width) % 4 == 0 and used_closed_forms(p):
        assert ran
