"""Closed forms for CUDA kernels: values carried per warp, loop runs counted whole.

The IR of ir.py is run over a chunk of warps with integer values kept symbolically:

    value[w, l] = base[w] + off[cls[w], l] + sum_s coef_s * j_s

where `cls[w]` is warp w's index in its block (thread coordinates depend only on it and on the
lane), `base` is per warp (block coordinates) and j_s is the iteration index of an enclosing
loop whose trip count is the same for every active lane: such a loop's body runs once with
j_s symbolic, and each access in it stands for every iteration (a RepeatedBatch). Active lanes
are a Mask: warps whose valid lanes are all active, plus explicit lanes of the rest.

Everything else is decided as the lane path decides it or given up: a value that is not of this
form is `Opaque` (known to the lane path, not here) and may flow only into data; a loop whose
body needs it per iteration is iterated one iteration at a time (`Varies`); anything that
would decide an address or a branch without a closed form, and anything that could raise an
error, stops the chunk (`NotClosed`) and the lane path runs it, so results and errors are the
lane path's.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

from ..model.budget import BATCH_UNITS, STEP_LANES, STEP_UNITS, charge, current
from ..model.closed_forms import (
    COMPARE,
    FLIP,
    MAX_SECTOR_BYTES,
    Aff,
    Chunk,
    Mask,
    NotClosed,
    Varies,
    repeated,
)
from ..model.sectors import WARP_SIZE
from . import async_copy, ir, lanes
from . import ctype as C

_SAFE = 2**62


def loop_work(trips: int, steps: int, inner: int = 0) -> int:
    """The least units the lane path spends on `trips` iterations of a loop of `steps`
    interpreter steps (STEP_UNITS each, at least), holding `inner` units of nested loops."""
    return trips * max(inner, steps * STEP_UNITS)


def refuse_sized(work: int, place: tuple[int, int] | None) -> None:
    """Refuse now (PatternError) a loop that will spend `work` units when the open budget
    holds less, instead of finding that out iteration by iteration."""
    if work and place is not None:
        current().check(work, "this loop", f"line {place[0]}", place[1])


class Unk:
    """A value the lane path does not know either (its ir.Unknown): sticky, like Unknown."""


class Opaque:
    """A value the lane path knows and this path does not track (data, floats, wraps)."""


class Carried(Opaque):
    """An untracked value that changes from one iteration of a compressed loop to the next."""


UNK, OPAQUE, CARRIED = Unk(), Opaque(), Carried()


def _kind(*values):
    """The untracked kind of an operation's result: Unk wins, then Carried, else Opaque."""
    if any(isinstance(v, Unk) for v in values):
        return next(v for v in values if isinstance(v, Unk))
    if any(_varies(v) for v in values):
        return CARRIED
    return OPAQUE


def _varies(v) -> bool:
    """Whether v may change from one iteration of a compressed loop to the next."""
    if isinstance(v, Guarded):
        return _varies(v.new) or _varies(v.old)
    return isinstance(v, Carried) or (isinstance(v, Aff) and bool(v.coef))


def _range(t) -> tuple[int, int]:
    """Values a C integer (or pointer) type holds, within int64."""
    if isinstance(t, C.Num) and not t.floating:
        bits = 8 * t.size
        lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if t.signed else (0, 2 ** bits - 1)
        return max(lo, -_SAFE), min(hi, _SAFE)
    return 0, _SAFE


def _tracked(t) -> bool:
    return isinstance(t, C.Pointer) or (isinstance(t, C.Num) and not t.floating)




# IR node class -> the method that carries it in closed form; every other node class is
# LANE_PATH_ONLY (the closed forms give way to the lane path where one runs); a test pairs
# every node class with exactly one of the two
CLOSED_EXPRESSIONS = {
    ir.Const: "e_const", ir.Builtin: "e_builtin", ir.Read: "e_read", ir.Convert: "e_convert",
    ir.Binary: "e_binary", ir.Unary: "e_unary", ir.Logic: "e_logic", ir.Select: "e_select",
    ir.Offset: "e_offset", ir.Vector: "e_vector", ir.Field: "e_field", ir.Math: "e_math",
    ir.Comma: "e_comma", ir.Load: "e_load", ir.Assign: "e_assign", ir.Call: "e_call"}
