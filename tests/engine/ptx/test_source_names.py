"""A compiled instruction's short name: the expression of its array on its source line,
where exactly one fits the access (source_names.expression_for)."""

import pytest

from sectorviz.engine.ptx.source_names import expression_for

TILED = "            sum += As[ty][k] * Bs[k][tx];"


@pytest.mark.parametrize("line, array, op, expected", [
    (TILED, "As", "load", "As[ty][k]"),
    (TILED, "Bs", "load", "Bs[k][tx]"),
    ("        As[ty][tx] = A[row * n + k0 + tx];", "As", "store", "As[ty][tx]"),
    ("        As[ty][tx] = A[row * n + k0 + tx];", "A", "load", "A[row * n + k0 + tx]"),
    ("    a[i] = a[i] + 1;", "a", "load", "a[i]"),  # read on the right
    ("    a[i] = a[i] + 1;", "a", "store", "a[i]"),  # written on the left
    ("    c[i] += d[i];", "c", "load", "c[i]"),  # a compound assignment reads its target
    ("  atomicAdd(&bins[data[i]], 1);", "bins", "red", "bins[data[i]]"),
    ("  atomicAdd(&bins[data[i]], 1);", "data", "load", "data[i]"),  # inside another
    ("  p[i].x = q[i] ->  y;", "p", "store", "p[i].x"),  # a member after the subscripts
    ("  out[ i ]\t=  in[i];", "out", "store", "out[ i ]"),  # whitespace collapsed
])
def test_the_one_expression_that_fits(line, array, op, expected):
    assert expression_for(line, array, op) == expected


@pytest.mark.parametrize("line, array, op", [
    ("    c[i] = a[i + 1] + a[i];", "a", "load"),  # two reads: which one is not known
    ("    c[i] = a[i];", "b", "load"),  # the array is not on the line
    ("    x = *(p + i);", "p", "load"),  # no subscript to name
    ("    q = a[i", "a", "load"),  # unclosed on this line
    ("    ab[i] = 1;", "a", "store"),  # a longer name is not the array
    ("    s.a[i] = 1;", "a", "store"),  # a member of another object is not the array
])
def test_none_where_no_one_expression_fits(line, array, op):
    assert expression_for(line, array, op) is None
