"""File-scope `__device__` variables are global memory: the pattern places each like a
pointer parameter's array (by the variable's name), and accesses count like any array's."""

from __future__ import annotations

import pytest
from cuda_helpers import run

from sectorviz.model.errors import PatternError

CODE = """__device__ float partial[256];
static __device__ unsigned int finished = 0;
__global__ void k(const float *in) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[(i * 3) % 256] = in[i];
    if (threadIdx.x % 32 == 0) atomicAdd(&finished, 1u);
    finished = 0;
}"""
ARRAYS = {"in": {"dtype": "float32", "length": 1024},
          "partial": {"dtype": "float32", "length": 256}, "finished": {"length": 1}}


def test_device_variables_are_global_arrays_named_by_the_pattern():
    analysis, kernel = run(CODE, arrays=ARRAYS, grid=(4,), block=(256,))
    assert [(i.name, i.op, i.array) for i in kernel.instructions] == [
        ("line 5: in[i]", "load", "in"), ("line 5: partial[(i * 3) % 256]", "store", "partial"),
        ("line 6: atomicAdd(&finished, 1u)", "red", "finished"),
        ("line 7: finished", "store", "finished")]
    per_warp = [len({(w * 32 + t) * 3 % 256 * 4 // 32 for t in range(32)}) for w in range(32)]
    assert [(s.requests, s.sectors) for s in analysis.instructions] == [
        (32, 128), (32, sum(per_warp)), (32, 32), (32, 32)]


@pytest.mark.parametrize("arrays, message", [
    ({"in": {"length": 1024}, "finished": {"length": 1}},
     "line 5, column 5: the __device__ variable 'partial' needs an entry in the pattern's "
     "arrays (256 x float)"),
    ({**ARRAYS, "partial": {"dtype": "float64", "length": 256}},
     "line 5, column 5: arrays.partial must hold the __device__ variable's 256 float "
     "(4 bytes each), not 256 of 8 bytes"),
])
def test_a_device_variable_the_pattern_does_not_place_is_refused_in_one_line(arrays, message):
    with pytest.raises(PatternError) as info:
        run(CODE, arrays=arrays)
    assert str(info.value) == message
