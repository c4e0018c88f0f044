"""C type names, as host code writes them and the compiled code's demangled names spell them
(`unsigned char`, `size_t`, `__half`, `float4`), -> the pattern's dtype vocabulary
(model.pattern.DTYPE_BYTES) and their bytes on the device (LP64: long and size_t are 8)."""

from __future__ import annotations

from ..model.pattern import DTYPE_BYTES

SCALAR_DTYPES: dict[str, str] = {
    "bool": "uint8", "char": "int8", "signed char": "int8", "unsigned char": "uint8",
    "short": "int16", "unsigned short": "uint16", "int": "int32", "unsigned int": "uint32",
    "signed": "int32", "unsigned": "uint32",
    "long": "int64", "unsigned long": "uint64", "long long": "int64",
    "unsigned long long": "uint64",
    "uint": "uint32", "uchar": "uint8", "ushort": "uint16", "ulong": "uint64",
    "size_t": "uint64", "ssize_t": "int64", "ptrdiff_t": "int64", "intptr_t": "int64",
    "uintptr_t": "uint64", "intmax_t": "int64", "uintmax_t": "uint64", "clock_t": "int64",
    "half": "float16", "__half": "float16", "__nv_bfloat16": "bfloat16",
    "nv_bfloat16": "bfloat16", "float": "float32", "double": "float64",
} | {f"{sign}int{kind}{bits}_t": f"{sign}int{bits}"  # <cstdint>
     for sign in ("", "u") for kind in ("", "_least", "_fast") for bits in (8, 16, 32, 64)}
# CUDA's vector types are pattern dtypes by their own names (float4: 16 bytes)
VECTOR_DTYPES: dict[str, str] = {name: name for name in DTYPE_BYTES
                                 if name not in SCALAR_DTYPES.values()} | {
    "nv_bfloat162": "__nv_bfloat162"}


def plain_name(type_name: str) -> str:
    """`const unsigned  int` -> `unsigned int`; `std::size_t` -> `size_t` (const, volatile,
    `std::` and repeated spaces dropped)."""
    name = " ".join(w for w in type_name.split() if w not in ("const", "volatile"))
    return name[len("std::"):] if name.startswith("std::") else name


def pattern_dtype(type_name: str) -> str | None:
    """A scalar or vector C type's name -> its pattern dtype (`unsigned char` -> uint8,
    `__half` -> float16, `float4` -> float4); None for any other type (a struct, `T`)."""
    name = plain_name(type_name)
    return SCALAR_DTYPES.get(name) or VECTOR_DTYPES.get(name)


def type_bytes(type_name: str) -> int | None:
    """The bytes of a scalar or vector C type (`float4`: 16); None for any other type."""
    dtype = pattern_dtype(type_name)
    return None if dtype is None else DTYPE_BYTES[dtype]


def is_integer(type_name: str) -> bool:
    """Whether `type_name` names a C integer type (bool and char included)."""
    return SCALAR_DTYPES.get(plain_name(type_name), "float").startswith(("int", "uint"))
