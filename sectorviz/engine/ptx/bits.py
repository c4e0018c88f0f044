"""PTX types <-> register bits: a register holds its value's bits zero-extended in a uint64
array (a predicate, a bool array); an instruction reads them as numpy values of its type and
writes results back as bits. Floats round to nearest even when narrowed (f32 is computed in
float32, f16 in float16, bf16 in float32 rounded to 8 bits of mantissa)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

INT_DTYPES: dict[str, type[np.integer[Any]]] = {
              "u8": np.uint8, "s8": np.int8, "b8": np.uint8, "u16": np.uint16,
              "s16": np.int16, "b16": np.uint16, "u32": np.uint32, "s32": np.int32,
              "b32": np.uint32, "u64": np.uint64, "s64": np.int64, "b64": np.uint64}
FLOATS = ("f16", "bf16", "f32", "f64")
WIDTH = {t: np.dtype(d).itemsize for t, d in INT_DTYPES.items()} | {
    "f16": 2, "bf16": 2, "f32": 4, "f64": 8, "f16x2": 4, "bf16x2": 4, "pred": 1, "b128": 16}
U64 = np.uint64
# an operand's values on the lanes: an array over them, or one numpy scalar (an immediate)
LaneValues = Any


def mask_of(nbytes: int) -> np.uint64:
    mask: np.uint64 = U64((1 << (8 * nbytes)) - 1)
    return mask


def is_signed(t: str) -> bool:
    return t.startswith("s")


def view(bits: np.ndarray, t: str) -> np.ndarray:
    """Register bits -> values of PTX type t (ints wrap to their width)."""
    out: np.ndarray
    if t in INT_DTYPES:
        d = np.dtype(INT_DTYPES[t])
        out = bits.astype(np.dtype(f"u{d.itemsize}")).view(d)
    elif t == "f32":
        out = bits.astype(np.uint32).view(np.float32)
    elif t == "f64":
        out = np.ascontiguousarray(bits, dtype=U64).view(np.float64)
    elif t == "f16":
        out = bits.astype(np.uint16).view(np.float16)
    elif t == "bf16":
        out = (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)
    else:
        raise KeyError(t)
    return out


def to_bits(given: ArrayLike, t: str) -> np.ndarray:
    """Values (numpy, any numeric dtype) -> bits of PTX type t, zero-extended to uint64;
    floats are rounded to t's precision (to nearest even)."""
    values = np.asarray(given)
    out: np.ndarray
    if t in INT_DTYPES:
        if values.dtype.kind == "f":
            values = values.astype(np.int64)
        out = values.astype(U64) & mask_of(WIDTH[t])
    elif t == "f32":
        out = values.astype(np.float32).view(np.uint32).astype(U64)
    elif t == "f64":
        out = values.astype(np.float64).view(U64)
    elif t == "f16":
        out = values.astype(np.float16).view(np.uint16).astype(U64)
    elif t == "bf16":
        out = bf16_bits(values.astype(np.float32)).astype(U64)
    else:
        raise KeyError(t)
    return out


def bf16_bits(f: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits (uint32), rounded to nearest even; NaN stays a quiet NaN."""
    u = np.ascontiguousarray(f, dtype=np.float32).view(np.uint32)
    rounded = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    bits: np.ndarray = np.where(np.isnan(f), np.uint32(0x7FC0), rounded & np.uint32(0xFFFF))
    return bits


def immediate(value: int, ftype: str, t: str) -> Any:
    """A literal (an integer, or 0f / 0d bits) -> a numpy scalar of type t (Any: a scalar or,
    for a converted f32 literal, a 0-d array)."""
    if ftype == "f32":
        f = np.array([value], dtype=np.uint32).view(np.float32)[0]
        return f if t == "f32" else np.float64(f) if t == "f64" else view(to_bits(f, t), t)
    if ftype == "f64":
        f = np.array([value], dtype=U64).view(np.float64)[0]
        return f if t == "f64" else view(to_bits(np.array(f), t).reshape(1), t)[0]
    if t in FLOATS:
        return view(np.array([value & 0xFFFFFFFFFFFFFFFF], dtype=U64), t)[0] if t != "f64" \
            else np.array([value & 0xFFFFFFFFFFFFFFFF], dtype=U64).view(np.float64)[0]
    d = np.dtype(INT_DTYPES.get(t, np.uint64))
    return np.array([value & ((1 << (8 * d.itemsize)) - 1)],
                    dtype=np.dtype(f"u{d.itemsize}")).view(d)[0]


ELEMENT_TYPES = {"int8": "s8", "uint8": "u8", "int16": "s16", "uint16": "u16", "int32": "s32",
                 "uint32": "u32", "int64": "s64", "uint64": "u64", "float16": "f16",
                 "bfloat16": "bf16", "float32": "f32", "float64": "f64"}


def element_bits(values: np.ndarray, dtype: str) -> np.ndarray:
    """A pattern array's element values (int64) -> the bits its scalar dtype stores them as
    (a float array holds the values as floats)."""
    t = ELEMENT_TYPES[dtype]
    if t in FLOATS:
        return to_bits(values.astype(np.float64), t)
    return to_bits(values, t)


SCALARS = {"char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16",
           "int": "int32", "uint": "uint32", "long": "int64", "ulong": "uint64",
           "longlong": "int64", "ulonglong": "uint64", "float": "float32", "double": "float64",
           "half2": "float16", "__half2": "float16", "__nv_bfloat162": "bfloat16"}


def scalar_of(dtype: str | None) -> tuple[str, int] | None:
    """A pattern dtype -> (scalar dtype, bytes) its elements are made of: float4 -> float32;
    None for raw bytes ("bytes:k")."""
    if dtype in ELEMENT_TYPES:
        scalar = dtype
    elif dtype in SCALARS:
        scalar = SCALARS[dtype]
    elif dtype and dtype[-1] in "1234" and dtype[:-1] in SCALARS:
        scalar = SCALARS[dtype[:-1]]
    else:
        return None
    return scalar, WIDTH[ELEMENT_TYPES[scalar]]
