"""The closed-form machine's (closed.py) register instructions: integer arithmetic exact in
closed form where it has one (add, sub, mul, mad, shl, neg, bfi, unsigned bfe; divisions,
min and max where the symbols allow), else the lane path's own arithmetic on concrete lane
values (scalar_ops.compute); float results Opaque; setp to Masks (or SymPred, kept symbolic for a
latch's trip count), predicate logic, selp, mov, cvt, cvta and mma (Opaque results)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..closed_forms import Aff, Mask, NotClosed
from .alu import bit_field_extract, bit_field_insert
from .bits import FLOATS, INT_DTYPES, WIDTH, is_signed
from .loops import NEGATED
from .parse import Instruction
from .program import CONST_GENERIC, LOCAL_GENERIC, SHARED_GENERIC
from .scalar_ops import compute
from .sites import data_type
from .symbolic import (
    CARRIED,
    OPAQUE,
    SAFE,
    Carried,
    Opaque,
    SymPred,
    Value,
    concrete,
    divided,
    from_typed,
    magnitude,
    typed_lanes,
)

if TYPE_CHECKING:
    from .closed import ClosedMachine

AFFINE_OPS = ("add", "sub", "mul", "mad", "shl", "neg")
DIVISIONS = ("shr", "div", "rem", "and")  # of a value with symbols, by literals
COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
               "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}


def arith(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """Arithmetic of one type: integers exact (_affine, else _concrete), floats Opaque."""
    t = data_type(ins)
    dest = ins.operands[0]
    if t not in INT_DTYPES or "cc" in ins.opcode:
        return mc.write(dest, OPAQUE, t, m) if t in FLOATS or t in ("f16x2", "bf16x2") \
            else _not_closed(ins)
    wide = "wide" in ins.opcode
    wide_t = t[0] + str(16 * WIDTH[t])
    srcs = [mc.read(o, wide_t if wide and k == 2 else t, m)
            for k, o in enumerate(ins.operands[1:])]
    out_t = wide_t if wide else t
    if not all(isinstance(s, Aff) for s in srcs):
        kind = CARRIED if any(isinstance(s, Carried) for s in srcs) else OPAQUE
        return mc.write(dest, kind, out_t, m)
    affs: list[Aff] = [s for s in srcs if isinstance(s, Aff)]
    result = _affine(mc, ins, affs)
    mc.write(dest, _concrete(mc, ins, t, affs) if result is None else result, out_t, m)


def _affine(mc: "ClosedMachine", ins: Instruction, v: list[Aff]) -> Value:
    """add, sub, mul (lo or wide: the exact product, checked to fit where it is
    written), mad, shl by a literal, neg, divisions by literals (_divided), min and max
    where one operand is the least everywhere: exact in closed form; None where these do
    not apply."""
    op, mods = ins.op, ins.opcode[1:]
    sign = _sign(mc, ins, v)
    if sign is not None:
        return sign
    if op == "and" and any(x.scalar and x.base == 0 for x in v):
        return Aff(0)
    if op in DIVISIONS and v[0].coef and v[1].scalar:
        return _divided(mc, op, v[0], v[1].base)
    if op in ("or", "xor") and (v[0].coef or v[1].coef):
        return _disjoint_sum(mc, v[0], v[1])
    if op in ("min", "max") and (v[0].coef or v[1].coef):
        lo, hi = mc.ck.bounds(v[0] + v[1].scaled(-1))
        first = hi <= 0 if op == "min" else lo >= 0  # v[0] is the one everywhere
        return v[0] if first else v[1] if (lo >= 0 if op == "min" else hi <= 0) else None
    if op not in AFFINE_OPS or "hi" in mods or "sat" in mods:
        return None
    if op == "add":
        return v[0] + v[1]
    if op == "sub":
        return v[0] + v[1].scaled(-1)
    if op == "neg":
        return v[0].scaled(-1)
    if op == "shl":
        k = v[1].base
        if not (v[1].scalar and isinstance(k, int) and 0 <= k < 8 * WIDTH[data_type(ins)]):
            return None
        return _scaled(mc, v[0], 2**k)
    a, b = v[0], v[1]
    if not (a.scalar or b.scalar):
        return None
    k = b.base if b.scalar else a.base
    assert isinstance(k, int)
    product = _scaled(mc, a if b.scalar else b, k)
    return product if op == "mul" or product is None else product + v[2]


def _sign(mc: "ClosedMachine", ins: Instruction, v: list[Aff]) -> Aff | None:
    """`shr.s64 v, 63` (the sign: 0 or -1, as Numba's negative-index wraparound computes
    it) where v has one sign over the whole chunk; else None."""
    t = data_type(ins)
    if ins.op != "shr" or t[0] != "s" or not v[1].scalar or v[1].base != 8 * WIDTH[t] - 1:
        return None
    lo, hi = mc.ck.bounds(v[0])
    return Aff(0) if lo >= 0 else Aff(-1) if hi < 0 else None


def _disjoint_sum(mc: "ClosedMachine", a: Aff, b: Aff) -> Aff | None:
    """a | b (or a ^ b) as a + b where no bit can be set in both: every part of one is a
    multiple of 2^s and the other lies in [0, 2^s) (nvcc's `row * 128 | col` for
    `row * 128 + col`), or one's symbols' part is such a multiple and the other lies in
    the bits between it and the rest (Triton's `block * 1024 + lane * 4 | 512`); None
    where that is not shown."""
    for high, low in ((a, b), (b, a)):
        lo, hi = mc.ck.bounds(low)
        if lo >= 0 and hi < 2**_zero_bits(high):
            return high + low
    for split, between in ((a, b), (b, a)):
        if split.coef and _between(mc, Aff(split.base, split.off), Aff(0, None, split.coef),
                                   between):
            return split + between
    return None


def _between(mc: "ClosedMachine", rest: Aff, symbols: Aff, v: Aff) -> bool:
    """Whether rest, v and symbols are >= 0 and take disjoint bits, in that order from
    bit 0: rest < 2^z(v) and v < 2^z(symbols), z the low bits a value leaves 0."""
    (rlo, rhi), (vlo, vhi) = mc.ck.bounds(rest), mc.ck.bounds(v)
    return min(rlo, vlo, mc.ck.bounds(symbols)[0]) >= 0 and \
        rhi < 2**_zero_bits(v) and vhi < 2**_zero_bits(symbols)


def _zero_bits(v: Aff) -> int:
    """How many low bits every part of v (base, lane offsets, coefficients) leaves 0."""
    parts = [np.ravel(v.base), np.zeros(0, dtype=np.int64) if v.off is None else v.off.ravel(),
             np.array([c for _, c in v.coef], dtype=np.int64)]
    bits = int(np.bitwise_or.reduce(np.concatenate(parts).astype(np.int64)))
    return 62 if bits == 0 else min(62, (bits & -bits).bit_length() - 1)


def _scaled(mc: "ClosedMachine", v: Aff, k: int) -> Aff | None:
    """v * k, None where a part could pass int64 (the lane path's wrapping arithmetic
    runs it then)."""
    return v.scaled(k) if magnitude(mc.ck, v) * abs(k) <= SAFE else None


def _divided(mc: "ClosedMachine", op: str, v: Aff, k: int | np.ndarray) -> Value:
    """shr by a literal, div or rem by a positive one, and with 2^b - 2^a, of a value with
    symbols (symbolic.divided); None where the literal does not fit that."""
    assert isinstance(k, int)
    if op == "shr":
        return divided(mc.ck, v, 2**k, False) if 0 <= k < 63 else None
    if op == "and":  # k = 2^b - 2^a: v & k = v % 2^b - v % 2^a
        low = k & -k
        if k <= 0 or (k + low) & (k + low - 1):
            return None
        high, part = divided(mc.ck, v, k + low, True), divided(mc.ck, v, low, True)
        if isinstance(high, Aff) and isinstance(part, Aff):
            return high + part.scaled(-1)
        return CARRIED
    return divided(mc.ck, v, k, op == "rem") if k > 0 else None


def _concrete(mc: "ClosedMachine", ins: Instruction, t: str, v: list[Aff]) -> Value:
    """An operation on values of the rows and lanes only: the lane path's arithmetic on
    their lane values."""
    if not all(concrete(x) for x in v):
        return CARRIED if any(x.coef for x in v) else OPAQUE
    wide = "wide" in ins.opcode
    wide_t = t[0] + str(16 * WIDTH[t])
    lanes = [typed_lanes(mc.ck, x, wide_t if wide and k == 2 else t)
             for k, x in enumerate(v)]
    with np.errstate(all="ignore"):
        result, bad = compute(ins.op, ins.opcode[1:], t, lanes)
    if bad is not None and np.any(bad & mc.ck.valid[mc.ck.cls]):
        return OPAQUE
    return from_typed(mc.ck, result, wide_t if wide else t)


def bit_insert(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """bfi d, a, b, pos, len: on values of the rows and lanes only, the lane path's own bit
    arithmetic; with symbols and a literal position and length, b - (b & field) + (a & ones)
    * 2^pos, exact where those parts are (nvcc writes `blockIdx.y * 32 + threadIdx.x % 32`
    as one bfi)."""
    t = data_type(ins)
    affs = _symbolic_sources(mc, ins, m, (t, t, "u32", "u32"), bit_field_insert)
    if affs is None:
        return
    a, b, pos, length = affs
    value = _inserted(mc, t, a, b, int(pos.base) & 0xFF, int(length.base) & 0xFF) \
        if pos.scalar and length.scalar else None
    mc.write(ins.operands[0], CARRIED if value is None else value, t, m)


def bit_extract(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """bfe d, a, pos, len: on values of the rows and lanes only, the lane path's own bit
    arithmetic; unsigned, with symbols and a literal field inside the type, (a / 2^pos) %
    2^len, exact where the divisions are (Triton's `bfe.u32 r, tid, 2, 5` for tid / 4 %
    32)."""
    t = data_type(ins)
    affs = _symbolic_sources(mc, ins, m, (t, "u32", "u32"), bit_field_extract)
    if affs is None:
        return
    a, pos, length = affs
    value: Value = CARRIED
    if pos.scalar and length.scalar and not is_signed(t):
        at, n = int(pos.base) & 0xFF, int(length.base) & 0xFF
        if n and at + n <= 8 * WIDTH[t]:
            shifted = divided(mc.ck, a, 2**at, False)
            value = divided(mc.ck, shifted, 2**n, True) if isinstance(shifted, Aff) \
                else shifted
    mc.write(ins.operands[0], value, t, m)


def _symbolic_sources(mc: "ClosedMachine", ins: Instruction, m: Mask, types: tuple[str, ...],
                      on_lanes: Callable[..., np.ndarray]) -> list[Aff] | None:
    """A bit-field instruction's sources (of `types`) as affine values with a symbol, for
    its closed form; None once its destination is written otherwise: Carried or Opaque where
    a source is not affine, the lane path's own `on_lanes(t, *lanes)` where all are rows'
    and lanes' values."""
    t, dest = types[0], ins.operands[0]
    srcs = [mc.read(o, ty, m) for o, ty in zip(ins.operands[1:], types)]
    affs = [s for s in srcs if isinstance(s, Aff)]
    if len(affs) != len(srcs):
        mc.write(dest, CARRIED if any(isinstance(s, Carried) for s in srcs) else OPAQUE, t, m)
        return None
    if all(concrete(a) for a in affs):
        lanes = [typed_lanes(mc.ck, a, ty) for a, ty in zip(affs, types)]
        mc.write(dest, from_typed(mc.ck, on_lanes(t, *lanes), t), t, m)
        return None
    return affs


def _inserted(mc: "ClosedMachine", t: str, a: Aff, b: Aff, at: int, n: int) -> Aff | None:
    """b with n bits of a at bit `at` (clipped to t's width), None without a closed form."""
    n = min(n, max(8 * WIDTH[t] - at, 0))
    if n == 0:
        return b
    high, low = (divided(mc.ck, b, 2**k, True) for k in (at + n, at))
    bits = divided(mc.ck, a, 2**n, True)
    if not (isinstance(high, Aff) and isinstance(low, Aff) and isinstance(bits, Aff)):
        return None
    shifted = _scaled(mc, bits, 2**at)
    return None if shifted is None else b + (high + low.scaled(-1)).scaled(-1) + shifted


def _not_closed(ins: Instruction) -> None:
    raise NotClosed(f"`{ins.text}` has no closed form")


def setp(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    cmp, t = ins.opcode[1], ins.opcode[-1]
    dest = ins.operands[0]
    dests = list(dest.parts) if dest.kind == "vec" else [dest]
    combine = next((b for b in ("and", "or", "xor") if b in ins.opcode[2:-1]), None)
    if ins.op != "setp" or any(d.kind != "reg" for d in dests):
        return _not_closed(ins)
    if cmp not in COMPARISONS or t not in INT_DTYPES:
        for d in dests:
            mc.assign(d.name, OPAQUE, m)  # a float comparison: never a guard here
        return
    a, b = mc.read(ins.operands[1], t, m), mc.read(ins.operands[2], t, m)
    if not isinstance(a, Aff) or not isinstance(b, Aff):
        kind = CARRIED if isinstance(a, Carried) or isinstance(b, Carried) else OPAQUE
        for d in dests:
            mc.assign(d.name, kind, m)
        return
    diff, op = a + b.scaled(-1), COMPARISONS[cmp]
    if combine is None and len(dests) == 1:  # kept symbolic: a latch's trip count
        return mc.assign(dest.name, SymPred(diff, op) if diff.coef else
                           mc.ck.holds(diff, op, m), m)
    r = mc.ck.holds(diff, op, m)
    results = [r, mc.ck.minus(m, r)]
    if combine is not None:
        other = ins.operands[3]
        c = mc.lanes_of(mc.read(other, "pred", m), m)
        c = mc.ck.minus(m, c) if other.negated else c
        f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[combine]
        results = [mc.ck.combine(x, c, f) for x in results]
    for d, value in zip(dests, results):
        mc.assign(d.name, value, m)


def logic_pred(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> bool:
    """and / or / xor / not on predicates: their lanes combined; False if not .pred."""
    if ins.opcode[-1] != "pred":
        return False
    ck = mc.ck
    if any(o.kind != "reg" for o in ins.operands[1:]):
        raise NotClosed(f"`{ins.text}` has no closed form")
    if ins.op == "not" and not ins.operands[1].negated:
        p = mc.resolved(mc.read(ins.operands[1], "pred", m), m)
        if isinstance(p, SymPred):  # kept symbolic: a while loop's exit test (-G)
            mc.assign(ins.operands[0].name, SymPred(p.d, NEGATED[p.op]), m)
            return True
    ins_srcs = [mc.lanes_of(mc.read(o, "pred", m), m) for o in ins.operands[1:]]
    srcs = [ck.minus(m, s) if o.negated else s for o, s in zip(ins.operands[1:], ins_srcs)]
    if ins.op == "not":
        out = ck.minus(m, srcs[0])
    else:
        f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[ins.op]
        out = ck.combine(srcs[0], srcs[1], f)
    mc.assign(ins.operands[0].name, out, m)
    return True


def bits_op(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    if not logic_pred(mc, ins, pc, m):
        arith(mc, ins, pc, m)


def selp(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    t = data_type(ins)
    if ins.op != "selp":
        return _not_closed(ins)
    a, b = mc.read(ins.operands[1], t, m), mc.read(ins.operands[2], t, m)
    yes = mc.lanes_of(mc.read(ins.operands[3], "pred", m), m)
    no = mc.ck.minus(m, yes)
    dest = ins.operands[0]
    if not no.any() or not yes.any():
        return mc.write(dest, a if not no.any() else b, t, m)
    mc.write(dest, b, t, m)
    mc.write(dest, a, t, yes)


def mov(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    t = data_type(ins)
    src, dest = ins.operands[1], ins.operands[0]
    if dest.kind == "vec" or src.kind == "vec":
        for d in dest.parts if dest.kind == "vec" else (dest,):
            mc.write(d, OPAQUE, t, m)
        return
    if t == "pred":
        return mc.assign(dest.name, mc.read(src, "pred", m), m)
    mc.write(dest, mc.read(src, t, m), t, m)


def shuffle(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """shfl.sync d[|p], a, b, c, membermask of a value the closed forms do not track (data:
    a reduction's partial sums, as Triton's tl.max and tl.sum and cooperative groups'
    cg::reduce exchange them) -> the same kind of value, and p (whether the source lane
    was in range) untracked: a branch on it is the lane path's; an integer they track (an
    index moved between lanes) has no closed form here (the lane path runs it)."""
    dest = ins.operands[0]
    value = mc.read(ins.operands[1], data_type(ins), m)
    d, *valid = dest.parts if dest.kind == "vec" else (dest,)
    if d.kind != "reg" or not isinstance(value, Opaque):
        raise NotClosed(f"`{ins.text}` moves a tracked value between lanes")
    mc.write(d, value, data_type(ins), m)
    for p in valid:
        if p.kind == "reg":
            mc.assign(p.name, OPAQUE, m)


def matrix_product(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """mma.sync.aligned over whole warps: no access, its destination registers Opaque (a
    warp with some lanes only is the lane path's to refuse)."""
    if not mc.aligned(m):
        raise NotClosed(f"`{ins.text}` in a warp whose lanes are not all active")
    dest = ins.operands[0]
    for d in dest.parts if dest.kind == "vec" else (dest,):
        mc.write(d, OPAQUE, mc.prog.entry.register_type(d.name) or "b32", m)


def convert(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    dt, at = ins.opcode[-2], ins.opcode[-1]
    dest = ins.operands[0]
    if at not in INT_DTYPES or dt not in INT_DTYPES or len(ins.operands) != 2 or \
            "sat" in ins.opcode:
        return mc.write(dest, OPAQUE, dt if dt in WIDTH else "b32", m)
    mc.write(dest, mc.read(ins.operands[1], at, m), dt, m)


def cvta(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    t = data_type(ins)
    space = next(s for s in ins.opcode[1:] if s in ("global", "shared", "local", "const",
                                                     "param"))
    base = {"shared": SHARED_GENERIC, "local": LOCAL_GENERIC,
            "const": CONST_GENERIC}.get(space, 0)
    a = mc.read(ins.operands[1], t, m)
    if isinstance(a, Aff):
        a = a + Aff(-base if "to" in ins.opcode else base)
    mc.write(ins.operands[0], a, t, m)


def mbarrier(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """mbarrier.* as the lane path runs it (lanes_ops.mbarrier): init / arrive / expect_tx
    order nothing, a state they return is 0; test_wait and try_wait find the phase
    complete on every lane."""
    dest = ins.operands[0] if ins.operands else None
    if dest is None or dest.kind != "reg":
        return
    if any(o in ("test_wait", "try_wait") for o in ins.opcode):
        mc.assign(dest.name, m, m)
    else:
        mc.write(dest, Aff(0), "b64", m)
