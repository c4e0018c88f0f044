"""Atom or red (sites.py, program.used_registers): an atomic whose old value has no use is
a reduction (Nsight's _op_red), also where a debug compile (-G) calls CUDA's atomicAdd out
of line and the callee returns the value to a caller that drops it; exch and cas have no
reduction form and stay atom; a used old value is an atom."""

from __future__ import annotations

import pytest
from ptx_helpers import DEBUG_FLAGS, FLAGS, analyze_compiled, inline_pattern, lines_with, needs_nvcc

KERNEL = """
__global__ void k(unsigned* a, unsigned* out) {
    atomicAdd(&a[threadIdx.x], 1u);
    atomicExch(&a[64 + threadIdx.x], 1u);
    out[threadIdx.x] = atomicAdd(&a[128 + threadIdx.x], 2u);
}
"""
ARRAYS = {"a": {"dtype": "uint32", "length": 256}, "out": {"dtype": "uint32", "length": 32}}


@needs_nvcc
@pytest.mark.parametrize("flags", [DEBUG_FLAGS, FLAGS], ids=["-G", "-O3"])
def test_an_atomic_whose_result_is_dropped_is_a_reduction(tmp_path, flags):
    pattern, compiled = inline_pattern(tmp_path, KERNEL, "k", ARRAYS, flags=flags)
    print("\n".join(lines_with(compiled.ptx, "atom", "red.", "call")))
    result, _ = analyze_compiled(pattern, compiled)
    # one warp, 4-byte words at 4i: each atomic 1 request of 4 sectors
    assert [(s.line, s.op, s.requests, s.sectors) for s in result.instructions] == \
        [(3, "red", 1, 4), (4, "atom", 1, 4), (5, "atom", 1, 4), (5, "store", 1, 4)]
