"""The closed form for affine accesses gives exactly what the lane-by-lane path gives."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import lane_path_only

from sectorviz.model import PatternError, analysis, analyze, pattern_from_dict


def same_result(pattern):
    fast, slow = analyze(pattern, per_warp=True), lane_path_only(pattern, per_warp=True)
    assert fast.instructions == slow.instructions
    assert fast.totals == slow.totals
    assert (fast.per_warp_sectors == slow.per_warp_sectors).all()
    assert (fast.per_warp_requests == slow.per_warp_requests).all()
    assert (fast.per_warp_ideal == slow.per_warp_ideal).all()
    return fast


coefficient = st.integers(-3, 40)


@settings(max_examples=80, deadline=None)
@given(bx=st.sampled_from([32, 64, 96]), by=st.integers(1, 3), gx=st.integers(1, 3),
       gy=st.integers(1, 2), a=coefficient, b=coefficient, c=coefficient, d=coefficient,
       shift=st.integers(0, 40),
       dtype=st.sampled_from(["uint8", "float32", "float4", {"bytes": 12}]),
       offset=st.integers(0, 33), n=st.integers(0, 700),
       guard_op=st.sampled_from(["<", ">=", "<="]))
def test_closed_form_matches_lane_path(bx, by, gx, gy, a, b, c, d, shift, dtype, offset, n,
                                       guard_op):
    low = sum(max(0, -k) * (e - 1) for k, e in ((a, bx), (b, by), (c, gx), (d, gy)))
    high = sum(max(0, k) * (e - 1) for k, e in ((a, bx), (b, by), (c, gx), (d, gy)))
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1",
        "params": {"n": n, "low": low + shift},
        "launch": {"grid": [gx, gy], "block": [bx, by]},
        "arrays": {"x": {"dtype": dtype, "length": low + high + shift + 1, "offset_bytes": offset}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
        "guard": f"i {guard_op} n",
        "accesses": [{"op": "load", "array": "x",
                      "index": f"low + {a} * threadIdx.x + {b} * threadIdx.y + {c} * blockIdx.x"
                               f" + {d} * blockIdx.y"}]})
    assert analysis.kernel_for(p).closed_forms
    same_result(p)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(32, 70), ld_pad=st.integers(0, 5),
       layout=st.sampled_from(["row-major", "col-major"]))
def test_closed_form_matrices(m, ld_pad, layout):
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "params": {"m": m},
        "launch": {"grid": [-(-m // 32), m], "block": [32]},
        "arrays": {"a": {"dtype": "float32", "shape": ["m", "m"], "layout": layout,
                         "ld": f"m + {ld_pad}"}},
        "let": {"r": "blockIdx.x * 32 + threadIdx.x", "c": "blockIdx.y"},
        "guard": "r < m",
        "accesses": [{"op": "load", "array": "a", "at": ["r", "c"]},
                     {"op": "store", "array": "a", "at": ["c", "r"]}]})
    assert len(analysis.kernel_for(p).closed_forms) == 2
    same_result(p)


def test_non_affine_accesses_use_the_lane_path():
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [2], "block": [64]},
        "arrays": {"x": {"dtype": "float32", "length": 512, "values": {"kind": "arange"}}},
        "accesses": [{"name": "div", "op": "load", "array": "x", "index": "threadIdx.x / 2"},
                     {"name": "gather", "op": "load", "array": "x", "index": "x[threadIdx.x]"},
                     {"name": "loop", "op": "load", "array": "x", "index": "k",
                      "loops": [{"var": "k", "start": 0, "stop": 2}]},
                     {"name": "affine", "op": "load", "array": "x", "index": "2 * threadIdx.x"}]})
    assert list(analysis.kernel_for(p).closed_forms) == [3]
    same_result(p)


def test_range_errors_are_the_same_on_both_paths():
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [4], "block": [64]},
        "arrays": {"x": {"dtype": "float32", "length": 200}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"}, "guard": "i < 230",
        "accesses": [{"op": "load", "array": "x", "index": "i"}]})
    with pytest.raises(PatternError) as fast:
        analyze(p)
    with pytest.raises(PatternError) as slow:
        lane_path_only(p)
    assert str(fast.value) == str(slow.value) == (
        "accesses[0].index: element index 200 outside [0, 200) at warp 6 lane 8")
