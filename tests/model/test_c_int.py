"""C's integer division: truncation toward zero, the dividend's sign for the remainder,
wrap-around at the type's limits, against Python's exact integers."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sectorviz.model.c_int import c_divmod

DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64)


def c_reference(a: int, b: int, dtype) -> tuple[int, int]:
    """Exact C semantics, then wrapped to the dtype as the hardware wraps."""
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    r = a - q * b
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    wrap = lambda v: (v - int(info.min)) % span + int(info.min)  # noqa: E731
    return wrap(q), wrap(r)


@given(st.sampled_from(DTYPES), st.data())
def test_matches_c_on_every_integer_type(dtype, data):
    info = np.iinfo(dtype)
    values = st.integers(int(info.min), int(info.max))
    a = data.draw(st.lists(values, min_size=1, max_size=16))
    b = data.draw(st.lists(values.filter(bool), min_size=len(a), max_size=len(a)))
    q, r = c_divmod(np.array(a, dtype=dtype), np.array(b, dtype=dtype))
    assert q.dtype == dtype and r.dtype == dtype
    assert [(int(x), int(y)) for x, y in zip(q, r)] == [c_reference(x, y, dtype)
                                                       for x, y in zip(a, b)]


def test_hand_cases():
    a = np.array([7, -7, 7, -7, -2**31], dtype=np.int32)
    b = np.array([2, 2, -2, -2, -1], dtype=np.int32)
    q, r = c_divmod(a, b)
    assert q.tolist() == [3, -3, -3, 3, -2**31]
    assert r.tolist() == [1, -1, 1, -1, 0]


def test_a_zero_divisor_leaves_the_dividend_and_no_warning():
    with np.errstate(all="raise"):
        q, r = c_divmod(np.array([5, 6]), np.array([0, 4]))
    assert q.tolist() == [5, 1] and r.tolist() == [0, 2]
