"""Issue 22, item 2: a source's lines and terms are bounded before tree-sitter parses it,
and a counted loop whose iterations alone pass the work budget is refused when it is sized,
not iteration by iteration."""

from __future__ import annotations

import pytest
from cuda_helpers import kernel_pattern

from sectorviz.host import preprocess as pre
from sectorviz.model import PatternError, analyze
from sectorviz.model.files import pattern_roots


def test_a_line_over_the_limit_is_refused_before_parsing():
    line = "int x = " + "1 + " * (pre.MAX_LINE_CHARS // 4) + "1;"
    with pytest.raises(PatternError, match=f"^line 2: a line of {len(line):,} characters; at "
                                           "most 65,536 are read$"):
        pre.preprocess("\n" + line + "\n", None, pattern_roots("."))


def test_terms_over_the_limit_are_refused(monkeypatch):
    monkeypatch.setattr(pre, "MAX_SOURCE_TERMS", 50)
    text = "int x = 1;\n" * 5 + "int y = " + " + ".join(["1"] * 30) + ";\n"
    with pytest.raises(PatternError, match="^line 6: the source and its includes hold over 50 "
                                           "terms"):
        pre.preprocess(text, None, pattern_roots("."))
    pre.preprocess("int x = 1;\n" * 5, None, pattern_roots("."))  # 25 terms: fine


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
