"""PTX arithmetic on numpy values of the instruction's type: integers wrap as C does (the
numpy dtype of the type), floats are computed in their own precision (f32 in float32; fused
multiply-adds in float64, then rounded once to the type), `.sat` clamps. Each function takes
the opcode's modifiers and typed operands and returns typed results, plus the lanes whose
result is undefined (a division by zero), or None."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...model.c_int import c_divmod
from .bits import FLOATS, INT_DTYPES, WIDTH, LaneValues, is_signed


def _wide(t: str) -> str:
    """A 16- or 32-bit integer type -> the type twice as wide, same signedness."""
    return t[0] + str(2 * int(t[1:]))


def _as(t: str) -> np.dtype[Any]:
    return np.dtype(INT_DTYPES[t]) if t in INT_DTYPES else np.dtype(
        {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.float32}[t])


def saturate_float(x: LaneValues, sat: bool) -> LaneValues:
    return np.clip(x, 0, 1) if sat else x


def saturate_int(exact: LaneValues, t: str) -> LaneValues:
    """An int64 / float result -> clamped to the range of integer type t."""
    info = np.iinfo(INT_DTYPES[t])
    return np.clip(exact, info.min, info.max).astype(INT_DTYPES[t])


def _mul_hi64(a: LaneValues, b: LaneValues, signed: bool) -> LaneValues:
    """High 64 bits of the 128-bit product of 64-bit integers."""
    ua, ub = a.astype(np.uint64), b.astype(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    a0, a1, b0, b1 = ua & m32, ua >> np.uint64(32), ub & m32, ub >> np.uint64(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> np.uint64(32)) + (p01 & m32) + (p10 & m32)
    hi = p11 + (p01 >> np.uint64(32)) + (p10 >> np.uint64(32)) + (mid >> np.uint64(32))
    if signed:
        hi = hi - np.where(a < 0, ub, 0).astype(np.uint64) - np.where(b < 0, ua, 0).astype(
            np.uint64)
        return hi.view(np.int64) if hi.dtype == np.uint64 else hi
    return hi


def multiply(mods: tuple[str, ...], t: str, a: LaneValues, b: LaneValues) -> LaneValues:
    """mul.lo / .hi / .wide for integers (result type: t, or twice as wide for .wide);
    floats: a * b rounded in t."""
    if t in FLOATS:
        return saturate_float((a * b).astype(_as(t)), "sat" in mods)
    if "wide" in mods:
        w = _wide(t)
        return a.astype(INT_DTYPES[w]) * b.astype(INT_DTYPES[w])
    if "hi" in mods:
        if WIDTH[t] == 8:
            return _mul_hi64(a, b, is_signed(t))
        w = _wide(t)
        return (a.astype(INT_DTYPES[w]) * b.astype(INT_DTYPES[w]) >> (8 * WIDTH[t])
                ).astype(INT_DTYPES[t])
    if "sat" in mods:
        return saturate_int(a.astype(np.int64) * b.astype(np.int64), t)
    return a * b


def multiply_add(mods: tuple[str, ...], t: str, a: LaneValues, b: LaneValues,
                 c: LaneValues) -> LaneValues:
    """mad / fma: integers as multiply() then + c (in the result type); floats fused: the
    product and sum in float64, rounded once to t."""
    if t in FLOATS:
        exact = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
        return saturate_float(exact.astype(_as(t)), "sat" in mods)
    if "hi" in mods and "sat" in mods:
        return saturate_int(multiply(mods, t, a, b).astype(np.int64) + c.astype(np.int64), t)
    p = multiply(mods, t, a, b)
    return p + c.astype(p.dtype)


def multiply24(op: str, mods: tuple[str, ...], t: str, a: LaneValues, b: LaneValues,
               c: LaneValues = None) -> LaneValues:
    """mul24 / mad24: the 48-bit product of the low 24 bits (sign-extended for .s32); .lo
    keeps its low 32 bits, .hi bits 16 to 47; mad24 adds c."""
    shift = np.int64(40)
    a24, b24 = ((np.asarray(x).astype(np.int64) << shift) >> shift if is_signed(t) else
                np.asarray(x).astype(np.int64) & 0xFFFFFF for x in (a, b))
    p = a24 * b24
    r = (p >> 16) if "hi" in mods else p
    if c is not None:
        r = r + np.asarray(c).astype(np.int64)
    return r.astype(INT_DTYPES[t])


def add(mods: tuple[str, ...], t: str, a: LaneValues, b: LaneValues) -> LaneValues:
    if t in FLOATS:
        return saturate_float((a + b).astype(_as(t)), "sat" in mods)
    if "sat" in mods:
        return saturate_int(a.astype(np.int64) + b.astype(np.int64), t)
    return a + b


def sub(mods: tuple[str, ...], t: str, a: LaneValues, b: LaneValues) -> LaneValues:
    if t in FLOATS:
        return saturate_float((a - b).astype(_as(t)), "sat" in mods)
    if "sat" in mods:
        return saturate_int(a.astype(np.int64) - b.astype(np.int64), t)
    return a - b


def divide(mods: tuple[str, ...], t: str, a: LaneValues,
           b: LaneValues) -> tuple[LaneValues, LaneValues]:
    """div: integers truncate toward zero (C); a zero divisor leaves the result undefined.
    Floats: a / b in t (approx and full divisions computed exactly)."""
    if t in FLOATS:
        return (a.astype(np.float64) / b.astype(np.float64)).astype(_as(t)), None
    quotient, _ = c_divmod(a, b.astype(a.dtype))
    return quotient, b == 0


def remainder(mods: tuple[str, ...], t: str, a: LaneValues,
              b: LaneValues) -> tuple[LaneValues, LaneValues]:
    """rem: the C remainder (the sign of the dividend); undefined for a zero divisor."""
    _, rest = c_divmod(a, b.astype(a.dtype))
    return rest, b == 0


def shift(op: str, t: str, a: LaneValues, b: LaneValues) -> LaneValues:
    """shl / shr: amounts past the width give 0 (or the sign, for a signed shr)."""
    width = 8 * WIDTH[t]
    n = np.minimum(np.asarray(b).astype(np.uint64), np.uint64(width))
    if op == "shl":
        u = a.astype(np.uint64) << np.minimum(n, np.uint64(63))
        return np.where(n >= width, 0, u).astype(a.dtype)
    if is_signed(t):
        return (a.astype(np.int64) >> np.minimum(n, np.uint64(63)).astype(np.int64)
                ).astype(a.dtype)
    u = a.astype(np.uint64) >> np.minimum(n, np.uint64(63))
    return np.where(n >= width, 0, u).astype(a.dtype)


def minmax(op: str, t: str, a: LaneValues, b: LaneValues, nan: bool = False) -> LaneValues:
    """min / max; for floats a NaN operand gives the other one (with .NaN, a NaN)."""
    if t in FLOATS:
        f = (np.minimum if op == "min" else np.maximum) if nan else (
            np.fmin if op == "min" else np.fmax)
        return f(a, b).astype(a.dtype)
    return (np.minimum if op == "min" else np.maximum)(a, b)


COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal,
           "hi": np.greater, "hs": np.greater_equal}


def compare(cmp: str, t: str, a: LaneValues, b: LaneValues) -> LaneValues:
    """setp's comparison: ordered (eq, lt, ...) are false on NaN; unordered (equ, ltu, ...)
    true on NaN; num / nan test for NaNs; lo / ls / hi / hs are the unsigned ones."""
    if cmp == "num":
        return ~(np.isnan(a) | np.isnan(b))
    if cmp == "nan":
        return np.isnan(a) | np.isnan(b)
    if t in FLOATS and cmp.endswith("u") and cmp[:-1] in COMPARE:
        return COMPARE[cmp[:-1]](a, b) | np.isnan(a) | np.isnan(b)
    with np.errstate(invalid="ignore"):
        return COMPARE[cmp](a, b)


def bit_count(op: str, t: str, a: LaneValues, shiftamt: bool = False) -> LaneValues:
    """popc / clz / brev / bfind of an integer -> uint32 (brev: same type); bfind.shiftamt:
    the left shift that moves the found bit to the top (width - 1 - its index)."""
    width = 8 * WIDTH[t]
    u = a.astype(np.uint64) & np.uint64((1 << width) - 1)
    if op == "popc":
        return np.bitwise_count(u).astype(np.uint32)
    if op == "brev":
        out = np.zeros_like(u)
        for k in range(width):
            out |= ((u >> np.uint64(k)) & np.uint64(1)) << np.uint64(width - 1 - k)
        return out.astype(a.dtype)
    top = np.full(u.shape, -1, dtype=np.int64)  # index of the highest 1 bit
    for k in range(width):
        top = np.where((u >> np.uint64(k)) & np.uint64(1), k, top)
    if op == "clz":
        return (width - 1 - top).astype(np.uint32)
    if is_signed(t):  # bfind.s: the highest bit that differs from the sign
        neg = a < 0
        flipped = np.where(neg, ~u & np.uint64((1 << width) - 1), u)
        top = np.full(u.shape, -1, dtype=np.int64)
        for k in range(width):
            top = np.where((flipped >> np.uint64(k)) & np.uint64(1), k, top)
    found = width - 1 - top if shiftamt else top
    return np.where(top < 0, 0xFFFFFFFF, found).astype(np.uint32)


def bit_field_extract(t: str, a: LaneValues, pos: LaneValues, length: LaneValues) -> LaneValues:
    """bfe: `length` bits of a from bit `pos` (both 0..255), sign-extended for a signed t."""
    width = 8 * WIDTH[t]
    pos = np.asarray(pos).astype(np.int64) & 0xFF
    length = np.asarray(length).astype(np.int64) & 0xFF
    u = a.astype(np.uint64)
    p = np.minimum(pos, 63).astype(np.uint64)
    n = np.minimum(length, width)
    field = (u >> p) & ((np.uint64(1) << n.astype(np.uint64)) - np.uint64(1))
    field = np.where(pos >= width, 0, field).astype(np.uint64)
    if is_signed(t):
        top = np.minimum(pos + n - 1, width - 1)
        sign = np.where(n == 0, 0, (u >> top.astype(np.uint64)) & np.uint64(1))
        fill = np.where(sign.astype(bool), ~((np.uint64(1) << n.astype(np.uint64))
                                              - np.uint64(1)), np.uint64(0))
        field = np.where(n >= 64, field, field | fill)
    return np.where(n == 0, 0, field).astype(a.dtype)


def bit_field_insert(t: str, a: LaneValues, b: LaneValues, pos: LaneValues,
                     length: LaneValues) -> LaneValues:
    """bfi: b with `length` bits from a inserted at bit `pos`."""
    width = 8 * WIDTH[t]
    pos = np.asarray(pos).astype(np.int64) & 0xFF
    length = np.asarray(length).astype(np.int64) & 0xFF
    n = np.minimum(length, np.maximum(width - pos, 0)).astype(np.uint64)
    p = np.minimum(pos, 63).astype(np.uint64)
    ones = np.where(n >= 64, ~np.uint64(0), (np.uint64(1) << n) - np.uint64(1))
    m = ones << p
    out = (b.astype(np.uint64) & ~m) | ((a.astype(np.uint64) << p) & m)
    return np.where(pos >= width, b.astype(np.uint64), out).astype(b.dtype)


def permute(mods: tuple[str, ...], a: LaneValues, b: LaneValues, c: LaneValues) -> LaneValues:
    """prmt.b32 (default mode): each result byte picks one of the 8 bytes of {b, a} by a
    nibble of c, its top bit replicating that byte's sign."""
    if any(m in mods for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")):
        raise NotImplementedError("prmt modes")
    src = (b.astype(np.uint64) << np.uint64(32)) | (a.astype(np.uint64) & np.uint64(0xFFFFFFFF))
    sel = np.asarray(c).astype(np.uint64)
    out = np.zeros(np.broadcast(src, sel).shape, dtype=np.uint64)
    for k in range(4):
        nib = (sel >> np.uint64(4 * k)) & np.uint64(0xF)
        byte = (src >> ((nib & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
        byte = np.where(nib & np.uint64(8), np.where(byte & np.uint64(0x80), 0xFF, 0), byte)
        out |= byte.astype(np.uint64) << np.uint64(8 * k)
    return out.astype(np.uint32)


def lop3(a: LaneValues, b: LaneValues, c: LaneValues, lut: LaneValues) -> LaneValues:
    """lop3.b32: the truth table `lut` applied bit by bit to a, b, c."""
    a, b, c = (np.asarray(x).astype(np.uint64) for x in (a, b, c))
    out = np.zeros(np.broadcast(a, b, c).shape, dtype=np.uint64)
    full = np.uint64(0xFFFFFFFFFFFFFFFF)
    for k in range(8):
        if int(lut) >> k & 1:
            ta = a if k & 4 else ~a & full
            tb = b if k & 2 else ~b & full
            tc = c if k & 1 else ~c & full
            out |= ta & tb & tc
    return out


def unary_float(op: str, t: str, a: LaneValues) -> LaneValues:
    """sqrt, rsqrt, rcp, sin, cos, lg2, ex2, tanh, abs, neg of a float (computed in float64,
    rounded to t: the approximate forms are modelled exactly)."""
    x = a.astype(np.float64)
    with np.errstate(all="ignore"):
        funcs: dict[str, Callable[[np.ndarray], LaneValues]] = {
            "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "rcp": lambda v: 1 / v,
            "sin": np.sin, "cos": np.cos, "lg2": np.log2, "ex2": np.exp2, "tanh": np.tanh,
            "abs": np.abs, "neg": np.negative}
        y = funcs[op](x)
    return y.astype(_as(t))