CLOSED_STATEMENTS = {
    ir.Block: "s_block", ir.Eval: "s_eval", ir.Declare: "s_declare", ir.If: "s_if",
    ir.Loop: "s_loop", ir.Leave: "s_leave"}
LANE_PATH_ONLY = frozenset({
    ir.Reinterpret, ir.Part, ir.PartRead, ir.Memory, lanes.Local, lanes.LocalDeclare,
    lanes.Opaque, lanes.Switch, lanes.Atomic, lanes.Shuffle, lanes.GroupShuffle, lanes.Vote,
    lanes.Match, lanes.GroupReduce, lanes.SegmentReduce, async_copy.AsyncCopy})


# nodes a compressed loop's condition and update may hold: no memory, calls or lanes
_PURE = {ir.Const, ir.Builtin, ir.Read, ir.Convert, ir.Binary, ir.Unary, ir.Logic, ir.Select,
         ir.Comma, ir.Assign, ir.Math}


@dataclasses.dataclass(frozen=True)
class LoopShape:
    """What a loop's compression needs to know statically."""

    counter: int | None  # the slot the update assigns; None: not compressible
    carried: tuple[int, ...]  # tracked slots the body assigns that outlive an iteration


def loop_shape(loop: ir.Loop) -> LoopShape:
    """A loop's counter and carried slots; counter None when it cannot be compressed: no
    condition, a condition or update with memory accesses or calls, a do loop, or a body that
    leaves (return, break, continue outside the device functions it calls)."""
    side = [n for part in (loop.cond, loop.update) if part is not None for n in ir.walk(part)]
    assigned = {n.target for n in side if isinstance(n, ir.Assign)
                and not isinstance(n.target, ir.Memory)}
    body = list(ir.walk(loop.body))
    calls = [n for n in body if isinstance(n, ir.Call)]
    inside = {id(n) for c in calls for n in ir.walk(c.body)}
    leaves = any(isinstance(n, ir.Leave) and id(n) not in inside for n in body)
    if (loop.cond is None or loop.update is None or not loop.test_first or leaves
            or len(assigned) != 1
            or any(type(n) not in _PURE for n in side)
            or any(isinstance(n, ir.Assign) and not isinstance(n.target, int) for n in side)):
        return LoopShape(None, ())
    fresh = {n.slot for n in body if isinstance(n, ir.Declare)}
    fresh |= {s for c in calls for s in (*c.params, c.result)}
    fresh |= {n.old for n in body if isinstance(n, ir.Assign) and n.old is not None}
    carried = {n.target for n in body if isinstance(n, ir.Assign) and isinstance(n.target, int)
               and n.target not in fresh and _tracked(n.type)}
    counter = next(iter(assigned))
    if counter in carried:
        return LoopShape(None, ())
    return LoopShape(counter, tuple(sorted(carried)))


class Guarded:
    """A variable assigned on the lanes of `mask` only: `new` there, `old` elsewhere."""

    __slots__ = ("mask", "new", "old")

    def __init__(self, mask: Mask, new, old):
        self.mask, self.new, self.old = mask, new, old


Event = tuple[str, int, Aff, Mask, tuple]


