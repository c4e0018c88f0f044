"""Arithmetic, logic, comparisons, selects, moves and conversions on the machine's
registers: operands read as the instruction's type, the result written on the active lanes,
unknown where any operand is unknown (or the result undefined: a division by zero)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import alu
from .bits import FLOATS, INT_DTYPES, WIDTH, LaneValues, is_signed, to_bits, view
from .parse import Instruction
from .program import CONST_GENERIC, LOCAL_GENERIC, SHARED_GENERIC, WINDOW
from .refuse import Unrunnable
from .sites import data_type

if TYPE_CHECKING:
    from .execute import Machine

Unknown = tuple["np.ndarray | None", "str | None"]  # an operand's unknown lanes, and why
PACKED_HALF = {"f16x2": "f16", "bf16x2": "bf16"}  # a packed type -> the type of each half


def _combine(*unks: Unknown | None, mask: np.ndarray | None = None) -> Unknown:
    """Unknown lanes of several operands -> (union or None, the first reason of an operand
    unknown on a lane of `mask`, the lanes that run, else the first reason): a register set
    only on the lanes that ran before is unknown on the others, which is no reason here."""
    out: np.ndarray | None = None
    why: str | None = None
    running: str | None = None
    for u in unks:
        if u is not None and u[0] is not None:
            out = u[0] if out is None else (out | u[0])
            why = why or u[1]
            if running is None and mask is not None and np.any(u[0] & mask):
                running = u[1]
    return out, running or why


def _type(ins: Instruction) -> str:
    return data_type(ins)


def arith(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """Two- and three-operand arithmetic of one type (packed f16x2 / bf16x2 half by half)."""
    t = _type(ins)
    if "cc" in ins.opcode:
        raise Unrunnable("carry arithmetic (.cc)")
    if t in PACKED_HALF:
        return _packed(m, ins, mask, t)
    wide = "wide" in ins.opcode and t not in FLOATS
    srcs = [m.read(o, alu._wide(t) if wide and k == 2 else t)  # mad.wide adds a wide c
            for k, o in enumerate(ins.operands[1:])]
    values = [s[0] for s in srcs]
    unk, why = _combine(*((s[1], s[2]) for s in srcs), mask=mask)
    result, bad = compute(ins.op, ins.opcode[1:], t, values)
    if bad is not None and np.any(bad & mask):
        bad_unk = np.broadcast_to(bad, m.shape)
        unk = bad_unk if unk is None else (unk | bad_unk)
        why = why or f"a division by zero at `{ins.text}`"
    m.write(ins.operands[0], result, alu._wide(t) if wide else t, mask, unk, why)


def compute(op: str, mods: tuple[str, ...], t: str,
            v: list[LaneValues]) -> tuple[LaneValues, LaneValues]:
    """An arithmetic op on typed values -> (result, lanes where it is undefined or None)."""
    if op == "add":
        return alu.add(mods, t, *v), None
    if op == "sub":
        return alu.sub(mods, t, *v), None
    if op in ("mul24", "mad24"):
        return alu.multiply24(op, mods, t, *v), None
    if op == "mul":
        return alu.multiply(mods, t, *v), None
    if op in ("mad", "fma"):
        return alu.multiply_add(mods, t, *v), None
    if op == "div":
        return alu.divide(mods, t, *v)
    if op == "rem":
        return alu.remainder(mods, t, *v)
    if op in ("min", "max"):
        a, b = v
        return alu.minmax(op, t, a, b, nan="NaN" in mods), None
    if op in ("shl", "shr"):
        return alu.shift(op, t, *v), None
    if op in ("and", "or", "xor"):
        f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
        if t == "pred":
            return f(np.asarray(v[0], bool), np.asarray(v[1], bool)), None
        return f(np.asarray(v[0]), np.asarray(v[1]).astype(np.asarray(v[0]).dtype)), None
    if op == "not":
        return (~np.asarray(v[0], bool)) if t == "pred" else ~np.asarray(v[0]), None
    if op == "cnot":
        return (np.asarray(v[0]) == 0).astype(np.asarray(v[0]).dtype), None
    if op == "neg":
        return (-np.asarray(v[0])), None
    if op == "abs":
        return np.abs(np.asarray(v[0])), None
    if op in ("sqrt", "rsqrt", "rcp", "sin", "cos", "lg2", "ex2", "tanh"):
        return alu.unary_float(op, t, np.asarray(v[0])), None
    if op == "copysign":
        return np.copysign(v[1], v[0]).astype(np.asarray(v[1]).dtype), None
    if op == "sad":
        a, b, c = (np.asarray(x) for x in v)
        return (np.where(a > b, a - b, b - a) + c).astype(a.dtype), None
    raise Unrunnable(f"the operation {op}")


def _halves(bits: LaneValues, half: str) -> list[np.ndarray]:
    """A packed f16x2 / bf16x2 register's bits -> its low and high halves as `half` values."""
    wide = np.asarray(bits).astype(np.uint64)
    return [view((wide >> np.uint64(shift)) & np.uint64(0xFFFF), half) for shift in (0, 16)]


