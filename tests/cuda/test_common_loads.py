"""Identical loads of one statement are one load instruction (common_loads's rule); loads
that an effect, a branch or another statement keeps apart stay separate instructions."""

from __future__ import annotations

from cuda_helpers import elements, run
from hypothesis import given, settings
from hypothesis import strategies as st

ARRAYS = {"x": {"dtype": "float32", "length": 256, "values": {"kind": "arange"}},
          "idx": {"dtype": "int32", "length": 256, "values": {"kind": "expr",
                                                             "expr": "(i * 7) % 64"}},
          "y": {"dtype": "float32", "length": 256}}
HEAD = "__global__ void k(float *x, const int *idx, float *y) {\n  int t = threadIdx.x;\n"
TERMS = ["x[t]", "x[t + 1]", "x[2 * t]", "x[idx[t]]", "idx[t]", "x[t]"]


def loads(body: str) -> list[str]:
    _, kernel = run(HEAD + body + "\n}", arrays=ARRAYS)
    return [ins.name for ins in kernel.instructions if ins.op == "load"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(TERMS), min_size=1, max_size=4),  # float32-exact products
       st.lists(st.sampled_from(["+", "*", "-"]), min_size=3, max_size=3),
       st.booleans())
def test_each_distinct_read_of_a_statement_is_one_load(terms, ops, declare):
    expr = terms[0] + "".join(f" {op} {t}" for op, t in zip(ops, terms[1:]))
    body = f"float v = {expr};\n  y[t] = v;" if declare else f"y[t] = {expr};"
    a, kernel = run(HEAD + body + "\n}", arrays=ARRAYS)
    distinct = set(terms) | ({"idx[t]"} if "x[idx[t]]" in terms else set())
    names = [ins.name.split(": ", 1)[1].split(" (")[0] for ins in kernel.instructions
             if ins.op == "load"]
    assert sorted(names) == sorted(distinct)
    value = {"x[t]": lambda i: i, "x[t + 1]": lambda i: i + 1, "x[2 * t]": lambda i: 2 * i,
             "idx[t]": lambda i: (i * 7) % 64, "x[idx[t]]": lambda i: (i * 7) % 64}
    got = elements(HEAD + body.replace("y[t] = v", "y[(int)v & 255] = 0")
                   .replace("y[t] = " + expr, "y[(int)(" + expr + ") & 255] = 0") + "\n}",
                   arrays=ARRAYS)
    expected = [c_value([value[term](i) for term in terms], ops) & 255 for i in range(32)]
    assert got[-1][1] == expected


def c_value(values: list[int], ops: list[str]) -> int:
    """values[0] op values[1] op ... with C's precedence (* before + and -)."""
    sums, signs = [values[0]], []
    for op, v in zip(ops, values[1:]):
        if op == "*":
            sums[-1] *= v
        else:
            sums.append(v)
            signs.append(op)
    total = sums[0]
    for op, v in zip(signs, sums[1:]):
        total = total + v if op == "+" else total - v
    return total


def test_a_load_in_the_target_and_the_value_is_one_load_and_the_report_says_so():
    a, kernel = run(HEAD + "  y[idx[t]] = x[idx[t]] * x[idx[t]];\n}", arrays=ARRAYS)
    assert [(ins.name, ins.op) for ins in kernel.instructions] == [
        ("line 3: idx[t]", "load"), ("line 3: x[idx[t]]", "load"), ("line 3: y[idx[t]]", "store")]
    assert kernel.instructions[0].column == 5  # the first read in evaluation order: the target's
    assert [s.requests for s in a.instructions] == [1, 1, 1]
    assert "common-subexpression elimination" in a.boundaries[0].assumption
    plain, _ = run(HEAD + "  y[t] = x[t];\n}", arrays=ARRAYS)
    assert "common-subexpression" not in plain.boundaries[0].assumption


def test_effects_branches_and_other_statements_keep_loads_apart():
    for body, n in [("y[t] = x[t] + atomicAdd(&y[0], 1.0f) + x[t];", 2),
                    ("y[t] = (t > 3 && x[t] > 0) ? x[t] : 0.0f;", 2),
                    ("y[t] = x[t] + (y[1] = 2.0f) + x[t];", 2),
                    ("float a = x[t];\n  float b = x[t];\n  y[t] = a + b;", 2),
                    ("y[t] = x[t] + twice(x, t) + x[t];", 3),
                    ("y[t] = x[t] + __shfl_sync(0xffffffff, x[t], 0);", 2)]:
        code = "__device__ float twice(float *p, int i) { return 2 * p[i]; }\n" + HEAD
        _, kernel = run(code + body + "\n}", arrays=ARRAYS)
        assert [ins.op for ins in kernel.instructions].count("load") == n, body


def test_a_file_that_declares_anything_volatile_keeps_every_load():
    code = HEAD + "  volatile float *v = x;\n  y[t] = v[t] * v[t] + x[t] * x[t];\n}"
    _, kernel = run(code, arrays=ARRAYS)
    assert [ins.op for ins in kernel.instructions].count("load") == 4
