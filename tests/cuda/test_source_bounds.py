"""Issue 22, item 2 (the source's lines and terms bounded before parsing: tests/host/
test_preprocess.py): a counted loop whose iterations alone pass the work budget is refused
when it is sized, not iteration by iteration."""

from __future__ import annotations

import pytest
from cuda_helpers import kernel_pattern

from sectorviz.model import PatternError, analyze


@pytest.mark.parametrize("body", [
    "a[(threadIdx.x * i) % 1024] = 0;",  # not affine: the lane path iterates
    "if (i % 3 == 0) a[threadIdx.x] = 0;",  # a branch on the counter: iterated
])
def test_a_counted_loop_over_the_budget_is_refused_when_sized(body):
    code = ("__global__ void k(float *a) {\n    for (long long i = 0; i < (1LL << 62); i++) {"
            f"\n        {body}\n    }}\n}}\n")
    with pytest.raises(PatternError, match=r"^line 2, column 5: this loop asks for [\d,]+ "
                                           r"units of work .*, over the budget of"):
        analyze(kernel_pattern(code))


def test_a_closed_form_past_64_bit_counts_is_refused_not_wrapped():
    code = ("__global__ void k(float *a) {\n"
            "    for (long long i = 0; i < (1LL << 62); i++) a[threadIdx.x] = 0;\n}\n")
    with pytest.raises(PatternError, match="^kernel: 4,611,686,018,427,387,904 executions of an "
                                           "access by each warp: its sector counts would pass"):
        analyze(kernel_pattern(code))
