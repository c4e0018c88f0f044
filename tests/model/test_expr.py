"""C integer expressions: parsing, C semantics, lane masks, and errors with columns."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sectorviz.model.expr import ExprError, evaluate, parse


class Scope:
    shape = (1, 4)

    def __init__(self, **names):
        self.names = {k: np.asarray(v, dtype=np.int64) for k, v in names.items()}
        self.arrays = {"idx": np.array([5, 6, 7], dtype=np.int64)}

    def lookup(self, name, mask, col):
        if name not in self.names:
            raise ExprError(f"unknown name {name!r}", col)
        return self.names[name]

    def array_values(self, name, col):
        return self.arrays[name]


ALL = np.ones((1, 4), dtype=bool)


def ev(text, **names):
    return evaluate(parse(text), Scope(**names), ALL).tolist()


@pytest.mark.parametrize("text, value", [
    ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("-7 / 2", -3), ("-7 % 2", -1), ("7 / -2", -3),
    ("7 % -2", 1), ("1 << 4 + 1", 32), ("0x10 | 1", 17), ("10u + 2UL", 12), ("~0", -1),
    ("!5", 0), ("!0", 1), ("3 < 4 == 1", 1), ("1 ? 2 : 3", 2), ("0 ? 2 : 0 ? 3 : 4", 4),
    ("min(3, -2) + max(1, 9) + abs(-4)", 11), ("6 & 3 ^ 1", 3), ("2 && 0 || 5", 1),
    ("-9223372036854775807 - 1", -2**63), ("0xffffffffffffffff", -1), ("- -3", 3),
    ("100 >> 2", 25), ("idx[1] * 2", 12),
])
def test_c_semantics(text, value):
    assert evaluate(parse(text), Scope(), np.bool_(True)).tolist() == value


def test_vectorized_over_lanes():
    assert ev("x * 4 + 1", x=[[0, 1, 2, 3]]) == [[1, 5, 9, 13]]


@given(st.integers(-10**6, 10**6), st.integers(-1000, 1000).filter(lambda b: b != 0))
def test_division_truncates_toward_zero(a, b):
    q = int(a / b) if abs(a) < 2**52 else None
    assert ev("a / b", a=[[a] * 4], b=[[b] * 4])[0][0] == q
    assert ev("a % b", a=[[a] * 4], b=[[b] * 4])[0][0] == a - q * b


def test_short_circuit_protects_division_and_subscripts():
    n = [[0, 1, 0, 2]]
    assert ev("n != 0 ? 8 / n : 0", n=n) == [[0, 8, 0, 4]]
    assert ev("n && 8 / n", n=n) == [[0, 1, 0, 1]]
    assert ev("n == 0 || 8 / n", n=n) == [[1, 1, 1, 1]]
    assert ev("k < 3 && idx[k] > 0", k=[[0, 2, 3, 9]]) == [[1, 1, 0, 0]]


def test_masked_lanes_do_not_raise():
    tree = parse("8 / n")
    mask = np.array([[True, False, True, False]])
    assert evaluate(tree, Scope(n=[[1, 0, 2, 0]]), mask).tolist()[0][::2] == [8, 4]


@pytest.mark.parametrize("text, column, message", [
    ("1 +", 4, "expected a value"),
    ("(1 + 2", 7, r"expected '\)'"),
    ("a $ b", 3, "unexpected character"),
    ("1 2", 3, "after a complete expression"),
    ("foo(1)", 1, "unknown function"),
    ("min(1)", 1, "takes 2"),
    ("012", 1, "octal"),
    ("0x1ffffffffffffffff", 1, "64 bits"),
    ("", 1, "empty"),
    ("__import__('os')", 12, "unexpected character"),
    ("system(1)", 1, "unknown function"),
])
def test_parse_errors_name_the_column(text, column, message):
    with pytest.raises(ExprError, match=message) as info:
        parse(text)
    assert info.value.column == column


@pytest.mark.parametrize("text, message", [
    ("8 / n", "division by zero"), ("8 % n", "division by zero"),
    ("1 << 64", "shift count"), ("idx[5]", "outside"), ("idx[0 - 1]", "outside"),
])
def test_evaluation_errors(text, message):
    with pytest.raises(ExprError, match=message):
        ev(text, n=[[1, 0, 1, 1]])


def test_deep_nesting_is_refused_not_crashed():
    with pytest.raises(ExprError, match="nested"):
        parse("(" * 500 + "1" + ")" * 500)