class Closed:
    """Runs a compiled program over one chunk in closed form -> the chunk's access events."""

    def __init__(self, launch, chunk: Chunk):
        self.launch = launch
        self.ck = chunk
        self.slots: list = [None] * launch.program.slots
        self.ret = self.brk = self.cont = None
        self.events: list[Event] = []
        self.loops = list(chunk.block_loops)  # symbols around an access: (symbol, trips)
        self.symbols = itertools.count()
        self.shapes: dict[int, LoopShape] = launch.loop_shapes
        self._trips: dict[int, int | None] = {}  # id of a loop being compressed -> its trips
        self.step = STEP_UNITS + chunk.n // STEP_LANES  # units of one step over the rows
        self._expr = {cls: getattr(self, name) for cls, name in CLOSED_EXPRESSIONS.items()}
        self._stmt = {cls: getattr(self, name) for cls, name in CLOSED_STATEMENTS.items()}

    def run(self) -> list[Event]:
        for slot, value in self.launch.program.inits:
            self.slots[slot] = self.constant(value)
        charge(self.launch.program.steps * self.step, "the kernel's code", "kernel")
        self.stmt(self.launch.program.body, self.ck.all)
        return self.events

    @staticmethod
    def constant(value):
        if isinstance(value, ir.Unknown):
            return UNK
        if isinstance(value, (np.integer, int, np.bool_)):
            return Aff(int(value))
        return OPAQUE

    # ------------------------------------------------------------ helpers

    def ev(self, e: ir.Expr, m: Mask):
        method = self._expr.get(type(e))
        if method is None:
            raise NotClosed(type(e).__name__)
        return method(e, m)

    def stmt(self, s: ir.Stmt, m: Mask) -> None:
        method = self._stmt.get(type(s))
        if method is None:
            raise NotClosed(type(s).__name__)
        method(s, m)

    def resolve(self, v, m: Mask):
        """A variable's value on the lanes of m (a Guarded one must not be split by m)."""
        while isinstance(v, Guarded):
            if self.ck.empty(self.ck.minus(m, v.mask)):
                v = v.new
            elif self.ck.empty(self.ck.combine(m, v.mask, np.logical_and)):
                v = v.old
            else:
                raise NotClosed("a variable set on some lanes only")
        return v

    def need(self, v, m: Mask) -> Aff:
        """An address, branch or count: it must have a closed form."""
        v = self.resolve(v, m)
        if isinstance(v, Aff):
            return v
        raise Varies() if isinstance(v, Carried) else NotClosed("not affine")

    def fits(self, v: Aff, t) -> Aff | Opaque:
        """v if C's type t holds it everywhere (no wrap), else an untracked value."""
        lo, hi = self.ck.bounds(v)
        tlo, thi = _range(t)
        return v if tlo <= lo and hi <= thi else _kind(v)

    def merge(self, m: Mask, new, old):
        """ir.merge: new on the lanes of m, old elsewhere (Unknown is sticky)."""
        if isinstance(new, Unk) or old is None:
            return new
        if isinstance(old, Unk):
            return old
        if isinstance(new, Opaque) and isinstance(old, Opaque):
            return _kind(new, old)
        if isinstance(old, Guarded) and old.mask is m:
            old = old.old
        return Guarded(m, new, old)

    def soft(self, v, m: Mask):
        """resolve(), or an untracked value where m splits a Guarded one."""
        try:
            return self.resolve(v, m)
        except NotClosed:
            return _kind(v.new, v.old)

    def assign(self, m: Mask, slot: int, value) -> None:
        self.slots[slot] = self.merge(m, value, self.slots[slot])

    # ------------------------------------------------------------ expressions

    def e_const(self, e: ir.Const, m):
        return self.constant(e.value) if _tracked(e.type) else OPAQUE

    def e_builtin(self, e: ir.Builtin, m):
        vector, _, axis = e.name.partition(".")
        if e.name == "warpSize":
            return Aff(WARP_SIZE)
        if axis not in ("x", "y", "z"):
            raise NotClosed(e.name)
        i = "xyz".index(axis)
        if vector == "threadIdx":
            return Aff(0, self.ck.thread[i])
        if vector == "blockIdx":
            return self.ck.block[i]
        if vector == "blockDim":
            return Aff(self.launch.block[i])
        if vector == "gridDim":
            return Aff(self.launch.grid[i])
        raise NotClosed(e.name)

    def e_read(self, e: ir.Read, m):
        v = self.slots[e.slot]
        if v is None:
            raise NotClosed("read before set")
        return v

    def e_convert(self, e: ir.Convert, m):
        return self.converted(self.ev(e.arg, m), e.type, m)

    def e_binary(self, e: ir.Binary, m):
        a = self.ev(e.a, m)
        b = self.ev(e.b, m)
        if isinstance(a, Unk) or isinstance(b, Unk):
            return a if isinstance(a, Unk) else b
        op, t = e.op, e.type
        if op in ("/", "%", "<<", ">>") and not (isinstance(t, C.Num) and t.floating):
            b = self.need(b, m)
            lo, hi = self.ck.extent(b, m) or (1, 1)
            bad = lo <= 0 <= hi if op in "/%" else lo < 0 or hi >= 8 * t.size
            if bad:
                raise NotClosed("division by zero or a shift out of range")
        if not _tracked(t) or op in COMPARE or op in ("&", "|", "^"):
            return _kind(a, b)
        a, b = self.soft(a, m), self.soft(b, m)
        if not isinstance(a, Aff) or not isinstance(b, Aff):
            return _kind(a, b)
        if op == "+":
            out = a + b
        elif op == "-":
            out = a + b.scaled(-1)
        elif op == "*":
            if not (a.scalar or b.scalar):
                return _kind(a, b)
            out = a.scaled(b.base) if b.scalar else b.scaled(a.base)
        elif not b.scalar:
            return _kind(a, b)
        elif op == "<<":
            out = a.scaled(2 ** b.base)
        else:
            out = self.ck.quotient(a, 2 ** b.base if op == ">>" else b.base, op == "%")
            if out is None:
                return _kind(a, b)
        return self.fits(out, t)

    def e_unary(self, e: ir.Unary, m):
        v = self.ev(e.arg, m)
        if isinstance(v, Unk):
            return v
        v = self.soft(v, m)
        if e.op == "-" and isinstance(v, Aff) and _tracked(e.type):
            return self.fits(v.scaled(-1), e.type)
        return _kind(v)

    def e_logic(self, e: ir.Logic, m):
        self.cond(e, m)
        return OPAQUE

    def e_select(self, e: ir.Select, m):
        yes = self.cond(e.c, m)
        no = self.ck.minus(m, yes)
        a = self.ev(e.a, yes) if yes.any() else None
        b = self.ev(e.b, no) if no.any() else None
        if a is None or b is None:
            return b if a is None else a
        return self.merge(yes, a, b)

    def e_offset(self, e: ir.Offset, m):
        p = self.ev(e.ptr, m)
        k = self.need(self.ev(e.index, m), m)
        p = self.need(p, m)
        return self.fits(p + k.scaled(e.scale), C.LONG)

    def e_vector(self, e: ir.Vector, m):
        parts = [self.ev(p, m) for p in e.parts]
        if any(isinstance(p, Unk) for p in parts):
            raise NotClosed("a vector with unknown parts")
        return OPAQUE

    def e_field(self, e: ir.Field, m):
        v = self.ev(e.arg, m)
        return v if isinstance(v, Unk) else _kind(v)

    def e_math(self, e: ir.Math, m):
        vals = [self.ev(a, m) for a in e.args]
        return _kind(*vals)

    def e_comma(self, e: ir.Comma, m):
        self.ev(e.first, m)
        return self.ev(e.then, m)

    def access(self, mem: ir.Memory, m: Mask, address: Aff, site) -> None:
        """Check an access's range like Memory._locate and record it (a struct copy: one
        access per part, at its byte offset)."""
        if len(C.roots(mem.root)) != 1 or mem.space not in ("global", "shared", "constant"):
            raise NotClosed("a pointer into several arrays")
        base, nbytes = self.launch.space_of(mem.space, mem.root)
        for off, part in site if isinstance(site, tuple) else ((0, site),):
            charge(self.ck.n + BATCH_UNITS, "this access", f"line {mem.pos[0]}", mem.pos[1])
            at = address + Aff(off)
            span = self.ck.extent(at, m)
            if span is not None and (span[0] < base or span[1] - base + part.width > nbytes):
                raise NotClosed("an access outside its array")
            self.events.append((mem.space, part.index, at, m, tuple(self.loops)))

    def load(self, mem: ir.Memory, m: Mask, address: Aff):
        self.access(mem, m, address, mem.load_site)
        launch = self.launch
        if mem.space == "global" and launch.arrays[mem.root].spec.values is not None or \
                mem.space == "constant" and mem.root in launch.program.constant_values:
            raise NotClosed("data the lane path reads")
        return UNK

    def e_load(self, e: ir.Load, m):
        if type(e.mem) is not ir.Memory:
            raise NotClosed(type(e.mem).__name__)
        address = self.need(self.ev(e.mem.addr, m), m)
        return self.load(e.mem, m, address)

    def e_assign(self, e: ir.Assign, m):
        target = e.target
        if type(target) not in (ir.Memory, int):
            raise NotClosed(type(target).__name__)
        if isinstance(target, ir.Memory):
            address = self.need(self.ev(target.addr, m), m)
            if e.old is not None:
                self.slots[e.old] = self.load(target, m, address)
            new = self.converted(self.ev(e.value, m), e.type, m)
            self.access(target, m, address, target.store_site)
        else:
            if e.old is not None:
                self.slots[e.old] = self.slots[target]
            new = self.converted(self.ev(e.value, m), e.type, m)
            self.assign(m, target, new)
        return self.slots[e.old] if e.postfix else new

    def converted(self, v, t, m):
        """A value converted to C type t (ir.convert): checked to fit, or untracked."""
        if isinstance(v, Unk):
            return v
        if not _tracked(t) or t is C.BOOL:
            return _kind(v)
        if isinstance(v, Guarded):
            return v if isinstance(t, C.Pointer) else _kind(v)
        return self.fits(v, t) if isinstance(v, Aff) else v

    def e_call(self, e: ir.Call, m):
        values = [self.ev(a, m) for a in e.args]
        for slot, v in zip(e.params, values):
            self.slots[slot] = v
        saved = self.ret, self.brk, self.cont
        self.ret = self.brk = self.cont = None
        self.slots[e.result] = UNK
        self.stmt(e.body, m)
        self.ret, self.brk, self.cont = saved
        return self.slots[e.result]

    # ------------------------------------------------------------ conditions

    def cond(self, e: ir.Expr, m: Mask) -> Mask:
        """The lanes of m where `e` is true (nonzero), evaluating it like the lane path."""
        if isinstance(e, ir.Logic):
            a = self.cond(e.a, m)
            need = a if e.op == "&&" else self.ck.minus(m, a)
            if not need.any():
                return a
            b = self.cond(e.b, need)
            return b if e.op == "&&" else self.ck.combine(a, b, np.logical_or)
        if isinstance(e, ir.Unary) and e.op == "!":
            return self.ck.minus(m, self.cond(e.arg, m))
        if isinstance(e, ir.Binary) and e.op in COMPARE:
            a = self.ev(e.a, m)
            b = self.ev(e.b, m)
            a, b = self.need(a, m), self.need(b, m)
            return self.ck.holds(a + b.scaled(-1), e.op, m)
        if type(e) not in self._expr:
            raise NotClosed(type(e).__name__)
        return self.ck.holds(self.need(self.ev(e, m), m), "!=", m)

    # ------------------------------------------------------------ statements

    def live(self, m: Mask) -> Mask:
        for off in (self.ret, self.brk, self.cont):
            m = self.ck.minus(m, off)
        return m

    def s_block(self, s: ir.Block, m):
        for stmt in s.body:
            leaving = any(x is not None for x in (self.ret, self.brk, self.cont))
            live = self.live(m) if leaving else m
            if live is not m and not live.any():
                return
            self.stmt(stmt, live)

    def s_eval(self, s: ir.Eval, m):
        self.ev(s.expr, m)

    def s_declare(self, s: ir.Declare, m):
        self.slots[s.slot] = None if s.init is None else \
            self.converted(self.ev(s.init, m), s.init.type, m)

    def s_if(self, s: ir.If, m):
        yes = self.cond(s.cond, m)
        if yes.any():
            self.stmt(s.then, yes)
        if s.other is not None:
            no = self.ck.minus(m, yes)
            if no.any():
                self.stmt(s.other, no)

    def s_leave(self, s: ir.Leave, m):
        if s.value is not None:
            v = self.converted(self.ev(s.value, m), s.value.type, m)
            old = self.slots[s.result]
            self.slots[s.result] = v if isinstance(old, Unk) else self.merge(m, v, old)
        off = getattr(self, s.kind)
        setattr(self, s.kind, m if off is None else self.ck.combine(off, m, np.logical_or))

    def s_loop(self, s: ir.Loop, m):
        shape = self.shapes.get(id(s))
        if shape is None:
            shape = self.shapes[id(s)] = loop_shape(s)
        if shape.counter is not None:
            saved = (list(self.slots), len(self.events), len(self.loops),
                     (self.ret, self.brk, self.cont))
            try:
                if self.compressed(s, shape, m):
                    return
            except Varies:
                trips = self._trips.get(id(s))
                if trips:  # iterated below: each iteration a charge, so size it first
                    refuse_sized(trips * s.steps * self.step, s.pos)
            self.slots[:], (self.ret, self.brk, self.cont) = saved[0], saved[3]
            del self.events[saved[1]:], self.loops[saved[2]:]
        self.iterate(s, m)

    def iterate(self, s: ir.Loop, m):
        """ir.Loop.run, one iteration at a time."""
        if s.init is not None:
            self.stmt(s.init, m)
        saved = self.brk, self.cont
        self.brk = self.cont = None
        alive = m
        for n in itertools.count():
            if s.test_first or n:
                if s.cond is not None:
                    alive = self.cond(s.cond, alive)
                if not alive.any():
                    break
            charge(s.steps * self.step, "this loop", f"line {s.pos[0]}", s.pos[1])
            self.stmt(s.body, alive)
            self.cont = None
            alive = self.live(alive)
            if s.update is not None and alive.any():
                self.ev(s.update, alive)
        self.brk, self.cont = saved

    def compressed(self, s: ir.Loop, shape: LoopShape, m: Mask) -> bool:
        """Run the loop's body once for all its iterations; False if the trip count is not
        the same for every active lane or the update is not `counter += constant`."""
        self._trips[id(s)] = None  # set once the trip count is known
        if s.init is not None:
            self.stmt(s.init, m)
        for slot in shape.carried:  # they change from one iteration to the next
            if not isinstance(self.slots[slot], Unk):
                self.slots[slot] = CARRIED
        k = self.soft(self.slots[shape.counter], m)
        if not isinstance(k, Aff) or k.coef:
            return False
        self.ev(s.update, m)
        new = self.soft(self.slots[shape.counter], m)
        step = self.ck.constant(new + k.scaled(-1), m) if isinstance(new, Aff) else None
        if not step:
            return False
        sym = next(self.symbols)
        counter = k + Aff(0, None, ((sym, step),))
        trips = None
        for span in (1, None):  # the count, then checked with the symbol's whole range
            self.ck.trips[sym] = span or trips + 1
            self.slots[shape.counter] = counter
            found = self.trips(s.cond, sym, m)
            if found is None or found != (trips if span is None else found):
                return False
            trips = found
        if trips:
            self._trips[id(s)] = trips
            self.ck.trips[sym] = trips
            self.ev(s.update, m)
            after = self.soft(self.slots[shape.counter], m)
            if not isinstance(after, Aff) or not self._same(after, counter + Aff(step), m):
                return False
            entry = [self.slots[slot] for slot in shape.carried]
            before = list(self.slots)
            self.slots[shape.counter] = counter
            self.loops.append((sym, trips))
            charge(s.steps * self.step, "this loop", f"line {s.pos[0]}", s.pos[1])
            try:
                self.stmt(s.body, m)
            except NotClosed as err:  # the lane path iterates: what it will spend at least
                err.work, err.place = loop_work(trips, s.steps, err.work), s.pos
                raise
            self.loops.pop()
            for slot, was in zip(shape.carried, entry):
                self.slots[slot] = UNK if isinstance(was, Unk) or isinstance(
                    self.slots[slot], Unk) else OPAQUE
            self._settle(sym, trips, before)
        self.slots[shape.counter] = k + Aff(step * trips)
        return True

    def _same(self, a: Aff, b: Aff, m: Mask) -> bool:
        return self.ck.constant(a + b.scaled(-1), m) == 0

    def _settle(self, sym: int, trips: int, before: list) -> None:
        """Slots the body set that still hold its symbol get the last iteration's value."""
        for i, v in enumerate(self.slots):
            if v is before[i]:
                continue
            if isinstance(v, Aff) and any(s == sym for s, _ in v.coef):
                c = dict(v.coef)[sym]
                rest = tuple((s, x) for s, x in v.coef if s != sym)
                self.slots[i] = Aff(v.base, v.off, rest) + Aff(c * (trips - 1))
            elif isinstance(v, Guarded):
                self.slots[i] = OPAQUE  # set in the body, out of scope after it

    def trips(self, cond: ir.Expr, sym: int, m: Mask) -> int | None:
        """Iterations before `cond` (a comparison, linear in the loop's symbol) first fails,
        if the same for every active lane; None otherwise, or if it would never fail."""
        if not (isinstance(cond, ir.Binary) and cond.op in COMPARE):
            return None
        a = self.ev(cond.a, m)
        b = self.ev(cond.b, m)
        if not isinstance(a, Aff) or not isinstance(b, Aff):
            return None
        d = a + b.scaled(-1)
        c = dict(d.coef).get(sym, 0)
        if len(d.coef) != (1 if c else 0):
            return None
        span = self.ck.extent(Aff(d.base, d.off), m)
        if span is None or span[0] != span[1]:
            return None
        d0, op = span[0], cond.op
        if op in (">", ">="):
            d0, c, op = -d0, -c, FLIP[op]
        if op == "<":
            found = 0 if d0 >= 0 else (None if c <= 0 else -(d0 // c))
        elif op == "<=":
            found = 0 if d0 > 0 else (None if c <= 0 else -d0 // c + 1)
        elif op == "==":
            found = 0 if d0 else 1 if c else None
        else:
            found = -d0 // c if c and -d0 % c == 0 and -d0 // c >= 0 else None
        if found is None:
            raise NotClosed("a loop that never ends")  # the lane path stops it
        return found


def closed_events(launch, lo: int, hi: int, sector_bytes: int, box: tuple | None = None):
    """(space, site index, RepeatedBatch) for every global and shared access of warps
    [lo, hi) in program order (shared addresses: offsets in the block's shared memory), a row
    per warp, or per class when `box` gives the warps as a box of blocks; raises NotClosed
    (or Varies, for a box) where they do not apply."""
    if sector_bytes > MAX_SECTOR_BYTES:
        raise NotClosed("sectors wider than the closed forms' tables")
    chunk = Chunk(launch, lo, hi, box)
    runner = Closed(launch, chunk)
    return [(space, k, repeated(chunk, address, m, loops))
            for space, k, address, m, loops in runner.run()
            if space in ("global", "shared") and m.any()]
