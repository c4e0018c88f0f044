"""Issue 22, item 5: a block's __shared__ memory within sm_90's limits (48 KiB of static
variables, 227 KiB with the dynamic region), refused with the figure otherwise."""

from __future__ import annotations

import pytest
from cuda_helpers import kernel_pattern

from sectorviz.model import PatternError, pattern_from_dict
from sectorviz.model.frontend import kernel_for


def shared_kernel(decls: str, **kernel):
    doc = kernel_pattern("__global__ void k(float *a) {\n" + decls +
                         "    a[threadIdx.x] = 0;\n}\n").to_dict()
    doc["kernel"].update(kernel)
    return pattern_from_dict(doc)


@pytest.mark.parametrize("decls, message", [
    ("    __shared__ float s[1LL << 38];\n",
     "line 2, column 22: the __shared__ variables total 1,099,511,627,776 bytes; a block's "
     "static shared memory is at most 49,152 (48 KiB)"),
    ("    __shared__ float s[12288];\n    __shared__ char c[1];\n",
     "line 3, column 21: the __shared__ variables total 49,153 bytes"),
    ("    __shared__ float s[8192];\n    extern __shared__ float d[];\n",
     "line 3, column 29: the block's shared memory totals 233,472 bytes (32,768 static, "
     "200,704 dynamic); sm_90 allows at most 232,448 (227 KiB) per block"),
])
def test_shared_memory_past_the_limits_is_refused(decls, message):
    with pytest.raises(PatternError) as info:
        kernel_for(shared_kernel(decls, dynamic_shared_bytes=200_704))
    assert str(info.value).startswith(message)


def test_shared_memory_at_the_limits_is_accepted():
    kernel = kernel_for(shared_kernel("    __shared__ float s[12288];\n"
                                      "    extern __shared__ float d[];\n",
                                      dynamic_shared_bytes=227 * 1024 - 48 * 1024))
    assert kernel.program.shared == {"s": (0, 49152), "d": (49152, 183296)}
