"""Review: C semantics of `/` and `%` at the edges of signed 64-bit values."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model.expr import evaluate, parse
from sectorviz.model.kernel import ConstantScope

INT64_MIN = -2**63
INT64_MAX = 2**63 - 1


def value(text: str) -> int:
    return int(evaluate(parse(text), ConstantScope({}), np.bool_(True)))


def c_div(a: int, b: int) -> int:
    """C's truncating division, wrapped to 64 bits."""
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return (q + 2**63) % 2**64 - 2**63


def c_mod(a: int, b: int) -> int:
    return (a - c_div(a, b) * b + 2**63) % 2**64 - 2**63


MIN = "(-9223372036854775807 - 1)"


@pytest.mark.parametrize("text, expected", [
    (f"{MIN} / 2", -2**62),
    (f"{MIN} / 3", -3074457345618258602),
    (f"{MIN} % 3", -2),
    (f"{MIN} / -2", 2**62),
    (f"5 / {MIN}", 0),
    (f"5 % {MIN}", 5),
    (f"-5 % {MIN}", -5),
    (f"{MIN} / {MIN}", 1),
    (f"{MIN} % {MIN}", 0),
    ("(1 << 63) / 4", -2**61),
    ("-7 / 2", -3), ("-7 % 2", -1), ("7 / -2", -3), ("7 % -2", 1),
])
def test_truncating_division_at_int64_min(text, expected):
    assert value(text) == expected


big = st.integers(INT64_MIN, INT64_MAX)


@settings(max_examples=300, deadline=None)
@given(a=big, b=big.filter(lambda b: b != 0))
def test_division_matches_c(a, b):
    if a == INT64_MIN and b == -1:
        return  # undefined in C
    assert value(f"({a}) / ({b})") == c_div(a, b)
    assert value(f"({a}) % ({b})") == c_mod(a, b)
