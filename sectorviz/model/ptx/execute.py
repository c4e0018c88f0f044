"""Run an entry SIMT-style over a chunk of whole blocks: every register is a (warps, 32)
array of bits with a mask of the lanes whose value is unknown; all warps of the chunk run in
lockstep under one active mask, so `bar.sync` orders every warp of a block (a block's warps
are always in the same chunk) and divergent paths reconverge at the immediate post-dominator
of their branch (a stack of (pc, reconvergence pc, lanes) entries). Memory instructions yield
("global" | "shared" | "local" | "constant", site index, Batch) in program order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from ..budget import BATCH_UNITS, STEP_LANES, STEP_UNITS, Budget
from ..errors import PatternError
from ..kernel import Batch, Threads
from ..sectors import WARP_SIZE
from . import alu
from .bits import FLOATS, INT_DTYPES, WIDTH, immediate, is_signed, to_bits, view
from .memory import LOCAL_STRIDE, SHARED_STRIDE, ArrayBytes, ByteStore
from .parse import Instruction, Operand
from .program import CONST_GENERIC, LOCAL_GENERIC, SHARED_GENERIC, WINDOW, Program
from .sites import Site, data_type, space_of, vector_parts

NO_OPS = ("membar", "fence", "nanosleep", "prefetch", "prefetchu", "griddepcontrol",
          "pmevent", "discard", "applypriority", "createpolicy")
REFUSED = {"tex": "textures", "tld4": "textures", "txq": "textures", "suld": "surfaces",
           "sust": "surfaces", "sured": "surfaces", "suq": "surfaces", "wmma": "wmma (NVIDIA "
           "leaves its lane mapping unspecified)", "mma": "mma", "wgmma": "wgmma",
           "ldmatrix": "ldmatrix", "stmatrix": "stmatrix", "brx": "indirect branches",
           "tcgen05": "tensor memory", "cp.async.bulk": "bulk copies (TMA)"}
SILENT_CALLS = ("vprintf", "__assertfail")  # run as no-ops: their memory use is in the PTX


class Unrunnable(Exception):
    """An instruction the engine does not run (the caller words it with its place)."""


@dataclass
class Context:
    """What the machine needs from the kernel: names for errors, where arrays are."""

    where: Callable[[Instruction], tuple[str, int | None]]  # -> (error place, column)
    name_of: Callable[[int], str]  # site index -> the instruction's name
    global_ranges: list[tuple[int, int, str]]  # (first byte, end, name), sorted
    array_bytes: ArrayBytes
    param_bytes: dict[str, tuple[bytes, bool, str]]  # PTX param -> (bytes, known, why)


class Machine:
    """One run of a Program over a chunk of whole blocks (threads of `threads`)."""

    def __init__(self, prog: Program, sites: list[Site], ctx: Context, threads: Threads,
                 block: tuple[int, int, int], grid: tuple[int, int, int], budget: Budget):
        self.prog, self.ctx, self.threads, self.budget = prog, ctx, threads, budget
        self.code = prog.entry.instructions
        self.shape = threads.shape
        self.block_dims, self.grid_dims = block, grid
        self.sites: dict[int, list[tuple[int, Site]]] = {}
        counters: dict[str, int] = {}
        for s in sites:
            k = counters.get(s.space, 0)
            counters[s.space] = k + 1
            self.sites.setdefault(s.at, []).append((k, s))
        self.bits: dict[str, np.ndarray] = {}
        self.preds: dict[str, np.ndarray] = {}
        self.unknown: dict[str, tuple[np.ndarray, str]] = {}
        wpb = -(-block[0] * block[1] * block[2] // WARP_SIZE)
        rel = threads.warp - threads.warp[0]
        self.block_in_chunk = np.broadcast_to((rel // wpb)[:, None], self.shape)
        self.lane = np.broadcast_to(np.arange(WARP_SIZE, dtype=np.int64), self.shape)
        self.thread_in_chunk = rel[:, None] * WARP_SIZE + self.lane
        self.warp_in_block = np.broadcast_to((threads.warp % wpb)[:, None], self.shape)
        self.stores = {"global": ByteStore(), "shared": ByteStore(), "local": ByteStore(),
                       "constant": ByteStore()}
        self._initial_variables()
        self.events: list[tuple[str, int, Batch]] = []

    def _initial_variables(self) -> None:
        """Module-scope globals and constants hold their initializers (or zeros)."""
        for name, (space, start) in self.prog.layout.where.items():
            var = self.prog.layout.variables[name]
            if space in ("global", "constant") and var.size:
                data = var.init or bytes(var.size)
                raw = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
                self.stores[space].write(np.arange(start, start + len(raw), dtype=np.int64), 1,
                                         raw)

    # ------------------------------------------------------------------ control

    def run(self) -> Iterator[tuple[str, int, Batch]]:
        """Every memory event of the chunk, in program order."""
        n = len(self.code)
        live = self.threads.valid.copy()
        stack = [[0, n + 1, live]]
        step_units = STEP_UNITS + live.size // STEP_LANES
        while stack:
            top = stack[-1]
            pc, rpc, mask = top
            if pc == rpc or not mask.any():
                stack.pop()
                continue
            if pc >= n:  # fell off the end: the lanes leave
                self._leave(stack, mask)
                continue
            ins = self.code[pc]
            self.budget.charge(step_units, "running the compiled kernel", *self.ctx.where(ins))
            act = self._guarded(ins, mask)
            if ins.op == "bra":
                self._branch(stack, top, pc, act, mask)
                continue
            if ins.op in ("ret", "exit", "trap"):
                top[0] = pc + 1
                if act.any():
                    self._leave(stack, act)
                continue
            top[0] = pc + 1
            if act.any():
                try:
                    self._execute(ins, pc, act)
                except Unrunnable as why:
                    place, col = self.ctx.where(ins)
                    raise PatternError(place, f"the compiled kernel uses `{ins.text}`, "
                                              f"which sectorviz does not run ({why})",
                                       col) from None
                if self.events:
                    yield from self.events
                    self.events = []

    def _leave(self, stack, lanes: np.ndarray) -> None:
        """Lanes that return leave every entry of the stack."""
        for entry in stack:
            entry[2] = entry[2] & ~lanes

    def _branch(self, stack, top, pc: int, taken: np.ndarray, mask: np.ndarray) -> None:
        target = self.prog.entry.labels.get(self.code[pc].operands[0].name)
        if target is None:
            raise Unrunnable(f"a branch to an unknown label {self.code[pc].operands[0].name}")
        fall = mask & ~taken
        if not fall.any():
            top[0] = target
            return
        if not taken.any():
            top[0] = pc + 1
            return
        meet = self.prog.reconverge.get(pc, len(self.code) + 1)
        if meet == top[1]:
            stack.pop()
        else:
            top[0] = meet
        for start, lanes in ((pc + 1, fall), (target, taken)):
            if start != meet:
                stack.append([start, meet, lanes])

    def _guarded(self, ins: Instruction, mask: np.ndarray) -> np.ndarray:
        if ins.guard is None:
            return mask
        name, negated = ins.guard
        p = self._pred(name)
        self._require_known(name, mask, ins, "the branch or predicate")
        return mask & (~p if negated else p)

    def _require_known(self, reg: str, mask, ins: Instruction, what: str) -> None:
        unk = self.unknown.get(reg)
        if unk is not None and np.any(unk[0] & mask):
            place, col = self.ctx.where(ins)
            raise PatternError(place, f"{what} of `{ins.text}` depends on {unk[1]}", col)

    # ------------------------------------------------------------------ registers

    def _pred(self, name: str) -> np.ndarray:
        if name not in self.preds:
            self.preds[name] = np.zeros(self.shape, dtype=bool)
            self.unknown[name] = (np.ones(self.shape, dtype=bool),
                                  f"the predicate {name}, read before it is set")
        return self.preds[name]

    def special(self, name: str) -> np.ndarray | None:
        """%tid.x and the other special registers -> int64 values, None if not one."""
        base, _, axis = name.partition(".")
        k = "xyz".find(axis) if axis else -1
        if base == "%tid" and k >= 0:
            return self.threads.thread[k]
        if base == "%ctaid" and k >= 0:
            return self.threads.block[k]
        if base == "%ntid" and k >= 0:
            return np.full(self.shape, self.block_dims[k], dtype=np.int64)
        if base == "%nctaid" and k >= 0:
            return np.full(self.shape, self.grid_dims[k], dtype=np.int64)
        if name == "%laneid":
            return self.lane
        if name == "%warpid":
            return self.warp_in_block
        if name == "%nwarpid":
            return np.full(self.shape, -(-np.prod(self.block_dims) // WARP_SIZE), dtype=np.int64)
        masks = {"%lanemask_eq": lambda l: 1 << l, "%lanemask_lt": lambda l: (1 << l) - 1,
                 "%lanemask_le": lambda l: (2 << l) - 1,
                 "%lanemask_gt": lambda l: 0xFFFFFFFF ^ ((2 << l) - 1),
                 "%lanemask_ge": lambda l: 0xFFFFFFFF ^ ((1 << l) - 1)}
        if name in masks:
            return np.broadcast_to(masks[name](np.arange(WARP_SIZE, dtype=np.int64)),
                                   self.shape)
        if name in ("%dynamic_smem_size", "%total_smem_size"):
            return np.full(self.shape, self.prog.layout.shared_bytes, dtype=np.int64)
        return None

    def read(self, op: Operand, t: str):
        """An operand as values of type t: (values, unknown lanes or None, why)."""
        if op.kind == "imm":
            return immediate(op.value, op.ftype, "u64" if t == "pred" else t), None, None
        if op.kind == "sym":
            return self._symbol(op, t), None, None
        if op.kind != "reg":
            raise Unrunnable(f"an operand of kind {op.kind} here")
        name = op.name
        if t == "pred":
            p = self._pred(name)
            unk = self.unknown.get(name)
            v = ~p if op.negated else p
            return v, unk[0] if unk else None, unk[1] if unk else None
        sp = self.special(name)
        if sp is not None:
            return view(to_bits(sp, "u64"), t), None, None
        if name.startswith("%") and name.split(".")[0] in (
                "%clock", "%clock64", "%globaltimer", "%smid", "%nsmid", "%gridid",
                "%globaltimer_lo", "%globaltimer_hi", "%pm0", "%envreg"):
            return (np.zeros(self.shape, dtype=INT_DTYPES.get(t, np.uint64)),
                    np.ones(self.shape, dtype=bool), f"the special register {name}")
        if name not in self.bits:
            if self.prog.entry.register_type(name) is None and name in self.preds:
                return self.read(op, "pred")
            self.bits[name] = np.zeros(self.shape, dtype=np.uint64)
            self.unknown[name] = (np.ones(self.shape, dtype=bool),
                                  f"the register {name}, read before it is set")
        unk = self.unknown.get(name)
        return view(self.bits[name], t), unk[0] if unk else None, unk[1] if unk else None

    def _symbol(self, op: Operand, t: str):
        where = self.prog.layout.where.get(op.name)
        if where is None:
            raise Unrunnable(f"the address of {op.name}, which is not a variable it knows")
        return view(to_bits(np.full(self.shape, where[1] + op.offset, dtype=np.int64), "u64"),
                    t)

    def write(self, op: Operand, values, t: str, mask, unk=None, why=None) -> None:
        """Set a destination register (or a predicate) on the lanes of mask."""
        if op.kind == "sink":
            return
        if op.kind != "reg":
            raise Unrunnable("a destination that is not a register")
        name = op.name
        if t == "pred" or self.prog.entry.register_type(name) == "pred":
            new = np.broadcast_to(np.asarray(values, dtype=bool), self.shape)
            old = self.preds.get(name)
            self.preds[name] = new.copy() if old is None or mask.all() else np.where(
                mask, new, old)
        else:
            rt = self.prog.entry.register_type(name) or t
            if t in INT_DTYPES and rt in INT_DTYPES and WIDTH[rt] > WIDTH[t] and is_signed(t):
                bits = to_bits(np.asarray(values).astype(np.int64), rt)  # sign-extended
            else:
                bits = to_bits(values, t)
            bits = np.broadcast_to(bits, self.shape)
            old = self.bits.get(name)
            self.bits[name] = bits.copy() if old is None or mask.all() else np.where(
                mask, bits, old)
        self._set_unknown(name, mask, unk, why)

    def _set_unknown(self, name: str, mask, unk, why) -> None:
        old = self.unknown.get(name)
        if unk is None:
            if old is not None:
                rest = old[0] & ~mask
                if rest.any():
                    self.unknown[name] = (rest, old[1])
                else:
                    del self.unknown[name]
            return
        new = np.broadcast_to(unk, self.shape) & mask
        if old is not None:
            new = new | (old[0] & ~mask)
            why = why if np.any(np.broadcast_to(unk, self.shape) & mask) else old[1]
        if new.any():
            self.unknown[name] = (new, why)
        elif old is not None:
            del self.unknown[name]

    # ------------------------------------------------------------------ dispatch

    def _execute(self, ins: Instruction, pc: int, mask: np.ndarray) -> None:
        op = ins.op
        if op in NO_OPS:
            return
        full = ".".join(ins.opcode)
        for prefix, what in REFUSED.items():
            if full == prefix or full.startswith(prefix + "."):
                raise Unrunnable(what)
        if ins.problem is not None:
            raise Unrunnable(ins.problem)
        handler = HANDLERS.get(op)
        if handler is None:
            raise Unrunnable("an instruction outside what the engine covers")
        with np.errstate(all="ignore"):
            handler(self, ins, pc, mask)


def _combine(*unks):
    """Unknown lanes of several operands -> (union or None, first reason)."""
    out, why = None, None
    for u in unks:
        if u is not None and u[0] is not None:
            out = u[0] if out is None else (out | u[0])
            why = why or u[1]
    return out, why


def _type(ins: Instruction) -> str:
    return data_type(ins)


def _arith(m: Machine, ins: Instruction, pc: int, mask) -> None:
    """Two- and three-operand arithmetic of one type (packed f16x2 / bf16x2 half by half)."""
    t = _type(ins)
    if t in ("f16x2", "bf16x2"):
        return _packed(m, ins, mask, t)
    srcs = [m.read(o, t) for o in ins.operands[1:]]
    values = [s[0] for s in srcs]
    unk, why = _combine(*((s[1], s[2]) for s in srcs))
    result, bad = _compute(ins.op, ins.opcode[1:], t, values)
    if bad is not None and np.any(bad & mask):
        bad_unk = np.broadcast_to(bad, m.shape)
        unk = bad_unk if unk is None else (unk | bad_unk)
        why = why or f"a division by zero at `{ins.text}`"
    out_t = alu._wide(t) if "wide" in ins.opcode and t not in FLOATS else t
    m.write(ins.operands[0], result, out_t, mask, unk, why)


def _compute(op: str, mods: tuple[str, ...], t: str, v: list):
    """An arithmetic op on typed values -> (result, lanes where it is undefined or None)."""
    if op == "add":
        return alu.add(mods, t, *v), None
    if op == "sub":
        return alu.sub(mods, t, *v), None
    if op in ("mul", "mul24"):
        return alu.multiply(mods, t, *v), None
    if op in ("mad", "fma", "mad24"):
        return alu.multiply_add(mods, t, *v), None
    if op == "div":
        return alu.divide(mods, t, *v)
    if op == "rem":
        return alu.remainder(mods, t, *v)
    if op in ("min", "max"):
        return alu.minmax(op, t, *v), None
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


def _packed(m: Machine, ins: Instruction, mask, t: str) -> None:
    """f16x2 / bf16x2 arithmetic: the op on the low and the high halves apart."""
    half = "f16" if t == "f16x2" else "bf16"
    srcs = [m.read(o, "b32") for o in ins.operands[1:]]
    unk, why = _combine(*((s[1], s[2]) for s in srcs))
    out = np.zeros(m.shape, dtype=np.uint64)
    for shift in (0, 16):
        parts = [view((np.asarray(s[0]).astype(np.uint64) >> np.uint64(shift))
                      & np.uint64(0xFFFF), half) for s in srcs]
        r, _ = _compute(ins.op, ins.opcode[1:], half, parts)
        out = out | (to_bits(r, half) << np.uint64(shift))
    m.write(ins.operands[0], out, "b32", mask, unk, why)


def _unary_bits(m: Machine, ins: Instruction, pc: int, mask) -> None:
    """popc, clz, brev, bfind (result u32, brev: its own type)."""
    t = _type(ins)
    a, unk, why = m.read(ins.operands[1], t)
    r = alu.bit_count(ins.op, t, np.asarray(a))
    m.write(ins.operands[0], r, t if ins.op == "brev" else "u32", mask, unk, why)


def _bfe_bfi(m: Machine, ins: Instruction, pc: int, mask) -> None:
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
    unk, why = _combine(*((s[1], s[2]) for s in srcs))
    m.write(ins.operands[0], r, t, mask, unk, why)


def _prmt(m: Machine, ins: Instruction, pc: int, mask) -> None:
    srcs = [m.read(o, "b32") for o in ins.operands[1:4]]
    unk, why = _combine(*((s[1], s[2]) for s in srcs))
    try:
        r = alu.permute(ins.opcode[1:], *(np.asarray(s[0]) for s in srcs))
    except NotImplementedError:
        raise Unrunnable("a prmt mode") from None
    m.write(ins.operands[0], r, "b32", mask, unk, why)


def _lop3(m: Machine, ins: Instruction, pc: int, mask) -> None:
    t = _type(ins)
    srcs = [m.read(o, t) for o in ins.operands[1:4]]
    lut = ins.operands[4].value
    unk, why = _combine(*((s[1], s[2]) for s in srcs))
    m.write(ins.operands[0], alu.lop3(*(s[0] for s in srcs), lut), t, mask, unk, why)


def _setp(m: Machine, ins: Instruction, pc: int, mask) -> None:
    """setp.cmp[.bool].type p[|q], a, b[, c]: p = cmp(a, b) BOOL c, q = !cmp(a, b) BOOL c;
    set.cmp.dtype.type d: all ones (or 1.0) where true."""
    cmp, t = ins.opcode[1], ins.opcode[-1]
    bool_op = next((b for b in ("and", "or", "xor") if b in ins.opcode[2:-1]), None)
    a, ua, wa = m.read(ins.operands[1], t)
    b, ub, wb = m.read(ins.operands[2], t)
    r = alu.compare(cmp, t, a, b)
    parts = [(ua, wa), (ub, wb)]
    c = None
    if bool_op is not None:
        c, uc, wc = m.read(ins.operands[3], "pred")
        parts.append((uc, wc))
    unk, why = _combine(*parts)
    f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(bool_op)
    p = r if f is None else f(r, c)
    q = None if f is None else f(~r, c)
    if ins.op == "set":
        dt = ins.opcode[-2]
        value = np.where(p, 1.0, 0.0) if dt == "f32" else np.where(p, -1, 0)
        m.write(ins.operands[0], value, dt if dt != "f32" else "f32", mask, unk, why)
        return
    dest = ins.operands[0]
    if dest.kind == "vec":
        m.write(dest.parts[0], p, "pred", mask, unk, why)
        m.write(dest.parts[1], ~r if f is None else q, "pred", mask, unk, why)
    else:
        m.write(dest, p, "pred", mask, unk, why)


def _selp(m: Machine, ins: Instruction, pc: int, mask) -> None:
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
    unk, why = _combine((ua, wa), (ub, wb), (uc, wc))
    m.write(ins.operands[0], np.where(pick, a, b), t, mask, unk, why)


def _mov(m: Machine, ins: Instruction, pc: int, mask) -> None:
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
        unk, why = _combine(*parts)
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


def _cvt(m: Machine, ins: Instruction, pc: int, mask) -> None:
    """cvt[.rnd][.ftz][.sat].dtype.atype: integers extend or wrap (.sat clamps); float to
    integer rounds as its rounding modifier says and clamps to the range (NaN -> 0); integer
    to float and float narrowing round to nearest; .rni and friends on float to float round
    to an integral value."""
    dt, at = ins.opcode[-2], ins.opcode[-1]
    mods = ins.opcode[1:-2]
    if dt in ("f16x2", "bf16x2") and len(ins.operands) == 3:  # pack two f32
        half = dt[:-2]
        hi, uh, wh = m.read(ins.operands[1], "f32")
        lo, ul, wl = m.read(ins.operands[2], "f32")
        bits = to_bits(lo, half) | (to_bits(hi, half) << np.uint64(16))
        unk, why = _combine((uh, wh), (ul, wl))
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


def _cvta(m: Machine, ins: Instruction, pc: int, mask) -> None:
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


def _isspacep(m: Machine, ins: Instruction, pc: int, mask) -> None:
    space = ins.opcode[1]
    a, unk, why = m.read(ins.operands[1], "u64")
    a = np.asarray(a).astype(np.uint64)
    windows = {"shared": SHARED_GENERIC, "local": LOCAL_GENERIC, "const": CONST_GENERIC}
    inside = {s: (a >= np.uint64(b)) & (a < np.uint64(b + WINDOW)) for s, b in windows.items()}
    r = inside[space] if space in inside else ~(inside["shared"] | inside["local"]
                                                | inside["const"])
    m.write(ins.operands[0], r, "pred", mask, unk, why)


from .lanes_ops import (_activemask, _barrier, _call, _match, _redux,  # noqa: E402
                        _shfl, _vote)
from .memory_ops import _atom, _cp_async, _load, _store  # noqa: E402

HANDLERS = {op: _arith for op in ("add", "sub", "mul", "mul24", "mad", "mad24", "fma", "div",
                                  "rem", "min", "max", "shl", "shr", "and", "or", "xor", "not",
                                  "cnot", "neg", "abs", "sqrt", "rsqrt", "rcp", "sin", "cos",
                                  "lg2", "ex2", "tanh", "copysign", "sad")}
HANDLERS |= {"popc": _unary_bits, "clz": _unary_bits, "brev": _unary_bits,
             "bfind": _unary_bits, "bfe": _bfe_bfi, "bfi": _bfe_bfi, "prmt": _prmt,
             "lop3": _lop3, "setp": _setp, "set": _setp, "selp": _selp, "slct": _selp,
             "mov": _mov, "cvt": _cvt, "cvta": _cvta, "isspacep": _isspacep,
             "ld": _load, "ldu": _load, "st": _store, "atom": _atom, "red": _atom,
             "cp": _cp_async, "shfl": _shfl, "vote": _vote, "match": _match,
             "activemask": _activemask, "redux": _redux, "bar": _barrier,
             "barrier": _barrier, "call": _call}
