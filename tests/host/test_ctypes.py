"""C type names (as host code and demangled entry names write them) -> pattern dtypes and
bytes (host/ctypes.py)."""

import pytest

from sectorviz.host.ctypes import is_integer, pattern_dtype, type_bytes


@pytest.mark.parametrize("name, dtype, size", [
    ("unsigned char", "uint8", 1), ("const unsigned  char", "uint8", 1),
    ("signed char", "int8", 1), ("bool", "uint8", 1), ("uint8_t", "uint8", 1),
    ("__half", "float16", 2), ("half", "float16", 2), ("__nv_bfloat16", "bfloat16", 2),
    ("float", "float32", 4), ("unsigned", "uint32", 4), ("std::size_t", "uint64", 8),
    ("long long", "int64", 8), ("double", "float64", 8),
    ("float4", "float4", 16), ("int2", "int2", 8), ("double3", "double3", 24),
    ("__half2", "__half2", 4), ("nv_bfloat162", "__nv_bfloat162", 4),
])
def test_scalar_and_vector_names_take_pattern_dtypes(name, dtype, size):
    """float4: 4 components of 4 bytes; int2: 2 x 4; double3: 3 x 8; __half2: 2 x 2."""
    assert (pattern_dtype(name), type_bytes(name)) == (dtype, size)


@pytest.mark.parametrize("name", ["Particle", "ns::Cell", "T", "void", "float*",
                                  "my_constant_t"])
def test_other_names_have_no_dtype(name):
    assert pattern_dtype(name) is None and type_bytes(name) is None


def test_integer_names():
    assert [is_integer(n) for n in ("int", "const size_t", "bool", "float", "float4",
                                    "Particle")] == [True, True, True, False, False, False]
