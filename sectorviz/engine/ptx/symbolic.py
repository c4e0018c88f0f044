"""Register values of the PTX engine's closed forms (closed.py) and the integer operations on
them. An integer register holds an `Aff` (model/closed_forms.py): the exact value of its bits
as the type that wrote it, over every row of the chunk and every iteration of the loops run
whole; a value that is not of that form is `Opaque` (data: floats, loaded values, wrapped
results); `Carried` is an Opaque value a compressed loop changes per iteration. A predicate
is a `Mask` (its true lanes), or a `SymPred` (`d op 0`, kept symbolic until a guard or a
branch needs its lanes). `Guarded(mask, new, old)`: a register written on some lanes only.

Values depending only on the rows and lanes (no loop or block symbol) are concrete: any
operation the lane path runs is run on their lane values (scalar_ops.compute, the lane
path's own arithmetic) and the result put back in closed form where it has one.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from ..closed_forms import Aff, Chunk, Mask, NotClosed, Varies
from .bits import INT_DTYPES, WIDTH, to_bits, view

SAFE = 2**62 - 1  # closed-form integers stay within int64 with room for a sum ...
PART = 2**60  # ... and so does each part (base, offset, loop term) of a register's value


class Opaque:
    """A value the lane path knows and the closed forms do not track."""


class Carried(Opaque):
    """An untracked value that changes from one iteration of a compressed loop to the next."""


OPAQUE, CARRIED = Opaque(), Carried()


class SymPred:
    """The predicate `d op 0` (op one of <, <=, >, >=, ==, !=; exact integers)."""

    __slots__ = ("d", "op")

    def __init__(self, d: Aff, op: str):
        self.d, self.op = d, op


class Guarded:
    """A register written on the lanes of `mask` only: `new` there, `old` elsewhere."""

    __slots__ = ("mask", "new", "old")

    def __init__(self, mask: Mask, new: "Value", old: "Value"):
        self.mask, self.new, self.old = mask, new, old


Value = Union[Aff, Opaque, SymPred, Mask, Guarded, None]  # None: never written


def type_range(t: str, register_bits: int | None = None) -> tuple[int, int]:
    """Values a PTX integer type reads exactly (from a register of register_bits, zero-
    extended when the type is wider), within +-SAFE."""
    bits = 8 * WIDTH[t]
    # a .b type's bits read as either sign: its ops (add, shl, and) give the same bits
    lo = -(2 ** (bits - 1)) if t[0] in "sb" else 0
    hi = 2 ** (bits - 1) - 1 if t[0] == "s" else 2**bits - 1
    if register_bits is not None and register_bits < bits:
        lo, hi = max(lo, 0), min(hi, 2**register_bits - 1)
    return max(lo, -SAFE), min(hi, SAFE)


def concrete(v: Aff) -> bool:
    """Whether v depends only on rows and lanes (no loop or block symbol)."""
    return not v.coef


def lane_values(ck: Chunk, v: Aff) -> np.ndarray:
    """(rows, 32) int64 values of a concrete Aff."""
    return ck.lane_values(v, np.arange(ck.n))


def decompose(ck: Chunk, values: np.ndarray) -> Aff | Opaque:
    """(rows, 32) int64 lane values -> base[w] + off[cls[w], l] where they have that form
    (on valid lanes), else Opaque."""
    found = ck.decomposed(values)
    return OPAQUE if found is None else found


def fits(ck: Chunk, v: Aff, lo: int, hi: int) -> bool:
    vlo, vhi = ck.bounds(v)
    return lo <= vlo and vhi <= hi


def magnitude(ck: Chunk, v: Aff) -> int:
    """The largest absolute value of v's parts: its base, offsets (valid lanes) and the
    span of each loop term."""
    parts = [int(np.max(np.abs(v.base))) if isinstance(v.base, np.ndarray) else abs(v.base)]
    if v.off is not None:
        parts.append(int(np.max(np.abs(np.where(ck.valid, v.off, 0)))))
    parts.extend(abs(c) * max(ck.trips[s] - 1, 1) for s, c in v.coef)
    return max(parts)


def wrapped(ck: Chunk, v: Aff, t: str, register_bits: int | None = None) -> Aff | Opaque:
    """v read as type t (from a register of register_bits): v where exact, else its lane
    values as the lane path reads them where v is concrete, else Opaque (also where a part
    of v passes PART: int64 sums of the parts stay exact)."""
    if magnitude(ck, v) > PART:
        return CARRIED if v.coef else OPAQUE
    lo, hi = type_range(t, register_bits)
    if fits(ck, v, lo, hi):
        return v
    if not concrete(v):
        return CARRIED if v.coef else OPAQUE
    values = lane_values(ck, v)
    if register_bits is not None and register_bits < 8 * WIDTH[t]:
        values = to_bits(values, f"u{register_bits}").astype(np.int64)
    typed = view(to_bits(values, t), t)
    if t in ("u64", "b64") and np.any(typed >= np.uint64(SAFE)):
        return OPAQUE
    return decompose(ck, typed.astype(np.int64))


def typed_lanes(ck: Chunk, v: Aff, t: str) -> np.ndarray:
    """A concrete Aff (exact in t) as numpy values of t: what the lane path computes on."""
    return view(to_bits(lane_values(ck, v), t), t)


def from_typed(ck: Chunk, values: Any, t: str) -> Aff | Opaque:
    """A lane-path result of integer type t -> its closed form (Opaque where it has none)."""
    values = np.broadcast_to(np.asarray(values), (ck.n, len(ck.valid[0])))
    if t not in INT_DTYPES:
        return OPAQUE
    if t in ("u64", "b64") and np.any(values.astype(np.uint64) >= np.uint64(SAFE)):
        return OPAQUE
    return decompose(ck, values.astype(np.int64))


def symbol_term(sym: int, step: int) -> Aff:
    """step * j_sym."""
    return Aff(0, None, ((sym, step),) if step else ())


def substituted(v: Aff, sym: int, at: int) -> Aff:
    """v with the symbol sym set to `at`."""
    coef = dict(v.coef)
    c = coef.pop(sym, 0)
    return Aff(v.base, v.off, tuple(sorted(coef.items()))) + Aff(c * at)


def zero(ck: Chunk, v: Aff, m: Mask) -> bool:
    """Whether v is 0 on every active lane of m, for every value of its symbols."""
    return not v.coef and ck.constant(v, m) == 0


def same_mask(a: Mask, b: Mask) -> bool:
    return bool(np.array_equal(a.full, b.full) and np.array_equal(a.mixed, b.mixed)
                and np.array_equal(a.lanes, b.lanes))


def need(v: Value) -> Aff:
    """An address, a branch's value, a count: it must have a closed form."""
    if isinstance(v, Aff):
        return v
    raise Varies() if isinstance(v, Carried) else NotClosed("not affine")


def divided(ck: Chunk, v: Aff, d: int, remainder: bool) -> Aff | Opaque:
    """v / d or v % d in closed form (Chunk.quotient), else an untracked value."""
    found = ck.quotient(v, d, remainder)
    if found is not None:
        return found
    return CARRIED if v.coef else OPAQUE
