"""File-scope `__device__` variables read as written (the debug compile): global memory,
placed like a pointer parameter's array (by the variable's name), accesses counted like any
array's. Ported from the C++ interpreter's tests (issue 29)."""

from __future__ import annotations

import shutil

import pytest
from oracles import run

from sectorviz.model.errors import PatternError

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

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
PER_WARP = [len({(w * 32 + t) * 3 % 256 * 4 // 32 for t in range(32)}) for w in range(32)]
# 32 warps: in[i] 4 sectors each; partial at stride 3 floats (384 bytes: 12 sectors); one
# lane's atomic and the store of `finished` (4 bytes, 1 sector)
EXPECTED = [(32, 128), (32, sum(PER_WARP)), (32, 32), (32, 32)]


def test_device_variables_are_global_arrays_named_by_the_pattern():
    analysis, kernel = run(CODE, arrays=ARRAYS, grid=(4,), block=(256,))
    assert [(i.line, i.op, i.array) for i in kernel.instructions] == [
        (5, "load", "in"), (5, "store", "partial"), (6, "red", "finished"),
        (7, "store", "finished")]
    assert [(s.requests, s.sectors) for s in analysis.instructions] == EXPECTED


def test_a_device_variable_the_pattern_does_not_place_is_placed_by_the_engine():
    """The interpreter refused a __device__ variable the pattern's arrays leave out; the PTX
    engine places the module's globals itself (after the pattern's arrays), and counts the
    same."""
    arrays = {"in": {"length": 1024}, "finished": {"length": 1}}
    analysis, kernel = run(CODE, arrays=arrays, grid=(4,), block=(256,))
    assert kernel.instructions[1].array == "partial"
    assert [(s.requests, s.sectors) for s in analysis.instructions] == EXPECTED


def test_a_device_variable_of_another_size_is_refused_in_one_line():
    with pytest.raises(PatternError) as info:
        run(CODE, arrays={**ARRAYS, "partial": {"dtype": "float64", "length": 256}})
    assert str(info.value) == ("arrays.partial: 256 elements of 8 bytes, but the kernel's "
                               "partial holds 1024 bytes")
