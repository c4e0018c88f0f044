"""Property: a CUDA kernel and the pattern file that says the same thing count the same."""

from __future__ import annotations

from dataclasses import asdict

from cuda_helpers import kernel_pattern
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model import analyze, pattern_from_dict


@settings(max_examples=30, deadline=None)
@given(stride=st.integers(0, 40), offset=st.integers(0, 64), limit=st.integers(0, 300),
       block=st.sampled_from([32, 48, 64, 96]), grid=st.integers(1, 4),
       dtype=st.sampled_from([("float", "float32"), ("double", "float64"),
                              ("float4", "float4"), ("char", "int8")]),
       trips=st.integers(0, 3))
def test_affine_kernel_matches_its_pattern(stride, offset, limit, block, grid, dtype, trips):
    ctype, dtype_name = dtype
    length = (block * grid) * (stride + 1) + offset + 8 * trips + 8
    arrays = {"a": {"dtype": dtype_name, "length": length}}
    params = {"s": stride, "o": offset, "g": limit, "r": trips}
    code = f"""
    __global__ void k(const {ctype}* a, int s, int o, int g, int r) {{
        int t = blockIdx.x * blockDim.x + threadIdx.x;
        if (t >= g) return;
        for (int j = 0; j < r; ++j)
            {{ {ctype} v = a[t * s + o + 8 * j]; }}
    }}"""
    cuda = analyze(kernel_pattern(code, arrays=arrays, params=params, grid=(grid,),
                                  block=(block,)))
    pattern = analyze(pattern_from_dict({
        "format": "sectorviz.pattern/1", "params": params,
        "launch": {"grid": [grid], "block": [block]}, "arrays": arrays,
        "let": {"t": "blockIdx.x * blockDim.x + threadIdx.x"}, "guard": "t < g",
        "accesses": [{"op": "load", "array": "a", "index": "t * s + o + 8 * j",
                      "loops": [{"var": "j", "start": 0, "stop": "r"}]}]}))
    assert asdict(cuda.totals) == asdict(pattern.totals)
