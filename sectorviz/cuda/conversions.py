"""The conversion intrinsics of cuda_fp16.h, cuda_bf16.h and the math API: value conversions
(with their rounding), bit reinterpretations, packing / unpacking of half2 and
__nv_bfloat162, and their arithmetic intrinsics (`__hadd2`, `__hfma2`, ...) -> ir expressions
of the compiler's types."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from . import ctype as C
from . import ir
from .source import Node, error

if TYPE_CHECKING:
    from .compile import Compiler

_ROUND: dict[str, Callable | None] = {"rn": np.rint, "rz": np.trunc, "rd": np.floor,
                                      "ru": np.ceil, "": None}
_SHORT = {"float": C.FLOAT, "double": C.DOUBLE, "half": C.HALF, "bfloat16": C.BF16,
          "int": C.INT, "uint": C.UINT, "ll": C.LLONG, "ull": C.ULLONG, "short": C.SHORT,
          "ushort": C.USHORT}
H2, B2 = C.NAMED["half2"], C.NAMED["__nv_bfloat162"]
F2 = C.NAMED["float2"]

# name -> (argument type, result type, rounding applied in the argument's type)
VALUE: dict[str, tuple[C.Num, C.Num, Callable | None]] = {}
for _src, _st in _SHORT.items():
    for _dst, _dt in _SHORT.items():
        if _src == _dst:
            continue
        for _mode, _fn in _ROUND.items():
            rounding = _fn if _st.floating and not _dt.floating else None
            VALUE[f"__{_src}2{_dst}" + (f"_{_mode}" if _mode else "")] = (_st, _dt, rounding)

# name -> (argument type, result type): the same bits read as another type
BITS = {"__int_as_float": (C.INT, C.FLOAT), "__float_as_int": (C.FLOAT, C.INT),
        "__uint_as_float": (C.UINT, C.FLOAT), "__float_as_uint": (C.FLOAT, C.UINT),
        "__longlong_as_double": (C.LLONG, C.DOUBLE), "__double_as_longlong": (C.DOUBLE, C.LLONG),
        "__half_as_short": (C.HALF, C.SHORT), "__short_as_half": (C.SHORT, C.HALF),
        "__half_as_ushort": (C.HALF, C.USHORT), "__ushort_as_half": (C.USHORT, C.HALF)}

# name -> (argument types, result vector): components converted and packed
PACK = {"__floats2half2_rn": ((C.FLOAT, C.FLOAT), H2), "__halves2half2": ((C.HALF, C.HALF), H2),
        "__float2half2_rn": ((C.FLOAT,), H2), "__half2half2": ((C.HALF,), H2),
        "__floats2bfloat162_rn": ((C.FLOAT, C.FLOAT), B2),
        "__halves2bfloat162": ((C.BF16, C.BF16), B2), "__float2bfloat162_rn": ((C.FLOAT,), B2),
        "__bfloat162bfloat162": ((C.BF16,), B2)}

# name -> (argument vector, result type, components taken): half2 / float2 apart
UNPACK = {"__half22float2": (H2, F2, (0, 1)), "__float22half2_rn": (F2, H2, (0, 1)),
          "__bfloat1622float2": (B2, F2, (0, 1)), "__float22bfloat162_rn": (F2, B2, (0, 1)),
          "__low2half": (H2, C.HALF, (0,)), "__high2half": (H2, C.HALF, (1,)),
          "__low2float": (H2, C.FLOAT, (0,)), "__high2float": (H2, C.FLOAT, (1,)),
          "__low2bfloat16": (B2, C.BF16, (0,)), "__high2bfloat16": (B2, C.BF16, (1,)),
          "__lows2half2": (H2, H2, (0, 0)), "__highs2half2": (H2, H2, (1, 1)),
          "__lowhigh2highlow": (H2, H2, (1, 0))}

# name -> C operator: __half / __nv_bfloat16 arithmetic, and its half2 / bfloat162 forms
# (component by component); each result rounded once to the 2-byte type
PAIRED = {"__hadd": "+", "__hsub": "-", "__hmul": "*", "__hdiv": "/",
          "__hadd2": "+", "__hsub2": "-", "__hmul2": "*", "__h2div": "/"}
FMA = {"__hfma", "__hfma2"}  # a * b + c, rounded once

CONVERSIONS = {*VALUE, *BITS, *PACK, *UNPACK, *PAIRED, *FMA}


def saturated(rounding: Callable, t: C.Num) -> Callable:
    """float -> integer `t` as the GPU converts: rounded, clamped to range, NaN to 0."""
    return lambda x: ir.float_to_int(rounding(np.asarray(x, dtype=np.float64)), t)


def _bits(src: C.Num, dst: C.Num) -> Callable:
    return lambda v: np.asarray(v).astype(src.dtype).view(dst.dtype)[()]


def conversion(compiler: "Compiler", name: str, args: list[ir.Expr], node: Node) -> ir.Expr:
    """A conversion intrinsic applied to compiled arguments -> its expression."""
    if name in PAIRED:
        _count(name, args, 2, node)
        return compiler.binary(PAIRED[name], args[0], args[1], node)
    if name in FMA:
        _count(name, args, 3, node)
        return compiler.componentwise(args, node, lambda x, y, z: ir.Math(
            _fused, [x, y, z], x.type, x.pos))
    if name in PACK:
        types, result = PACK[name]
        _count(name, args, len(types), node)
        parts = [_num(compiler, a, t, node) for a, t in zip(args, types)]
        return ir.Vector(parts * (2 // len(parts)), result, args[0].pos)
    if name in UNPACK:
        vec, result, take = UNPACK[name]
        _count(name, args, 1, node)
        if args[0].type != vec:
            raise error(node, f"{name} takes a {C.name_of(vec)}, not {C.name_of(args[0].type)}")
        base = result.base if isinstance(result, C.Vec) else result
        parts = [compiler.cast(ir.Field(args[0], i, vec.base, args[0].pos), base) for i in take]
        return parts[0] if len(parts) == 1 else ir.Vector(parts, result, args[0].pos)
    _count(name, args, 1, node)
    if name in BITS:
        src, dst = BITS[name]
        return compiler.fold(ir.Math(_bits(src, dst), [_num(compiler, args[0], src, node)], dst,
                                     args[0].pos))
    src, dst, rounding = VALUE[name]
    value = _num(compiler, args[0], src, node)
    if rounding is not None:  # float to integer: rounded, then saturated as the GPU does
        return compiler.fold(ir.Math(saturated(rounding, dst), [value], dst, value.pos))
    return compiler.cast(value, dst)


def _fused(a, b, c):
    """a * b + c of 2-byte floats in float64, where the product and sum are exact (for
    bfloat16 unless the exponents are far apart); the Math node rounds it once to the type."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64)
            + np.asarray(c, np.float64))[()]


def _count(name: str, args: list, n: int, node: Node) -> None:
    if len(args) != n:
        raise error(node, f"{name} takes {n} argument{'s' * (n > 1)}")


def _num(compiler: "Compiler", e: ir.Expr, t: C.Num, node: Node) -> ir.Expr:
    if not isinstance(e.type, C.Num):
        raise error(node, f"a {C.name_of(e.type)} where a number is needed")
    return compiler.cast(e, t)
