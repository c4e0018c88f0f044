"""Closed forms on PTX: the entry run over a chunk of warps with integer registers carried
symbolically (symbolic.py), so that a row is a warp, or a class of warps over a box of whole
blocks (block coordinates are symbols), and a loop's iterations run once (loops.py,
compress.py): every access of the chunk comes out as a RepeatedBatch.

The SIMT stack is execute.Machine's, over Masks: a branch whose predicate splits the active
lanes pushes both paths, which meet at the branch's immediate post-dominator. Loads give
Opaque values (memory contents are never tracked: a loaded value may flow into data and
stores, never into an address, a branch or a guard); ld.param reads the parameter's bytes.
Anything else stops the chunk (NotClosed: the lane path runs it and decides the numbers and
errors); Varies stops a box (a value depends on a block symbol where it may not).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np

from ..budget import BATCH_UNITS, STEP_LANES, STEP_UNITS, charge
from ..closed_forms import Aff, Chunk, Mask, NotClosed, Varies, repeated
from ..repeat import RepeatedBatch
from ..sectors import WARP_SIZE
from .bits import FLOATS, INT_DTYPES, WIDTH, immediate
from .compress import compressed
from .execute import UNKNOWN_SPECIALS
from .loops import GiveUp
from .memory_ops import ATOM_REDUCE
from .parse import Instruction, Operand
from .program import CONST_GENERIC, LOCAL_GENERIC, SHARED_GENERIC, WINDOW
from .refuse import NO_OPS
from .scalar_ops import compute
from .sites import Site, data_type, space_of, vector_parts
from .symbolic import (
    CARRIED,
    OPAQUE,
    SAFE,
    Carried,
    Guarded,
    Opaque,
    SymPred,
    Value,
    concrete,
    divided,
    from_typed,
    magnitude,
    need,
    typed_lanes,
    wrapped,
)

if TYPE_CHECKING:
    from .kernel import CompiledKernel

Event = tuple[str, int, Aff, Mask, tuple[tuple[int, int], ...]]
AFFINE_OPS = ("add", "sub", "mul", "mad", "shl", "neg")
DIVISIONS = ("shr", "div", "rem", "and")  # of a value with symbols, by literals
COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
               "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
SPECIAL_AXES = ("%tid", "%ctaid", "%ntid", "%nctaid")
GENERIC = (("shared", SHARED_GENERIC), ("local", LOCAL_GENERIC), ("constant", CONST_GENERIC))


class ClosedMachine:
    """One closed-form run of a CompiledKernel's entry over a Chunk -> its access events."""

    def __init__(self, kernel: "CompiledKernel", chunk: Chunk):
        self.kernel, self.ck = kernel, chunk
        self.prog = kernel.program
        self.code = self.prog.entry.instructions
        self.regs: dict[str, Value] = {}
        self.events: list[Event] = []
        self.loops: list[tuple[int, int]] = list(chunk.block_loops)
        self.symbols = itertools.count()
        self.headers = kernel.natural_loops
        self.step = STEP_UNITS + chunk.n * WARP_SIZE // STEP_LANES
        counters: dict[str, int] = {}
        self.sites: dict[int, list[tuple[int, Site]]] = {}
        for s in kernel.sites:
            k = counters.get(s.space, 0)
            counters[s.space] = k + 1
            self.sites.setdefault(s.at, []).append((k, s))

    def run(self) -> list[Event]:
        self.region(0, len(self.code) + 1, self.ck.all, True)
        return self.events

    # ------------------------------------------------------------------ control

    def region(self, start: int, stop: int, mask: Mask, outermost: bool) -> None:
        """Run from `start` until every lane of mask reaches `stop` (the whole entry when
        outermost; else the body of the loop whose header is `start`, run as code, which
        lanes may not leave: GiveUp)."""
        n = len(self.code)
        stack: list[list[Any]] = [[start, stop, mask, -1 if outermost else start]]
        while stack:
            top = stack[-1]
            pc, rpc, m, skip = top
            if skip >= 0 and not skip <= pc <= self.headers[skip]:
                top[3] = skip = -1
            if pc == rpc or not m.any():
                stack.pop()
                continue
            if pc >= n:
                self._leave(stack, m, outermost)
                continue
            if pc in self.headers and skip != pc:
                if compressed(self, pc, m):
                    top[0] = self.headers[pc] + 1
                    continue
                top[3] = pc  # iterated: the header runs as code from here on
            ins = self.code[pc]
            charge(self.step, "running the compiled kernel", *self.kernel.where(ins))
            act = self.guarded(ins, m)
            if ins.op == "bra":
                self._branch(stack, top, pc, act, (start, stop, outermost))
                continue
            top[0] = pc + 1
            if ins.op in ("ret", "exit"):
                if act.any():
                    self._leave(stack, act, outermost)
                continue
            if act.any():
                self.execute(ins, pc, act)

    def _leave(self, stack: list[list[Any]], lanes: Mask, outermost: bool) -> None:
        if not outermost:
            raise GiveUp()
        for entry in stack:
            entry[2] = self.ck.minus(entry[2], lanes)

    def _branch(self, stack: list[list[Any]], top: list[Any], pc: int, taken: Mask,
                bounds: tuple[int, int, bool]) -> None:
        start, stop, outermost = bounds
        target = self.prog.entry.labels.get(self.code[pc].operands[0].name)
        if target is None:
            raise NotClosed("a branch to an unknown label")
        fall = self.ck.minus(top[2], taken)
        if taken.any() and not outermost and not start <= target <= stop:
            raise GiveUp()  # a way out of the loop's body
        if not fall.any():
            top[0] = target
            return
        if not taken.any():
            top[0] = pc + 1
            return
        meet = self.prog.reconverge.get(pc, len(self.code) + 1)
        if not outermost and not start <= meet <= stop:
            raise GiveUp()
        if meet == top[1]:
            stack.pop()
        else:
            top[0] = meet
        for begin, lanes in ((pc + 1, fall), (target, taken)):
            if begin != meet:
                stack.append([begin, meet, lanes, top[3]])

    def guarded(self, ins: Instruction, m: Mask) -> Mask:
        if ins.guard is None:
            return m
        name, negated = ins.guard
        p = self.lanes_of(self.regs.get(name), m)
        return self.ck.minus(m, p) if negated else p

    def lanes_of(self, v: Value, m: Mask) -> Mask:
        """The lanes of m where predicate value v is true."""
        ck = self.ck
        if isinstance(v, Guarded):
            inside = ck.combine(m, v.mask, np.logical_and)
            outside = ck.minus(m, v.mask)
            parts = [self.lanes_of(x, part) for x, part in ((v.new, inside), (v.old, outside))
                     if part.any()]
            return parts[0] if len(parts) == 1 else ck.combine(parts[0], parts[1], np.logical_or)
        if isinstance(v, Mask):
            return ck.combine(m, v, np.logical_and)
        if isinstance(v, SymPred):
            return ck.holds(v.d, v.op, m)
        if isinstance(v, Carried):
            raise Varies()
        raise NotClosed("a predicate without a closed form")

    # ------------------------------------------------------------------ registers

    def whole(self, m: Mask) -> bool:
        return not len(m.mixed) and bool(m.full.all())

    def assign(self, name: str, value: Value, m: Mask) -> None:
        old = self.regs.get(name)
        if self.whole(m):
            self.regs[name] = value
            return
        if isinstance(old, Guarded) and not self.ck.minus(old.mask, m).any():
            old = old.old
        self.regs[name] = Guarded(m, value, old)

    def resolved(self, v: Value, m: Mask) -> Value:
        """A register's value on the lanes of m (Opaque where m splits a partial write,
        unless both sides are concrete: then their lanes, merged)."""
        while isinstance(v, Guarded):
            if not self.ck.minus(m, v.mask).any():
                v = v.new
            elif not self.ck.combine(m, v.mask, np.logical_and).any():
                v = v.old
            else:
                return self._merged(v, m)
        return v

    def _merged(self, v: Guarded, m: Mask) -> Value:
        ck = self.ck
        a = self.resolved(v.new, ck.combine(m, v.mask, np.logical_and))
        b = self.resolved(v.old, ck.minus(m, v.mask))
        if not (isinstance(a, Aff) and isinstance(b, Aff) and concrete(a) and concrete(b)):
            return CARRIED if isinstance(a, Carried) or isinstance(b, Carried) else OPAQUE
        idx = np.arange(ck.n)
        lanes = ck.rows(v.mask, idx)
        return from_typed(ck, np.where(lanes, ck.lane_values(a, idx), ck.lane_values(b, idx)),
                          "s64")

    def register_bits(self, name: str) -> int | None:
        t = self.prog.entry.register_type(name)
        return 8 * WIDTH[t] if t in INT_DTYPES else None

    def special(self, name: str) -> Aff | Opaque | None:
        """A special register's closed form (Opaque where the launch does not fix it, or
        for the lane masks); None if `name` is not one."""
        base, _, axis = name.partition(".")
        k = "xyz".find(axis) if axis else -1
        ck, kernel = self.ck, self.kernel
        if base in SPECIAL_AXES and k >= 0:
            if base == "%tid":
                table = ck.thread[k]
                return Aff(0, None if table is None else np.asarray(table, dtype=np.int64))
            if base == "%ctaid":
                return ck.block[k]
            return Aff((kernel.block if base == "%ntid" else kernel.grid)[k])
        if name == "%laneid":
            return Aff(0, np.broadcast_to(np.arange(WARP_SIZE, dtype=np.int64),
                                          ck.valid.shape).copy())
        if name == "%warpid":
            return Aff(ck.cls.copy())
        if name == "%nwarpid":
            return Aff(kernel.warps_per_block)
        if name in ("%dynamic_smem_size", "%total_smem_size"):
            return Aff(self.prog.layout.shared_bytes)
        if name.startswith(UNKNOWN_SPECIALS + ("%lanemask",)):
            return OPAQUE
        return None

    def read(self, op: Operand, t: str, m: Mask) -> Value:
        """An operand as type t over the lanes of m: an exact Aff, or Opaque."""
        if op.kind == "imm":
            if t not in INT_DTYPES:
                return OPAQUE
            return Aff(int(immediate(op.value, op.ftype, t)))
        if op.kind == "sym":
            where = self.prog.layout.where.get(op.name)
            if where is None:
                raise NotClosed("the address of something that is not a variable")
            return Aff(where[1] + op.offset)
        if op.kind != "reg":
            return OPAQUE
        if t == "pred":
            return self.resolved(self.regs.get(op.name), m)
        sp = self.special(op.name) if op.name not in self.regs else None
        v = sp if sp is not None else self.resolved(self.regs.get(op.name), m)
        if not isinstance(v, Aff) or t not in INT_DTYPES:
            return v if isinstance(v, Carried) else OPAQUE
        return wrapped(self.ck, v, t, self.register_bits(op.name) if sp is None else None)

    def write(self, op: Operand, value: Value, t: str, m: Mask) -> None:
        """Set a destination on the lanes of m: an integer checked to fit t (wrapped as the
        lane path wraps it where it is concrete)."""
        if op.kind == "sink":
            return
        if op.kind != "reg":
            raise NotClosed("a destination that is not a register")
        if isinstance(value, Aff):
            value = wrapped(self.ck, value, t) if t in INT_DTYPES else OPAQUE
        self.assign(op.name, value, m)

    # ------------------------------------------------------------------ dispatch

    def execute(self, ins: Instruction, pc: int, m: Mask) -> None:
        op = ins.op
        if op in NO_OPS:
            return
        if op in ("bar", "barrier"):
            if "red" in ins.opcode:
                raise NotClosed("a block reduction")
            return
        handler = _HANDLERS.get(op)
        if handler is None or ins.problem is not None:
            raise NotClosed(f"`{ins.text}` has no closed form")
        handler(self, ins, pc, m)

    def arith(self, ins: Instruction, pc: int, m: Mask) -> None:
        t = data_type(ins)
        dest = ins.operands[0]
        if t not in INT_DTYPES or "cc" in ins.opcode:
            return self.write(dest, OPAQUE, t, m) if t in FLOATS or t in ("f16x2", "bf16x2") \
                else self._not_closed(ins)
        wide = "wide" in ins.opcode
        wide_t = t[0] + str(16 * WIDTH[t])
        srcs = [self.read(o, wide_t if wide and k == 2 else t, m)
                for k, o in enumerate(ins.operands[1:])]
        out_t = wide_t if wide else t
        if not all(isinstance(s, Aff) for s in srcs):
            kind = CARRIED if any(isinstance(s, Carried) for s in srcs) else OPAQUE
            return self.write(dest, kind, out_t, m)
        affs: list[Aff] = [s for s in srcs if isinstance(s, Aff)]
        result = self._affine(ins, affs)
        self.write(dest, self._concrete(ins, t, affs) if result is None else result, out_t, m)

    def _affine(self, ins: Instruction, v: list[Aff]) -> Value:
        """add, sub, mul (lo or wide: the exact product, checked to fit where it is
        written), mad, shl by a literal, neg, divisions by literals (_divided), min and max
        where one operand is the least everywhere: exact in closed form; None where these do
        not apply."""
        op, mods = ins.op, ins.opcode[1:]
        if op in DIVISIONS and v[0].coef and v[1].scalar:
            return self._divided(op, v[0], v[1].base)
        if op in ("min", "max") and (v[0].coef or v[1].coef):
            lo, hi = self.ck.bounds(v[0] + v[1].scaled(-1))
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
            return self._scaled(v[0], 2**k)
        a, b = v[0], v[1]
        if not (a.scalar or b.scalar):
            return None
        k = b.base if b.scalar else a.base
        assert isinstance(k, int)
        product = self._scaled(a if b.scalar else b, k)
        return product if op == "mul" or product is None else product + v[2]

    def _scaled(self, v: Aff, k: int) -> Aff | None:
        """v * k, None where a part could pass int64 (the lane path's wrapping arithmetic
        runs it then)."""
        return v.scaled(k) if magnitude(self.ck, v) * abs(k) <= SAFE else None

    def _divided(self, op: str, v: Aff, k: int | np.ndarray) -> Value:
        """shr by a literal, div or rem by a positive one, and with 2^b - 2^a, of a value with
        symbols (symbolic.divided); None where the literal does not fit that."""
        assert isinstance(k, int)
        if op == "shr":
            return divided(self.ck, v, 2**k, False) if 0 <= k < 63 else None
        if op == "and":  # k = 2^b - 2^a: v & k = v % 2^b - v % 2^a
            low = k & -k
            if k <= 0 or (k + low) & (k + low - 1):
                return None
            high, part = divided(self.ck, v, k + low, True), divided(self.ck, v, low, True)
            if isinstance(high, Aff) and isinstance(part, Aff):
                return high + part.scaled(-1)
            return CARRIED
        return divided(self.ck, v, k, op == "rem") if k > 0 else None

    def _concrete(self, ins: Instruction, t: str, v: list[Aff]) -> Value:
        """An operation on values of the rows and lanes only: the lane path's arithmetic on
        their lane values."""
        if not all(concrete(x) for x in v):
            return CARRIED if any(x.coef for x in v) else OPAQUE
        wide = "wide" in ins.opcode
        wide_t = t[0] + str(16 * WIDTH[t])
        lanes = [typed_lanes(self.ck, x, wide_t if wide and k == 2 else t)
                 for k, x in enumerate(v)]
        with np.errstate(all="ignore"):
            result, bad = compute(ins.op, ins.opcode[1:], t, lanes)
        if bad is not None and np.any(bad & self.ck.valid[self.ck.cls]):
            return OPAQUE
        return from_typed(self.ck, result, wide_t if wide else t)

    def _not_closed(self, ins: Instruction) -> None:
        raise NotClosed(f"`{ins.text}` has no closed form")

    def setp(self, ins: Instruction, pc: int, m: Mask) -> None:
        cmp, t = ins.opcode[1], ins.opcode[-1]
        dest = ins.operands[0]
        dests = list(dest.parts) if dest.kind == "vec" else [dest]
        combine = next((b for b in ("and", "or", "xor") if b in ins.opcode[2:-1]), None)
        if ins.op != "setp" or any(d.kind != "reg" for d in dests):
            return self._not_closed(ins)
        if cmp not in COMPARISONS or t not in INT_DTYPES:
            for d in dests:
                self.assign(d.name, OPAQUE, m)  # a float comparison: never a guard here
            return
        a, b = self.read(ins.operands[1], t, m), self.read(ins.operands[2], t, m)
        if not isinstance(a, Aff) or not isinstance(b, Aff):
            kind = CARRIED if isinstance(a, Carried) or isinstance(b, Carried) else OPAQUE
            for d in dests:
                self.assign(d.name, kind, m)
            return
        diff, op = a + b.scaled(-1), COMPARISONS[cmp]
        if combine is None and len(dests) == 1:  # kept symbolic: a latch's trip count
            return self.assign(dest.name, SymPred(diff, op) if diff.coef else
                               self.ck.holds(diff, op, m), m)
        r = self.ck.holds(diff, op, m)
        results = [r, self.ck.minus(m, r)]
        if combine is not None:
            other = ins.operands[3]
            c = self.lanes_of(self.read(other, "pred", m), m)
            c = self.ck.minus(m, c) if other.negated else c
            f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[combine]
            results = [self.ck.combine(x, c, f) for x in results]
        for d, value in zip(dests, results):
            self.assign(d.name, value, m)

    def logic_pred(self, ins: Instruction, pc: int, m: Mask) -> bool:
        """and / or / xor / not on predicates: their lanes combined; False if not .pred."""
        if ins.opcode[-1] != "pred":
            return False
        ck = self.ck
        if any(o.kind != "reg" for o in ins.operands[1:]):
            raise NotClosed(f"`{ins.text}` has no closed form")
        ins_srcs = [self.lanes_of(self.read(o, "pred", m), m) for o in ins.operands[1:]]
        srcs = [ck.minus(m, s) if o.negated else s for o, s in zip(ins.operands[1:], ins_srcs)]
        if ins.op == "not":
            out = ck.minus(m, srcs[0])
        else:
            f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[ins.op]
            out = ck.combine(srcs[0], srcs[1], f)
        self.assign(ins.operands[0].name, out, m)
        return True

    def bits_op(self, ins: Instruction, pc: int, m: Mask) -> None:
        if not self.logic_pred(ins, pc, m):
            self.arith(ins, pc, m)

    def selp(self, ins: Instruction, pc: int, m: Mask) -> None:
        t = data_type(ins)
        if ins.op != "selp":
            return self._not_closed(ins)
        a, b = self.read(ins.operands[1], t, m), self.read(ins.operands[2], t, m)
        yes = self.lanes_of(self.read(ins.operands[3], "pred", m), m)
        no = self.ck.minus(m, yes)
        dest = ins.operands[0]
        if not no.any() or not yes.any():
            return self.write(dest, a if not no.any() else b, t, m)
        self.write(dest, b, t, m)
        self.write(dest, a, t, yes)

    def mov(self, ins: Instruction, pc: int, m: Mask) -> None:
        t = data_type(ins)
        src, dest = ins.operands[1], ins.operands[0]
        if dest.kind == "vec" or src.kind == "vec":
            for d in dest.parts if dest.kind == "vec" else (dest,):
                self.write(d, OPAQUE, t, m)
            return
        if t == "pred":
            return self.assign(dest.name, self.read(src, "pred", m), m)
        self.write(dest, self.read(src, t, m), t, m)

    def convert(self, ins: Instruction, pc: int, m: Mask) -> None:
        dt, at = ins.opcode[-2], ins.opcode[-1]
        dest = ins.operands[0]
        if at not in INT_DTYPES or dt not in INT_DTYPES or len(ins.operands) != 2 or \
                "sat" in ins.opcode:
            return self.write(dest, OPAQUE, dt if dt in WIDTH else "b32", m)
        self.write(dest, self.read(ins.operands[1], at, m), dt, m)

    def cvta(self, ins: Instruction, pc: int, m: Mask) -> None:
        t = data_type(ins)
        space = next(s for s in ins.opcode[1:] if s in ("global", "shared", "local", "const",
                                                         "param"))
        base = {"shared": SHARED_GENERIC, "local": LOCAL_GENERIC,
                "const": CONST_GENERIC}.get(space, 0)
        a = self.read(ins.operands[1], t, m)
        if isinstance(a, Aff):
            a = a + Aff(-base if "to" in ins.opcode else base)
        self.write(ins.operands[0], a, t, m)

    # ------------------------------------------------------------------ memory

    def load(self, ins: Instruction, pc: int, m: Mask) -> None:
        """ld / ldu: the access, then Opaque values (or a parameter's bytes, or a constant
        variable's initial bytes at an address the same on every lane)."""
        t = data_type(ins)
        dest = ins.operands[0]
        dests = list(dest.parts) if dest.kind == "vec" else [dest]
        if space_of(ins) == "param":
            return self._known(dests, t, self._param_bytes(ins.operands[1]), m)
        address = self.access(ins, pc, ins.operands[1], m)
        known = self._constant_bytes(address) if space_of(ins) == "constant" else None
        self._known(dests, t, known, m)

    def _known(self, dests: list[Operand], t: str, data: bytes | None, m: Mask) -> None:
        """Destinations set from `data` (little-endian, a part each; None: Opaque)."""
        width = WIDTH[t]
        for j, d in enumerate(dests):
            part = None if data is None else data[j * width:(j + 1) * width]
            if part is None or len(part) != width or t not in INT_DTYPES:
                self.write(d, OPAQUE, t, m)
            else:
                self.write(d, Aff(int.from_bytes(part, "little", signed=t[0] == "s")), t, m)

    def _param_bytes(self, op: Operand) -> bytes | None:
        data, known, _ = self.kernel.param_bytes.get(op.name, (b"", False, ""))
        return data[op.offset:] if known else None

    def _constant_bytes(self, address: Aff) -> bytes | None:
        """The launch bytes of a constant variable from a scalar byte offset on, if known."""
        if not address.scalar:
            return None
        assert isinstance(address.base, int)
        for name, data in self.kernel.initial_bytes.items():
            space, start = self.prog.layout.where[name]
            if space == "constant" and start <= address.base < start + len(data):
                return data[address.base - start:]
        return None

    def atom(self, ins: Instruction, pc: int, m: Mask) -> None:
        """atom / red: the access; an atom's result is Opaque (what the lane path runs:
        memory_ops.atom, whose refusals give the chunk to it)."""
        t = data_type(ins)
        kinds = (*ATOM_REDUCE, "exch", "cas", "inc", "dec")
        if vector_parts(ins) > 1 or t in ("f16x2", "bf16x2") or \
                not any(o in kinds for o in ins.opcode[1:]):
            return self._not_closed(ins)
        has_dest = ins.op == "atom"
        self.access(ins, pc, ins.operands[1 if has_dest else 0], m)
        if has_dest:
            self.write(ins.operands[0], OPAQUE, t, m)

    def store(self, ins: Instruction, pc: int, m: Mask) -> None:
        if space_of(ins) != "param":
            self.access(ins, pc, ins.operands[0], m)

    def access(self, ins: Instruction, pc: int, op: Operand, m: Mask) -> Aff:
        """Record the access of ld / st `ins` through address operand `op` over m, after the
        checks the lane path makes (inside one array, or the space's bytes); a constant
        load is checked only (constant reads are counted apart)."""
        listed = self.sites.get(pc, [])
        if len(listed) != 1 or op.kind != "addr":
            raise NotClosed("not one plain access")
        (k, site), = listed
        if not op.name:
            address = Aff(op.offset)
        elif op.name in self.prog.layout.where:
            address = Aff(self.prog.layout.where[op.name][1] + op.offset)
        else:
            address = need(self.read(Operand("reg", op.name), "u64", m)) + Aff(op.offset)
        space = space_of(ins)
        if space is None:
            space, base = self._generic(site, address, m)
            address = address + Aff(-base)
        if space not in ("global", "shared", "constant"):
            raise NotClosed(f"{space} memory")
        charge(self.ck.n + BATCH_UNITS, "this access", *self.kernel.where(ins))
        self._inside(space, address, site.width, m)
        if space != "constant":
            self.events.append((space, k, address, m, tuple(self.loops)))
        return address

    def _generic(self, site: Site, address: Aff, m: Mask) -> tuple[str, int]:
        """A generic address -> (its space, the generic address of that space's byte 0),
        where every active lane lies in the space the instruction is counted in."""
        span = self.ck.extent(address, m)
        if span is not None:
            if site.space == "global" and span[1] < min(b for _, b in GENERIC):
                return "global", 0
            base = dict(GENERIC).get(site.space)
            if base is not None and base <= span[0] and span[1] < base + WINDOW:
                return site.space, base
        raise NotClosed("a generic address the closed forms do not place")

    def _inside(self, space: str, address: Aff, width: int, m: Mask) -> None:
        span = self.ck.extent(address, m)
        if span is None:
            return
        lo, hi = span[0], span[1] + width
        if space == "global":
            ok = any(a <= lo and hi <= b for a, b, _ in self.kernel.global_ranges)
        else:
            size = self.prog.layout.shared_bytes if space == "shared" else \
                self.prog.layout.const_bytes
            ok = 0 <= lo and hi <= size
        if not ok:
            raise NotClosed("an access outside its array")


