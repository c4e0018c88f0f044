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

from ..model.errors import PatternError
from ..model.budget import BATCH_UNITS, STEP_LANES, STEP_UNITS, current
from ..model.kernel import Batch, Threads
from .ctype import BOOL, INT, CType, Num

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
    return value.astype(to.dtype) if hasattr(value, "astype") else to.dtype.type(value)


# ------------------------------------------------------------------ expressions


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
        next(gen)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("a constant expression yielded an access")


@dataclass
class Const(Expr):
    value: object
    type: CType
    pos: tuple[int, int] = (0, 0)
    const = True

    def ev(self, run, mask):
        return self.value
        yield


@dataclass
class Builtin(Expr):
    name: str  # threadIdx.x, warpSize, ...
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        return run.builtin(self.name)
        yield


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
            return out.astype(INT.dtype) if out.dtype == np.bool_ else out
        if op in ("/", "%"):
            return self._divide(run, a, b, mask)
        bits = self.type.size * 8
        bad = (b < 0) | (b >= bits)
        if np.any(bad & mask):
            raise fail(self.pos, f"shift count outside [0, {bits}) in '{op}'")
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
        if np.ndim(zero):
            b = np.where(zero, b.dtype.type(1), b)
        elif zero:
            b = b.dtype.type(1)
        q = a // b
        if self.type.signed:
            q = q + ((q * b != a) & ((a < 0) != (b < 0))).astype(q.dtype)
        return q if self.op == "/" else a - q * b


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


class Logic(Pair):
    """`a && b`, `a || b`: b runs only on the lanes that need it."""

    def ev(self, run, mask):
        a = known((yield from self.a.ev(run, mask)), self.a.pos, "a condition") != 0
        need = mask & (a if self.op == "&&" else ~a)
        if not np.any(need):
            return np.broadcast_to(a, np.shape(mask)).astype(INT.dtype)
        b = known((yield from self.b.ev(run, need)), self.b.pos, "a condition") != 0
        return ((a & b) if self.op == "&&" else (a | b)).astype(INT.dtype)


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


@dataclass
class Field(Expr):
    """Component `i` of a vector value."""

    arg: Expr
    i: int
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        v = yield from self.arg.ev(run, mask)
        return v if isinstance(v, Unknown) else v[self.i]


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


