"""Explicit specializations (`template <> struct S<int> {...}`, `template <> R f<int>(...)`,
`template <> __global__ void k<double>(...)`): the specialization for the instantiation's
arguments replaces the primary template, others keep the primary; partial specializations and
specializations that leave their arguments to deduction are refused in one line."""

from __future__ import annotations

import pytest
from cuda_helpers import elements, run

from sectorviz.model.errors import PatternError

BIG = {"a": {"dtype": "float32", "length": 1 << 14}}
CLASSES = """
template <typename T, int N = 2> struct Stride { __device__ int of(int t) { return t * N; } };
template <> struct Stride<int> { __device__ int of(int t) { return 1000 + t; } };
template <> struct Stride<float, 3> { static constexpr int base = 2000;
                                      __device__ int of(int t) { return base + 5 * t; } };
template <class T, int N> __global__ void k(float *a) {
    Stride<T, N> s;
    a[s.of(threadIdx.x)] = 0;
}
"""


@pytest.mark.parametrize("function, element", [
    ("k<int, 2>", lambda t: 1000 + t),  # Stride<int> is Stride<int, 2>: the default counts
    ("k<int, 4>", lambda t: 4 * t),
    ("k<float, 3>", lambda t: 2000 + 5 * t),
    ("k<float, 2>", lambda t: 2 * t),
    ("k<double, 3>", lambda t: 3 * t),
])
def test_a_class_specialization_replaces_the_primary_for_its_arguments_only(function, element):
    got = elements(CLASSES, function=function, arrays=BIG)
    assert got == [("line 8: a[s.of(threadIdx.x)]", [element(t) for t in range(32)])]


FUNCTIONS = """
template <typename T> __device__ int lane_of(int t) { return t; }
template <> __device__ int lane_of<double>(int t) { return 31 - t; }
template <typename T> __global__ void k(T *a) { a[lane_of<T>(threadIdx.x)] = 0; }
template <> __global__ void k<short>(short *a) { a[64 * threadIdx.x] = 0; }
"""


@pytest.mark.parametrize("function, dtype, requests_sectors", [
    ("k<float>", "float32", (1, 4)),    # 32 x 4 bytes in a row
    ("k<double>", "float64", (1, 8)),   # 32 x 8 bytes, reversed: still 8 sectors
    ("k<short>", "int16", (1, 32)),     # the kernel's own specialization: 128-byte stride
])
def test_function_and_kernel_specializations_are_called_for_their_arguments(
        function, dtype, requests_sectors):
    a, kernel = run(FUNCTIONS, function=function,
                    arrays={"a": {"dtype": dtype, "length": 4096}})
    assert [(s.requests, s.sectors) for s in a.instructions] == [requests_sectors]
    lanes = elements(FUNCTIONS, function=function, arrays={"a": {"dtype": dtype,
                                                                 "length": 4096}})[0][1]
    assert lanes == {"k<float>": list(range(32)), "k<double>": list(range(31, -1, -1)),
                     "k<short>": [64 * t for t in range(32)]}[function]


@pytest.mark.parametrize("code, message", [
    ("template <typename T, int N> struct S { __device__ int at() { return N; } };\n"
     "template <int N> struct S<float, N> { __device__ int at() { return 2 * N; } };\n"
     "__global__ void k(float *a) { S<float, 3> s; a[s.at()] = 0; }",
     "line 2, column 18: a partial specialization of the class template 'S' is outside"),
    ("template <typename T> __device__ int f(T x) { return 1; }\n"
     "template <> __device__ int f(int x) { return 2; }\n"
     "__global__ void k(float *a) { a[f(3)] = 0; }",
     "line 2, column 13: a specialization of 'f' that does not name its template arguments "
     "(f<...>) is outside the subset"),
])
def test_specializations_outside_the_subset_are_refused_in_one_line(code, message):
    with pytest.raises(PatternError) as info:
        run(code, arrays=BIG)
    assert message in str(info.value) and "\n" not in str(info.value)