_HANDLERS = {op: ClosedMachine.arith for op in (
    "add", "sub", "mul", "mad", "div", "rem", "min", "max", "shl", "shr", "neg", "abs",
    "fma", "sqrt", "rsqrt", "rcp", "sin", "cos", "lg2", "ex2", "tanh", "copysign")} | {
    "and": ClosedMachine.bits_op, "or": ClosedMachine.bits_op, "xor": ClosedMachine.bits_op,
    "not": ClosedMachine.bits_op, "setp": ClosedMachine.setp, "selp": ClosedMachine.selp,
    "mov": ClosedMachine.mov, "cvt": ClosedMachine.convert, "cvta": ClosedMachine.cvta,
    "ld": ClosedMachine.load, "ldu": ClosedMachine.load, "st": ClosedMachine.store,
    "atom": ClosedMachine.atom, "red": ClosedMachine.atom}


def closed_events(kernel: "CompiledKernel", lo: int, hi: int, box: tuple[Any, ...] | None
                  ) -> list[tuple[str, int, RepeatedBatch]]:
    """(space, instruction index, RepeatedBatch) of every global and shared access of warps
    [lo, hi) in program order, a row per warp (or per class over `box`, a box of blocks)."""
    chunk = Chunk(kernel, lo, hi, box)
    machine = ClosedMachine(kernel, chunk)
    with np.errstate(all="ignore"):
        events = machine.run()
    return [(space, k, repeated(chunk, address, m, loops))
            for space, k, address, m, loops in events if m.any()]