@dataclass
class Shuffle(Expr):
    """__shfl_sync / _up_sync / _down_sync / _xor_sync over whole warps (width 32): each lane
    reads `value` from a source lane given by `arg`; out-of-warp sources keep the own value."""

    kind: str  # "idx" | "up" | "down" | "xor"
    value: Expr
    arg: Expr
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        v = yield from self.value.ev(run, mask)
        k = known((yield from self.arg.ev(run, mask)), self.arg.pos, "a shuffle's source lane")
        if isinstance(v, Unknown) or np.ndim(v) == 0:
            return v
        lane = np.arange(32, dtype=np.int64)
        k = np.broadcast_to(k, run.shape).astype(np.int64)
        src = {"idx": lambda: k & 31,
               "up": lambda: np.where(lane - k >= 0, lane - k, lane),
               "down": lambda: np.where(lane + k < 32, lane + k, lane),
               "xor": lambda: (lane ^ k) & 31}[self.kind]()
        if isinstance(v, tuple):
            return tuple(np.take_along_axis(np.broadcast_to(c, run.shape), src, axis=1)
                         for c in v)
        return np.take_along_axis(np.broadcast_to(v, run.shape), src, axis=1)


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
    """An lvalue in memory: `type` at the address `addr` evaluates to, in one array."""

    addr: Expr
    type: CType
    space: str
    root: str
    pos: tuple[int, int]
    loops: tuple[tuple[str, int], ...]  # enclosing for-loop variables (name, slot)
    load_site: Site | None = None
    store_site: Site | None = None

    def _batch(self, run: Run, mask, address, site: Site):
        run.budget.charge(run.lanes + BATCH_UNITS, "this access", f"line {self.pos[0]}",
                          self.pos[1])
        address = np.broadcast_to(address, run.shape)
        base, nbytes = run.launch.space_of(self.space, self.root)
        offset = address - base
        width = site.width
        bad = mask & ((offset < 0) | (offset + width > nbytes))
        if bad.any():
            w, lane = np.argwhere(bad)[0]
            raise fail(self.pos, f"element index {int(offset[w, lane] // width)} of "
                                 f"{self.root!r} outside [0, {nbytes // width}) at "
                                 f"{first_lane(run, bad)}")
        iteration = {name: np.broadcast_to(run.slots[slot], run.shape)
                     for name, slot in self.loops if isinstance(run.slots[slot], np.generic |
                                                                np.ndarray)}
        return offset, Batch(mask, offset // width, address, None, None, iteration)

    def load(self, run: Run, mask, address):
        site = self.load_site
        offset, batch = self._batch(run, mask, address, site)
        yield self.space, site.index, batch
        values = run.launch.readable(self.space, self.root, self.type)
        if values is None:
            return Unknown(f"data loaded by '{site.source}' (line {self.pos[0]}); give "
                           f"'{self.root}' values in the pattern file to read it")
        size = self.type.size
        element = np.where(mask, offset // size, 0)
        return convert(values[element], self.type)

    def store(self, run: Run, mask, address):
        site = self.store_site
        yield self.space, site.index, self._batch(run, mask, address, site)[1]


@dataclass
class Load(Expr):
    """An rvalue read of memory: one load instruction."""

    mem: Memory
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        address = yield from self.mem.addr.ev(run, mask)
        return (yield from self.mem.load(run, mask, known(address, self.pos, "an address")))


@dataclass
class Assign(Expr):
    """`target = value`, `target op= value`, `++target`, `target++`.

    For the compound forms the old value is kept in slot `old` (value reads it), and the
    expression's result is the old value when `postfix`."""

    target: Memory | int  # a Memory lvalue, or a variable's slot
    value: Expr
    type: CType
    pos: tuple[int, int]
    old: int | None = None
    postfix: bool = False

    def ev(self, run, mask):
        target = self.target
        if isinstance(target, Memory):
            address = known((yield from target.addr.ev(run, mask)), self.pos, "an address")
            if self.old is not None:
                run.slots[self.old] = yield from target.load(run, mask, address)
            new = convert((yield from self.value.ev(run, mask)), self.type)
            yield from target.store(run, mask, address)
        else:
            if self.old is not None:
                run.slots[self.old] = run.slots[target]
            new = convert((yield from self.value.ev(run, mask)), self.type)
            assign(run, mask, target, new)
        return run.slots[self.old] if self.postfix else new


def assign(run: Run, mask, slot: int, value) -> None:
    """Store `value` into a variable for the lanes of `mask`."""
    run.slots[slot] = merge(mask, value, run.slots[slot])


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


@dataclass
class Block(Stmt):
    body: list[Stmt]

    def run(self, run, mask):
        for stmt in self.body:
            live = run.live(mask)
            if live is not mask and not live.any():
                return
            yield from stmt.run(run, live)


@dataclass
class Eval(Stmt):
    expr: Expr

    def run(self, run, mask):
        yield from self.expr.ev(run, mask)


@dataclass
class Declare(Stmt):
    """A local variable: a fresh value for the lanes that run the declaration."""

    slot: int
    init: Expr | None
    name: str

    def run(self, run, mask):
        run.slots[self.slot] = None if self.init is None else convert(
            (yield from self.init.ev(run, mask)), self.init.type)


@dataclass
class If(Stmt):
    cond: Expr
    then: Stmt
    other: Stmt | None

    def run(self, run, mask):
        c = known((yield from self.cond.ev(run, mask)), self.cond.pos, "a branch") != 0
        yes = mask & c
        if yes.any():
            yield from self.then.run(run, yes)
        if self.other is not None:
            no = mask & ~c
            if no.any():
                yield from self.other.run(run, no)


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
    """Nodes (expressions, statements, memory lvalues) in an IR tree, counted without
    recursion; each is one interpreter step where it runs."""
    nodes, stack = 0, [node]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, (Expr, Stmt, Memory)):
            nodes += 1
            stack.extend(getattr(x, name) for name in getattr(x, "__dataclass_fields__", ()))
    return nodes
