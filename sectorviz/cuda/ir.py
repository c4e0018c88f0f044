"""The compiled kernel: expression and statement nodes run SIMT-style over (warps, 32) lanes.

A value is a numpy array over the lanes of a chunk of warps (or a scalar, the same for every
lane) in its static C type's dtype; a pointer is an int64 byte address; a vector is a tuple of
components; `Unknown` is a value the model does not have (data from an array without
`values`), which is an error the moment it would decide an address or a branch.

Each node's `ev(run, mask)` (expressions) or `run(run, mask)` (statements) is a generator:
it yields `(space, site index, Batch)` for every memory access it executes and returns the
expression's value. `mask` is the (warps, 32) bool array of lanes executing the node; other
lanes' values are unspecified, and never trap (division, gathers and range checks look only
at the lanes of the mask).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import count
from typing import TYPE_CHECKING, Iterator

import numpy as np

from ..model.assume import values_fix
from ..model.budget import BATCH_UNITS, STEP_LANES, STEP_UNITS, current
from ..model.c_int import c_divmod
from ..model.errors import PatternError
from ..model.kernel import Batch, Threads
from .ctype import BF16, BOOL, INT, Array, CType, Num, Struct, Vec, roots

if TYPE_CHECKING:
    from .kernel import CudaKernel

Events = Iterator[tuple[str, int, Batch]]


class Unknown:
    """A value sectorviz does not know; `why` says where it came from."""

    __slots__ = ("why",)

    def __init__(self, why: str):
        self.why = why


@dataclass
class Site:
    """One static memory instruction; `index` is its place in the kernel's instruction list."""

    line: int
    column: int
    op: str  # "load" | "store"
    array: str
    width: int  # bytes
    source: str
    index: int = -1


class Run:
    """State of one run over a chunk of warps: variable slots and the lanes that have left."""

    def __init__(self, launch: "CudaKernel", threads: Threads, slots: int):
        self.launch = launch
        self.threads = threads
        self.shape = threads.valid.shape
        self.slots: list = [None] * slots
        self.ret = self.brk = self.cont = None  # lanes returned / broken out / continued
        self._builtins: dict[str, np.ndarray] = {}
        self.budget = current()
        self.lanes = threads.valid.size
        self.step = STEP_UNITS + self.lanes // STEP_LANES  # units of one step over the lanes

    def builtin(self, name: str):
        """threadIdx.x, blockDim.y, warpSize, ...: unsigned int (warpSize: int) values."""
        value = self._builtins.get(name)
        if value is None:
            vector, _, axis = name.partition(".")
            i = "xyz".index(axis) if axis else 0
            u32 = np.uint32
            value = {"warpSize": lambda: INT.dtype.type(32),
                     "threadIdx": lambda: self.threads.thread[i].astype(u32),
                     "blockIdx": lambda: self.threads.block[i].astype(u32),
                     "blockDim": lambda: u32(self.launch.block[i]),
                     "gridDim": lambda: u32(self.launch.grid[i])}[vector]()
            self._builtins[name] = value
        return value

    def live(self, mask: np.ndarray) -> np.ndarray:
        """`mask` less the lanes that returned, broke or continued."""
        for off in (self.ret, self.brk, self.cont):
            if off is not None:
                mask = mask & ~off
        return mask


def fail(pos: tuple[int, int], message: str) -> PatternError:
    return PatternError(f"line {pos[0]}", message, pos[1])


def first_lane(run: Run, bad: np.ndarray) -> str:
    w, lane = np.argwhere(bad)[0]
    return f"warp {int(run.threads.warp[w])} lane {int(lane)}"


def known(value, pos: tuple[int, int], what: str):
    """`value`, or an error if it is Unknown (it would decide `what`)."""
    if isinstance(value, Unknown):
        raise fail(pos, f"{what} depends on {value.why}")
    return value


def merge(mask: np.ndarray, new, old):
    """`new` on the lanes of `mask`, `old` elsewhere."""
    if isinstance(new, Unknown):
        return new
    if old is None:
        return new
    if isinstance(old, Unknown):
        return old
    if isinstance(new, tuple):
        return tuple(merge(mask, n, o) for n, o in zip(new, old))
    return np.where(mask, new, old)