def _packed(m: "Machine", ins: Instruction, mask: np.ndarray, t: str) -> None:
    """f16x2 / bf16x2 arithmetic: the op on the low and the high halves apart."""
    half = PACKED_HALF[t]
    srcs = [m.read(o, "b32") for o in ins.operands[1:]]
    unk, why = _combine(*((s[1], s[2]) for s in srcs), mask=mask)
    out = np.zeros(m.shape, dtype=np.uint64)
    for shift, parts in zip((0, 16), zip(*(_halves(s[0], half) for s in srcs))):
        r, _ = compute(ins.op, ins.opcode[1:], half, list(parts))
        out = out | (to_bits(r, half) << np.uint64(shift))
    m.write(ins.operands[0], out, "b32", mask, unk, why)


def unary_bits(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """popc, clz, brev, bfind (result u32, brev: its own type)."""
    t = _type(ins)
    a, unk, why = m.read(ins.operands[1], t)
    r = alu.bit_count(ins.op, t, np.asarray(a), ins.has("shiftamt"))
    m.write(ins.operands[0], r, t if ins.op == "brev" else "u32", mask, unk, why)


def bfe_bfi(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    t = _type(ins)
    if ins.op == "bfe":
        srcs = [m.read(ins.operands[1], t), m.read(ins.operands[2], "u32"),
                m.read(ins.operands[3], "u32")]
        r = alu.bit_field_extract(t, np.asarray(srcs[0][0]), srcs[1][0], srcs[2][0])
    else:
        srcs = [m.read(ins.operands[1], t), m.read(ins.operands[2], t),
                m.read(ins.operands[3], "u32"), m.read(ins.operands[4], "u32")]
        r = alu.bit_field_insert(t, np.asarray(srcs[0][0]), np.asarray(srcs[1][0]),
                                 srcs[2][0], srcs[3][0])
    unk, why = _combine(*((s[1], s[2]) for s in srcs), mask=mask)
    m.write(ins.operands[0], r, t, mask, unk, why)


def prmt(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    srcs = [m.read(o, "b32") for o in ins.operands[1:4]]
    unk, why = _combine(*((s[1], s[2]) for s in srcs), mask=mask)
    try:
        r = alu.permute(ins.opcode[1:], *(np.asarray(s[0]) for s in srcs))
    except NotImplementedError:
        raise Unrunnable("a prmt mode") from None
    m.write(ins.operands[0], r, "b32", mask, unk, why)


def lop3(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    t = _type(ins)
    srcs = [m.read(o, t) for o in ins.operands[1:4]]
    lut = ins.operands[4].value
    unk, why = _combine(*((s[1], s[2]) for s in srcs), mask=mask)
    m.write(ins.operands[0], alu.lop3(srcs[0][0], srcs[1][0], srcs[2][0], lut), t, mask, unk, why)


def setp(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """setp.cmp[.bool].type p[|q], a, b[, c]: p = cmp(a, b) BOOL c, q = !cmp(a, b) BOOL c
    (f16x2 / bf16x2: p from the low halves, q from the high ones); set.cmp.dtype.type d:
    1.0 (a float dtype) or all ones where true, half by half for a packed type."""
    bool_op = next((b for b in ("and", "or", "xor") if b in ins.opcode[2:-1]), None)
    results, unk, why = _compared(m, ins)
    if len(results) == 1:
        results.append(~results[0])  # q
    if bool_op is not None:
        c, uc, wc = m.read(ins.operands[3], "pred")
        unk, why = _combine((unk, why), (uc, wc), mask=mask)
        f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[bool_op]
        results = [f(r, c) for r in results]
    if ins.op == "set":
        return _set(m, ins, results, mask, unk, why)
    dest = ins.operands[0]
    if dest.kind == "vec":
        m.write(dest.parts[0], results[0], "pred", mask, unk, why)
        m.write(dest.parts[1], results[1], "pred", mask, unk, why)
    else:
        m.write(dest, results[0], "pred", mask, unk, why)


def _compared(m: "Machine", ins: Instruction) -> tuple[list[LaneValues], "np.ndarray | None",
                                                        "str | None"]:
    """cmp(a, b) of setp / set on the lanes: one bool array, or for f16x2 / bf16x2 the low
    halves' then the high halves'; with a's and b's unknown lanes."""
    cmp, t = ins.opcode[1], ins.opcode[-1]
    half = PACKED_HALF.get(t)
    a, ua, wa = m.read(ins.operands[1], "b32" if half else t)
    b, ub, wb = m.read(ins.operands[2], "b32" if half else t)
    unk, why = _combine((ua, wa), (ub, wb))
    if half is None:
        return [alu.compare(cmp, t, a, b)], unk, why
    return [alu.compare(cmp, half, x, y) for x, y in zip(_halves(a, half), _halves(b, half))
            ], unk, why


def _set(m: "Machine", ins: Instruction, results: list[LaneValues], mask: np.ndarray,
         unk: "np.ndarray | None", why: "str | None") -> None:
    """set's destination from (p, q) of setp: 1.0 where p for a float dtype, else all ones;
    for a packed source, a 16-bit half each (1.0 in f16 / bf16 for an f16x2 / bf16x2 dtype,
    else 0xFFFF), p's in the low half, q's in the high."""
    dt = ins.opcode[-2]
    if ins.opcode[-1] not in PACKED_HALF:
        value = np.where(results[0], 1.0, 0.0) if dt in FLOATS else np.where(results[0], -1, 0)
        return m.write(ins.operands[0], value, dt, mask, unk, why)
    half = PACKED_HALF.get(dt)
    true = to_bits(np.float32(1.0), half) if half else np.uint64(0xFFFF)
    bits = np.zeros(m.shape, dtype=np.uint64)
    for shift, r in zip((0, 16), results):
        bits = bits | (np.where(r, true, np.uint64(0)).astype(np.uint64) << np.uint64(shift))
    m.write(ins.operands[0], bits, "b32", mask, unk, why)


def selp(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    t = _type(ins)
    a, ua, wa = m.read(ins.operands[1], t)
    b, ub, wb = m.read(ins.operands[2], t)
    if ins.op == "selp":
        c, uc, wc = m.read(ins.operands[3], "pred")
        pick = np.asarray(c, bool)
    else:  # slct.dtype.s32 / .f32: a where c >= 0
        ct = ins.opcode[-1]
        c, uc, wc = m.read(ins.operands[3], ct)
        pick = np.asarray(c) >= 0
        t = ins.opcode[-2]
        a, ua, wa = m.read(ins.operands[1], t)
        b, ub, wb = m.read(ins.operands[2], t)
    unk, why = _combine((ua, wa), (ub, wb), (uc, wc), mask=mask)
    m.write(ins.operands[0], np.where(pick, a, b), t, mask, unk, why)


def mov(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """mov (a register, literal, special register or a variable's address), and the
    packing / unpacking forms mov.b64 %rd, {%r1, %r2} / mov.b64 {%r1, %r2}, %rd."""
    t = _type(ins)
    dst, src = ins.operands[0], ins.operands[1]
    if src.kind == "vec":
        piece = WIDTH[t] // len(src.parts)
        out = np.zeros(m.shape, dtype=np.uint64)
        parts = []
        for k, p in enumerate(src.parts):
            v, u, w = m.read(p, f"b{8 * piece}")
            out = out | (to_bits(v, f"b{8 * piece}") << np.uint64(8 * piece * k))
            parts.append((u, w))
        unk, why = _combine(*parts, mask=mask)
        m.write(dst, out, f"b{8 * WIDTH[t]}" if t not in ("f64",) else "b64", mask, unk, why)
        return
    if dst.kind == "vec":
        piece = WIDTH[t] // len(dst.parts)
        v, u, w = m.read(src, f"b{8 * WIDTH[t]}")
        bits = np.asarray(v).astype(np.uint64)
        for k, p in enumerate(dst.parts):
            part = (bits >> np.uint64(8 * piece * k)) & np.uint64((1 << (8 * piece)) - 1)
            m.write(p, part, f"b{8 * piece}", mask, u, w)
        return
    v, u, w = m.read(src, t)
    m.write(dst, v, t, mask, u, w)


ROUND_INT = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}


def convert(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """cvt[.rnd][.ftz][.sat].dtype.atype: integers extend or wrap (.sat clamps); float to
    integer rounds as its rounding modifier says and clamps to the range (NaN -> 0); integer
    to float and float narrowing round to nearest even (also under .rz / .rm / .rp, which
    are rare in compiled code); .rni and friends on float to float round to an integral
    value."""
    dt, at = ins.opcode[-2], ins.opcode[-1]
    mods = ins.opcode[1:-2]
    if dt in ("f16x2", "bf16x2") and len(ins.operands) == 3:  # pack two f32
        half = dt[:-2]
        hi, uh, wh = m.read(ins.operands[1], "f32")
        lo, ul, wl = m.read(ins.operands[2], "f32")
        bits = to_bits(lo, half) | (to_bits(hi, half) << np.uint64(16))
        unk, why = _combine((uh, wh), (ul, wl), mask=mask)
        m.write(ins.operands[0], bits, "b32", mask, unk, why)
        return
    if at not in WIDTH or dt not in WIDTH:
        raise Unrunnable(f"a conversion between .{at} and .{dt}")
    a, unk, why = m.read(ins.operands[1], at)
    a = np.asarray(a)
    rnd = next((r for r in mods if r in ROUND_INT), None)
    if at in FLOATS and dt in INT_DTYPES:
        x = a.astype(np.float64)
        x = (ROUND_INT[rnd] if rnd else np.trunc)(x)
        info = np.iinfo(INT_DTYPES[dt])
        x = np.where(np.isnan(x), 0, np.clip(x, info.min, info.max))
        if WIDTH[dt] == 8:  # float64 cannot hold the 64-bit limits: clamp again in ints
            big = x >= 2.0 ** (63 if is_signed(dt) else 64)
            r = np.where(big, info.max, x.astype(INT_DTYPES[dt]))
        else:
            r = x.astype(np.int64)
        m.write(ins.operands[0], np.asarray(r).astype(INT_DTYPES[dt]), dt, mask, unk, why)
        return
    if at in INT_DTYPES and dt in INT_DTYPES:
        r = alu.saturate_int(a, dt) if "sat" in mods else a
        m.write(ins.operands[0], np.asarray(r).astype(INT_DTYPES[dt]), dt, mask, unk, why)
        return
    if at in FLOATS and dt in FLOATS and rnd:
        r = ROUND_INT[rnd](a.astype(np.float64))
    else:
        r = a.astype(np.float64) if at != "u64" and at != "s64" else a
    if "sat" in mods and dt in FLOATS:
        r = np.clip(r, 0, 1)
    m.write(ins.operands[0], r, dt, mask, unk, why)


def cvta(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """cvta.space / cvta.to.space: a space's address <-> its generic address."""
    to = "to" in ins.opcode
    space = next(s for s in ins.opcode[1:] if s in ("global", "shared", "local", "const",
                                                     "param"))
    t = _type(ins)
    a, unk, why = m.read(ins.operands[1], t)
    base = {"global": 0, "shared": SHARED_GENERIC, "local": LOCAL_GENERIC,
            "const": CONST_GENERIC, "param": 0}[space]
    a = np.asarray(a).astype(np.uint64)
    r = a - np.uint64(base) if to else a + np.uint64(base)
    m.write(ins.operands[0], r, t, mask, unk, why)


def isspacep(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    space = ins.opcode[1]
    a, unk, why = m.read(ins.operands[1], "u64")
    a = np.asarray(a).astype(np.uint64)
    windows = {"shared": SHARED_GENERIC, "local": LOCAL_GENERIC, "const": CONST_GENERIC}
    inside = {s: (a >= np.uint64(b)) & (a < np.uint64(b + WINDOW)) for s, b in windows.items()}
    r = inside[space] if space in inside else ~(inside["shared"] | inside["local"]
                                                | inside["const"])
    m.write(ins.operands[0], r, "pred", mask, unk, why)


def testp(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """testp.finite / infinite / number / notanumber / normal / subnormal of a float."""
    t = _type(ins)
    a, unk, why = m.read(ins.operands[1], t)
    a = np.asarray(a)
    tiny = np.finfo(a.dtype).tiny
    mag = np.abs(a)
    r = {"finite": np.isfinite(a), "infinite": np.isinf(a), "number": ~np.isnan(a),
         "notanumber": np.isnan(a), "normal": np.isfinite(a) & (mag >= tiny),
         "subnormal": (mag > 0) & (mag < tiny)}.get(ins.opcode[1])
    if r is None:
        raise Unrunnable(f"testp.{ins.opcode[1]}")
    m.write(ins.operands[0], r, "pred", mask, unk, why)


def funnel_shift(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """shf.l / shf.r.wrap / .clamp.b32 d, a, b, c: the 64 bits b:a shifted by c, the high
    (left) or low (right) 32 bits kept."""
    srcs = [m.read(o, "u32") for o in ins.operands[1:4]]
    unk, why = _combine(*((s[1], s[2]) for s in srcs), mask=mask)
    a, b, c = (np.asarray(x[0]).astype(np.uint64) for x in srcs)
    n = c & np.uint64(31) if "wrap" in ins.opcode else np.minimum(c, np.uint64(32))
    both = (b << np.uint64(32)) | a
    if "l" in ins.opcode:
        r = ((both << n) >> np.uint64(32)) & np.uint64(0xFFFFFFFF)
    else:
        r = (both >> n) & np.uint64(0xFFFFFFFF)
    m.write(ins.operands[0], r, "b32", mask, unk, why)