def convert(value, to: CType):
    """A value converted to type `to` (C's conversions; pointers keep their address)."""
    if isinstance(value, (Unknown, tuple)) or not isinstance(to, Num):
        return value
    if to is BOOL:
        return (np.asarray(value) != 0).astype(np.uint8)
    if not to.floating and np.asarray(value).dtype.kind == "f":
        return float_to_int(np.trunc(value), to)
    if to == BF16:
        return round_bf16(value)
    return value.astype(to.dtype) if hasattr(value, "astype") else to.dtype.type(value)


def round_bf16(x):
    """Numbers -> the nearest bfloat16 (8 significant bits, ties to even, as __float2bfloat16
    and bf16 arithmetic round), kept in float32 (numpy has no bfloat16)."""
    significand, exponent = np.frexp(np.asarray(x, dtype=np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        return np.ldexp(np.round(np.ldexp(significand, 8)), exponent - 8).astype(np.float32)[()]


def float_to_int(x, to: Num):
    """Whole floats -> integer type `to` as the GPU converts (cvt.sat): clamped to the range
    (infinities to its ends), NaN to 0."""
    info = np.iinfo(to.dtype)
    x = np.asarray(x, dtype=np.float64)
    r = np.clip(np.nan_to_num(x, nan=0.0), info.min, info.max)
    big = r >= 2.0 ** (to.size * 8 - to.signed)  # the top of the range rounds up in float
    return np.where(big, info.max, r.astype(to.dtype, copy=False))[()]


# ------------------------------------------------------------------ expressions


#: IR node classes that may run on both sides of a branch whose condition is unknown (they
#: compute values and set variables, nothing else: If.guessable). A node class is unsafe
#: there until it is declared with @pure.
PURE: set[type] = set()


def pure(cls: type) -> type:
    """Declare an IR node class safe to run on both sides of an unknown branch."""
    PURE.add(cls)
    return cls


def nodes_in(value) -> Iterator:
    """The IR nodes in a field's value: the value itself, or those in a list or tuple (at any
    depth, as a switch's (label, statements) sections); sites, types and numbers are not
    nodes."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from nodes_in(item)
    elif isinstance(value, NODE_TYPES):
        yield value


def children(node) -> Iterator:
    """The IR nodes directly under `node`, in field order: the one definition of a child
    that every traversal of the IR uses."""
    for name in getattr(node, "__dataclass_fields__", ()):
        yield from nodes_in(getattr(node, name))


def walk(node, once: bool = False) -> Iterator:
    """`node` and every IR node below it, depth first, each parent before its children; a
    node shared by several parents comes once per parent, or only once with `once`."""
    seen: set[int] = set()
    stack = list(nodes_in(node))[::-1]
    while stack:
        x = stack.pop()
        if once:
            if id(x) in seen:
                continue
            seen.add(id(x))
        yield x
        stack.extend(list(children(x))[::-1])


class Expr:
    type: CType
    pos: tuple[int, int]
    const = False

    def ev(self, run: Run, mask) -> Events:
        raise NotImplementedError


def constant_value(expr: Expr):
    """Value of a constant expression (no lanes, no memory)."""
    gen = expr.ev(None, np.bool_(True))
    try:
        with np.errstate(all="ignore"):  # IEEE: 1.0f / 0 is infinity, as on the GPU
            next(gen)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("a constant expression yielded an access")


@pure
@dataclass
class Const(Expr):
    value: object
    type: CType
    pos: tuple[int, int] = (0, 0)
    const = True

    def ev(self, run, mask):
        return self.value
        yield


@pure
@dataclass
class Builtin(Expr):
    name: str  # threadIdx.x, warpSize, ...
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        return run.builtin(self.name)
        yield


@pure
@dataclass
class Read(Expr):
    slot: int
    type: CType
    pos: tuple[int, int]

    name: str

    def ev(self, run, mask):
        value = run.slots[self.slot]
        if value is None:
            raise fail(self.pos, f"'{self.name}' is read before it is set")
        return value
        yield


@pure
@dataclass
class Convert(Expr):
    arg: Expr
    type: CType
    pos: tuple[int, int]

    @property
    def const(self):
        return self.arg.const

    def ev(self, run, mask):
        return convert((yield from self.arg.ev(run, mask)), self.type)


_ARITH = {"+": np.add, "-": np.subtract, "*": np.multiply, "&": np.bitwise_and,
          "|": np.bitwise_or, "^": np.bitwise_xor, "<": np.less, "<=": np.less_equal,
          ">": np.greater, ">=": np.greater_equal, "==": np.equal, "!=": np.not_equal}


@dataclass
class Pair(Expr):
    """An operator with two operands (the fields Binary and Logic share)."""

    op: str
    a: Expr
    b: Expr
    type: CType
    pos: tuple[int, int]

    @property
    def const(self):
        return self.a.const and self.b.const


@pure
class Binary(Pair):
    """`a op b` with both operands already converted to one type (shifts: left's type)."""

    def ev(self, run, mask):
        a = yield from self.a.ev(run, mask)
        b = yield from self.b.ev(run, mask)
        if isinstance(a, Unknown) or isinstance(b, Unknown):
            return a if isinstance(a, Unknown) else b
        op = self.op
        if op in _ARITH:
            out = _ARITH[op](a, b)
            if self.type == BF16:
                return round_bf16(out)
            return out.astype(INT.dtype) if out.dtype == np.bool_ else out
        if op in ("/", "%"):
            out = self._divide(run, a, b, mask)
            return round_bf16(out) if self.type == BF16 else out
        bits = self.type.size * 8
        bad = (b < 0) | (b >= bits)
        if np.any(bad & mask):  # undefined in C: an error only if it decides an address
            return Unknown(f"a shift count outside [0, {bits}) in '{op}' (line {self.pos[0]})")
        b = np.where(bad, 0, b).astype(self.type.dtype) if np.ndim(bad) else b
        return np.left_shift(a, b) if op == "<<" else np.right_shift(a, b)

    def _divide(self, run, a, b, mask):
        if self.type.floating:
            return a / b if self.op == "/" else np.fmod(a, b)
        zero = b == 0
        if np.any(zero & mask):
            where = f" at {first_lane(run, np.broadcast_to(zero & mask, run.shape))}" \
                if run else ""
            raise fail(self.pos, f"division by zero in '{self.op}'{where}")
        quotient, remainder = c_divmod(a, b)
        return quotient if self.op == "/" else remainder


@pure
@dataclass
class Unary(Expr):
    op: str  # "-", "~", "!"
    arg: Expr
    type: CType
    pos: tuple[int, int]

    @property
    def const(self):
        return self.arg.const

    def ev(self, run, mask):
        v = yield from self.arg.ev(run, mask)
        if isinstance(v, Unknown):
            return v
        if self.op == "!":
            return (v == 0).astype(INT.dtype)
        return np.negative(v) if self.op == "-" else np.invert(v)


@pure
class Logic(Pair):
    """`a && b`, `a || b`: b runs only on the lanes that need it."""

    def ev(self, run, mask):
        a = known((yield from self.a.ev(run, mask)), self.a.pos, "a condition") != 0
        need = mask & (a if self.op == "&&" else ~a)
        if not np.any(need):
            return np.broadcast_to(a, np.shape(mask)).astype(INT.dtype)
        b = known((yield from self.b.ev(run, need)), self.b.pos, "a condition") != 0
        return ((a & b) if self.op == "&&" else (a | b)).astype(INT.dtype)


@pure
@dataclass
class Select(Expr):
    """`c ? a : b`: each arm runs only on its lanes."""

    c: Expr
    a: Expr
    b: Expr
    type: CType
    pos: tuple[int, int]

    @property
    def const(self):
        return self.c.const and self.a.const and self.b.const

    def ev(self, run, mask):
        c = known((yield from self.c.ev(run, mask)), self.c.pos, "a condition") != 0
        if np.ndim(c) == 0:
            return (yield from (self.a if c else self.b).ev(run, mask))
        yes, no = mask & c, mask & ~c
        a = (yield from self.a.ev(run, yes)) if yes.any() else None
        b = (yield from self.b.ev(run, no)) if no.any() else None
        if a is None or b is None:
            return b if a is None else a
        return merge(c, a, b)


@pure
@dataclass
class Offset(Expr):
    """Pointer arithmetic: address + index * scale (scale: bytes, negative to subtract)."""

    ptr: Expr
    index: Expr
    scale: int
    type: CType
    pos: tuple[int, int]

    @property
    def const(self):
        return self.ptr.const and self.index.const

    def ev(self, run, mask):
        p = yield from self.ptr.ev(run, mask)
        k = known((yield from self.index.ev(run, mask)), self.index.pos, "an address")
        known(p, self.pos, "an address")
        return p + np.asarray(k).astype(np.int64) * self.scale


@pure
@dataclass
class Vector(Expr):
    """make_float4(x, y, z, w) and friends: a tuple of components."""

    parts: list[Expr]
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        out = []
        for p in self.parts:
            out.append((yield from p.ev(run, mask)))
        return tuple(out)


@pure
@dataclass
class Field(Expr):
    """Component `i` of a vector value, member `i` of a struct value."""

    arg: Expr
    i: int
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        v = yield from self.arg.ev(run, mask)
        if isinstance(v, Unknown):
            return v
        if v[self.i] is None:
            raise fail(self.pos, "a member is read before it is set")
        return v[self.i]


def _scalars(t: CType, offset: int = 0) -> list[tuple[int, np.dtype]]:
    """(byte offset, dtype) of every number inside a value of type `t`, in tuple order."""
    if isinstance(t, Struct):
        return [s for m in t.members for s in _scalars(m.type, offset + m.offset)]
    if isinstance(t, (Array, Vec)):
        part = t.of if isinstance(t, Array) else t.base
        return [s for k in range(t.n) for s in _scalars(part, offset + k * part.size)]
    return [(offset, t.dtype)]


def _flat(value) -> list:
    return [x for v in value for x in _flat(v)] if isinstance(value, tuple) else [value]


def _nest(flat: list, like):
    """`flat` values in the tuple shape of `like`."""
    if not isinstance(like, tuple):
        return flat.pop(0)
    return tuple(_nest(flat, v) for v in like)


@pure
@dataclass
class Reinterpret(Expr):
    """`arg`'s bytes read as `type` (memcpy between locals of one size): per lane, the
    numbers' bytes in their layout, padding zero."""

    arg: Expr
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        v = yield from self.arg.ev(run, mask)
        leaves = _flat(v)
        like = blank(self.type) if isinstance(self.type, (Struct, Array, Vec)) else 0
        bad = next((x for x in leaves if x is None or isinstance(x, Unknown)), False)
        if bad is not False:
            bad = bad or Unknown(f"a member copied at line {self.pos[0]} before it is set")
            return _nest([bad] * len(_flat(like)), like)
        shape = np.broadcast_shapes(*(np.shape(x) for x in leaves))
        raw = np.zeros(shape + (self.arg.type.size,), dtype=np.uint8)
        for (off, dt), x in zip(_scalars(self.arg.type), leaves):
            part = np.broadcast_to(np.asarray(x, dtype=dt), shape)[..., None]
            raw[..., off:off + dt.itemsize] = np.ascontiguousarray(part).view(np.uint8)
        out = [raw[..., off:off + dt.itemsize].copy().view(dt)[..., 0]
               for off, dt in _scalars(self.type)]
        return _nest(out, like)


@pure
@dataclass
class Math(Expr):
    """A math function of numeric arguments (all converted to the result type)."""

    fn: object
    args: list[Expr]
    type: CType
    pos: tuple[int, int]

    @property
    def const(self):
        return all(a.const for a in self.args)

    def ev(self, run, mask):
        vals = []
        for a in self.args:
            vals.append((yield from a.ev(run, mask)))
        bad = next((v for v in vals if isinstance(v, Unknown)), None)
        return bad if bad is not None else convert(self.fn(*vals), self.type)


@pure
@dataclass
class Comma(Expr):
    first: Expr
    then: Expr
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        yield from self.first.ev(run, mask)
        return (yield from self.then.ev(run, mask))


@dataclass
class Memory:
    """An lvalue in memory: `type` at the address `addr` evaluates to, in the array `root`
    names (or in one of several: a pointer whose lanes point into different arrays).

    A load or store is one site, or for a whole struct a tuple of (byte offset, site): the
    struct's copy, one access per chunk of its alignment (see compile.struct_sites)."""

    addr: Expr
    type: CType
    space: str
    root: str
    pos: tuple[int, int]
    loops: tuple[tuple[str, int], ...]  # enclosing for-loop variables (name, slot)
    load_site: Site | tuple[tuple[int, Site], ...] | None = None
    store_site: Site | tuple[tuple[int, Site], ...] | None = None

    def _locate(self, run: Run, mask, address, width: int):
        """Each lane's byte offset in the array it points into, and (several arrays) the
        index of that array in the root's names, else None; an error for a lane outside."""
        names = roots(self.root)
        if len(names) == 1:
            base, nbytes = run.launch.space_of(self.space, self.root)
            offset = address - base
            bad = mask & ((offset < 0) | (offset + width > nbytes))
            if bad.any():
                w, lane = np.argwhere(bad)[0]
                raise fail(self.pos, f"element index {int(offset[w, lane] // width)} of "
                                     f"{self.root!r} outside [0, {nbytes // width}) at "
                                     f"{first_lane(run, bad)}")
            return offset, None
        offset = np.zeros(run.shape, dtype=np.int64)
        which = np.full(run.shape, -1)
        for j, name in enumerate(names):
            base, nbytes = run.launch.space_of(self.space, name)
            inside = (which < 0) & (address >= base) & (address + width <= base + nbytes)
            offset = np.where(inside, address - base, offset)
            which = np.where(inside, j, which)
        bad = mask & (which < 0)
        if bad.any():
            w, lane = np.argwhere(bad)[0]
            raise fail(self.pos, f"address {int(address[w, lane])} is inside none of "
                                 f"{self.root} at {first_lane(run, bad)}")
        return offset, which

    def _batch(self, run: Run, mask, address, site: Site) -> tuple[np.ndarray, Batch]:
        """Each lane's byte offset in its array, and the execution's Batch."""
        run.budget.charge(run.lanes + BATCH_UNITS, "this access", f"line {self.pos[0]}",
                          self.pos[1])
        address = np.broadcast_to(address, run.shape)
        width = site.width
        offset, _ = self._locate(run, mask, address, width)
        iteration = {name: np.broadcast_to(run.slots[slot], run.shape)
                     for name, slot in self.loops if isinstance(run.slots[slot], np.generic |
                                                                np.ndarray)}
        return offset, Batch(mask, offset // width, address, None, None, iteration)

    def _accesses(self, run: Run, mask, address, site) -> Events:
        parts = site if isinstance(site, tuple) else ((0, site),)
        for off, part in parts:
            yield self.space, part.index, self._batch(run, mask, address + off, part)[1]

    def load(self, run: Run, mask, address):
        site = self.load_site
        yield from self._accesses(run, mask, address, site)
        source = site[0][1].source if isinstance(site, tuple) else site.source
        return self.value(run, mask, np.broadcast_to(address, run.shape), self.type, source)

    def value(self, run: Run, mask, address, t: CType, source: str):
        """The value of type `t` at `address` from the arrays' configured values: a struct,
        array or vector member by member; Unknown where an array has no values to read. A
        scalar inside a wider element (a component of a vector-typed array's element) reads
        the element's value."""
        if isinstance(t, Struct):
            return tuple(self.value(run, mask, address + m.offset, m.type, source)
                         for m in t.members)
        if isinstance(t, (Array, Vec)):
            part = t.of if isinstance(t, Array) else t.base
            return tuple(self.value(run, mask, address + k * part.size, part, source)
                         for k in range(t.n))
        names = roots(self.root)
        found = [run.launch.readable(self.space, name, t.size) if isinstance(t, Num) else
                 None for name in names]
        missing = next((n for n, v in zip(names, found) if v is None), None)
        if missing is not None and self.space not in ("global", "constant"):
            return Unknown(f"data read from {self.space} memory by '{source}' (line "
                           f"{self.pos[0]}); what a kernel stores there is not tracked")
        if missing is not None:
            return Unknown(f"data loaded by '{source}' (line {self.pos[0]}); give "
                           f"'{missing}' values in the pattern file to read it"
                           + values_fix(missing, run.launch.arrays))
        offset, which = self._locate(run, mask, address, t.size)
        if which is None:
            values, width = found[0]
            return convert(values[np.where(mask, offset // width, 0)], t)
        out = None
        for j, (values, width) in enumerate(found):
            mine = values[np.where(mask & (which == j), offset // width, 0)]
            out = mine if out is None else np.where(which == j, mine, out)
        return convert(out, t)

    def store(self, run: Run, mask, address, value=None):
        yield from self._accesses(run, mask, address, self.store_site)


def blank(t: CType):
    """A local aggregate's value before any member is set: tuples with None leaves."""
    if isinstance(t, Struct):
        return tuple(blank(m.type) for m in t.members)
    if isinstance(t, Array):
        return tuple(blank(t.of) for _ in range(t.n))
    if isinstance(t, Vec):
        return (None,) * t.n
    return None


def _choose(parts: tuple, k: np.ndarray):
    """Per lane, part k[lane] of `parts` (values of one type; tuples member by member)."""
    if any(p is None for p in parts):
        return None
    unknown = next((p for p in parts if isinstance(p, Unknown)), None)
    if unknown is not None:
        return unknown
    if isinstance(parts[0], tuple):
        return tuple(_choose(tuple(p[j] for p in parts), k) for j in range(len(parts[0])))
    return np.choose(k, [np.broadcast_to(p, k.shape) for p in parts])


def _put(value, path: tuple, new, mask):
    """`value` with the part at `path` set to `new` on the lanes of `mask`."""
    if not path:
        return merge(mask, new, value)
    k, rest = path[0], path[1:]
    if isinstance(k, int):
        return value[:k] + (_put(value[k], rest, new, mask),) + value[k + 1:]
    return tuple(_put(v, rest, new, mask & (k == j)) if np.any(mask & (k == j)) else v
                 for j, v in enumerate(value))


@pure
@dataclass
class Part:
    """Part of a local variable's value: a struct member, an element of a member array, a
    vector component. `path` walks the value's tuples: an int, or an (index expression,
    length) pair for an index computed per lane."""

    slot: int
    path: tuple
    type: CType
    name: str  # source text, for errors
    pos: tuple[int, int]
    whole: CType  # the variable's type

    def _path(self, run: Run, mask):
        out = []
        for step in self.path:
            if isinstance(step, int):
                out.append(step)
                continue
            index, n = step
            k = known((yield from index.ev(run, mask)), index.pos, "an index")
            bad = mask & ((k < 0) | (k >= n))
            if np.any(bad):
                bad, k = np.broadcast_arrays(bad, k)
                lane = f" at {first_lane(run, bad)}" if bad.ndim else ""
                raise fail(self.pos, f"index {int(k[bad].flat[0])} of '{self.name}' outside "
                                     f"[0, {n}){lane}")
            out.append(int(k) if np.ndim(k) == 0 else np.where(mask, k, 0).astype(np.int64))
        return out

    def read(self, run: Run, mask):
        path = yield from self._path(run, mask)
        value = run.slots[self.slot]
        for k in path:
            if value is None or isinstance(value, Unknown):
                break
            value = value[k] if isinstance(k, int) else _choose(value, k)
        if value is None:
            raise fail(self.pos, f"'{self.name}' is read before it is set")
        return value

    def write(self, run: Run, mask, new):
        path = yield from self._path(run, mask)
        old = run.slots[self.slot]
        run.slots[self.slot] = _put(blank(self.whole) if old is None else old, tuple(path),
                                    new, mask)


@pure
@dataclass
class PartRead(Expr):
    """An rvalue read of part of a local variable."""

    part: Part
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        return (yield from self.part.read(run, mask))


@pure
@dataclass
class Load(Expr):
    """An rvalue read of memory: one load instruction."""

    mem: Memory
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        address = yield from self.mem.addr.ev(run, mask)
        return (yield from self.mem.load(run, mask, known(address, self.pos, "an address")))


@pure
@dataclass
class Assign(Expr):
    """`target = value`, `target op= value`, `++target`, `target++`.

    For the compound forms the old value is kept in slot `old` (value reads it), and the
    expression's result is the old value when `postfix`."""

    target: Memory | Part | int  # a Memory lvalue, part of a local, or a variable's slot
    value: Expr
    type: CType
    pos: tuple[int, int]
    old: int | None = None
    postfix: bool = False

    def ev(self, run, mask):
        target = self.target
        if isinstance(target, Part):
            if self.old is not None:
                run.slots[self.old] = yield from target.read(run, mask)
            new = convert((yield from self.value.ev(run, mask)), self.type)
            yield from target.write(run, mask, new)
        elif not isinstance(target, int):  # Memory, or a per-thread array's element
            address = known((yield from target.addr.ev(run, mask)), self.pos, "an address")
            if self.old is not None:
                run.slots[self.old] = yield from target.load(run, mask, address)
            new = convert((yield from self.value.ev(run, mask)), self.type)
            yield from target.store(run, mask, address, new)
        else:
            if self.old is not None:
                run.slots[self.old] = run.slots[target]
            new = convert((yield from self.value.ev(run, mask)), self.type)
            assign(run, mask, target, new)
        return run.slots[self.old] if self.postfix else new


def assign(run: Run, mask, slot: int, value) -> None:
    """Store `value` into a variable for the lanes of `mask`."""
    run.slots[slot] = merge(mask, value, run.slots[slot])


@pure
@dataclass
class Call(Expr):
    """An inlined __device__ function: arguments bound to its parameter slots."""

    name: str
    args: list[Expr]
    params: list[int]
    body: "Stmt"
    result: int  # slot of the return value
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        values = []
        for a in self.args:
            values.append((yield from a.ev(run, mask)))
        for slot, v in zip(self.params, values):
            run.slots[slot] = v
        saved = run.ret, run.brk, run.cont
        run.ret = run.brk = run.cont = None
        run.slots[self.result] = Unknown(f"the end of '{self.name}' without a return value")
        yield from self.body.run(run, mask)
        run.ret, run.brk, run.cont = saved
        return run.slots[self.result]


# ------------------------------------------------------------------ statements


class Stmt:
    def run(self, run: Run, mask) -> Events:
        raise NotImplementedError


NODE_TYPES: tuple[type, ...] = (Expr, Stmt, Memory, Part)  # what an IR node is (nodes_in)


def node(cls: type) -> type:
    """Declare a class outside those bases an IR node too (its fields hold nodes)."""
    global NODE_TYPES
    NODE_TYPES = NODE_TYPES + (cls,)
    return cls


@pure
@dataclass
class Block(Stmt):
    body: list[Stmt]

    def run(self, run, mask):
        for stmt in self.body:
            live = run.live(mask)
            if live is not mask and not live.any():
                return
            yield from stmt.run(run, live)


@pure
@dataclass
class Eval(Stmt):
    expr: Expr

    def run(self, run, mask):
        yield from self.expr.ev(run, mask)


@pure
@dataclass
class Declare(Stmt):
    """A local variable: a fresh value for the lanes that run the declaration."""

    slot: int
    init: Expr | None
    name: str

    def run(self, run, mask):
        run.slots[self.slot] = None if self.init is None else convert(
            (yield from self.init.ev(run, mask)), self.init.type)


@pure
@dataclass
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Stmt | None

    def run(self, run, mask):
        c = yield from self.cond.ev(run, mask)
        if isinstance(c, Unknown) and self.guessable:
            yield from self.both_sides(run, mask, c)
            return
        c = known(c, self.cond.pos, "a branch") != 0
        yes = mask & c
        if yes.any():
            yield from self.then.run(run, yes)
        if self.other is not None:
            no = mask & ~c
            if no.any():
                yield from self.other.run(run, no)

    def both_sides(self, run: Run, mask, cond: "Unknown"):
        """A branch on an unknown condition whose sides touch no memory and leave no loop
        or function: each side runs on every lane of the mask from the same variables;
        a variable either side sets keeps its value where both sides agree on every lane
        of the mask, and becomes Unknown (because of `cond`) elsewhere."""
        slots = assigned(self)
        before = {k: run.slots[k] for k in slots}
        after = []
        for side in (self.then, self.other):
            for k in slots:
                run.slots[k] = before[k]
            if side is not None:
                with np.errstate(all="ignore"):  # lanes that would not run this side
                    yield from side.run(run, mask)
            after.append({k: run.slots[k] for k in slots})
        why = Unknown(f"a variable set by the branch at line {self.cond.pos[0]} on {cond.why}")
        for k in slots:
            run.slots[k] = merge(mask, why, before[k]) if not agree(
                mask, after[0][k], after[1][k]) else merge(mask, after[0][k], before[k])

    @cached_property
    def guessable(self) -> bool:
        """Whether both sides may run on an unknown condition: every node under them is
        declared `pure` (no memory access, warp-wide operation, per-thread array, loop, or
        return/break/continue of the enclosing code; a return inside a called function is
        its own, so a call is looked into with its returns replaced by their values)."""
        stack = list(nodes_in([self.then, self.other]))
        while stack:
            x = stack.pop()
            if type(x) not in PURE:
                return False
            stack.extend([*nodes_in(x.args), *nodes_in(leaves(x.body))]
                         if isinstance(x, Call) else children(x))
        return True


def leaves(body: "Stmt") -> list:
    """A called function's body with its `return`s replaced by their values (a return
    leaves the call only)."""
    out, stack = [], [body]
    while stack:
        x = stack.pop()
        if isinstance(x, Leave) and x.kind == "ret":
            out.append(x.value)
        elif isinstance(x, Block):
            stack.extend(x.body)
        elif isinstance(x, If):
            stack.extend((x.cond, x.then, x.other))
        else:
            out.append(x)
    return [x for x in out if x is not None]


def assigned(node) -> list[int]:
    """The variable slots an IR tree may set (assignments, declarations, calls' parameters
    and results), in a fixed order."""
    slots: set[int] = set()
    for x in walk(node):
        if isinstance(x, Assign):
            slots.add(x.target if isinstance(x.target, int) else x.target.slot)
            slots.update(s for s in (x.old,) if s is not None)
        elif isinstance(x, Declare):
            slots.add(x.slot)
        elif isinstance(x, Call):
            slots.update((*x.params, x.result))
    return sorted(slots)


def agree(mask, a, b) -> bool:
    """Whether two values of a variable are equal on every lane of `mask` (Unknown or
    unset never agree)."""
    if a is None or b is None or isinstance(a, Unknown) or isinstance(b, Unknown):
        return a is b
    if isinstance(a, tuple):
        return all(agree(mask, x, y) for x, y in zip(a, b))
    same = np.asarray(a) == np.asarray(b)
    return bool(np.all(same[mask] if np.ndim(same) else same))


@dataclass
class Loop(Stmt):
    """for / while / do: runs until every lane has left (condition false, break, return)."""

    init: Stmt | None
    cond: Expr | None
    update: Expr | None
    body: Stmt
    test_first: bool
    pos: tuple[int, int]

    def run(self, run, mask):
        if self.init is not None:
            yield from self.init.run(run, mask)
        saved = run.brk, run.cont
        run.brk = run.cont = None
        alive = mask
        for n in count():
            if self.test_first or n:
                if self.cond is not None:
                    c = known((yield from self.cond.ev(run, alive)), self.cond.pos,
                              "a loop condition")
                    alive = alive & (c != 0)
                if not alive.any():
                    break
            run.budget.charge(self.steps * run.step, "this loop", f"line {self.pos[0]}",
                              self.pos[1])
            yield from self.body.run(run, alive)
            run.cont = None
            alive = run.live(alive)
            if self.update is not None and alive.any():
                yield from self.update.ev(run, alive)
        run.brk, run.cont = saved

    @cached_property
    def steps(self) -> int:
        """Interpreter steps of one iteration: its nodes, and one for the loop itself."""
        return 1 + size(self.cond) + size(self.update) + size(self.body)


@dataclass
class Leave(Stmt):
    """return / break / continue: the lanes of the mask leave."""

    kind: str  # "ret" | "brk" | "cont"
    value: Expr | None = None
    result: int | None = None  # slot of the enclosing device function's return value

    def run(self, run, mask):
        if self.value is not None:
            v = convert((yield from self.value.ev(run, mask)), self.value.type)
            old = run.slots[self.result]
            run.slots[self.result] = v if isinstance(old, Unknown) else merge(mask, v, old)
        off = getattr(run, self.kind)
        setattr(run, self.kind, mask if off is None else off | mask)


def size(node) -> int:
    """Nodes (expressions, statements, memory lvalues) in an IR tree, each occurrence
    counted; each is one interpreter step where it runs."""
    return sum(1 for _ in walk(node))
