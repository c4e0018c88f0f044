"""Run an entry SIMT-style over a chunk of whole blocks: every register is a (warps, 32)
array of bits with a mask of the lanes whose value is unknown; all warps of the chunk run in
lockstep under one active mask, so `bar.sync` orders every warp of a block (a block's warps
are always in the same chunk) and divergent paths reconverge at the immediate post-dominator
of their branch (a stack of (pc, reconvergence pc, lanes) entries). Memory instructions yield
("global" | "shared" | "local" | "constant", site index, Batch) in program order; an
instruction of `marks` yields (MARK, its index, Batch of the lanes that run it, no addresses)
before it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from ...model.budget import PTX_STEP_LANES, PTX_STEP_UNITS, Budget
from ...model.errors import PatternError
from ...model.kernel import Batch, ResolvedArray, Threads
from ...model.sectors import WARP_SIZE
from .bits import INT_DTYPES, WIDTH, LaneValues, immediate, is_signed, to_bits, view
from .handlers import HANDLERS
from .memory import ArrayBytes, ByteStore
from .parse import Instruction, Operand
from .program import Program
from .refuse import NO_OPS, REFUSED, Unrunnable
from .sites import Site, numbered

# an operand read: (values, its unknown lanes or None, why they are unknown or None)
Read = tuple[LaneValues, "np.ndarray | None", "str | None"]
Frame = list[Any]  # a stack entry: [pc, reconvergence pc, lanes]
MARK = "mark"  # the space of a marked instruction's runs

# registers whose values the launch does not fix (the GPU, the moment, the driver; the cluster
# shape where the kernel declares none): unknown, an error where an address or branch uses one
UNKNOWN_SPECIALS = ("%clock", "%globaltimer", "%smid", "%nsmid", "%gridid", "%pm", "%envreg",
                    "%reserved_smem", "%total_smem_size", "%aggr_smem_size",
                    "%current_graph_exec", "%cluster", "%nclusterid", "%is_explicit_cluster")


def unknown_special(name: str) -> str:
    """Why a special register of UNKNOWN_SPECIALS is unknown, as errors say it."""
    if name.startswith("%envreg"):
        return (f"the special register {name} (a cooperative launch's grid workspace: "
                "grid-wide syncs are not run)")
    if name.startswith(("%cluster", "%nclusterid", "%is_explicit_cluster")):
        return (f"the special register {name} (the launch's cluster shape, which the kernel "
                "does not declare: give it __cluster_dims__)")
    return f"the special register {name}, which the GPU sets"


def cluster_constant(name: str, cluster: tuple[int, int, int] | None,
                     grid: tuple[int, int, int]) -> int | None:
    """A cluster special register the same in every block, of a kernel that declares its
    cluster shape (blocks per cluster): %cluster_nctaid.x, %nclusterid.x (clusters in the
    grid), %cluster_nctarank (blocks per cluster), %is_explicit_cluster; None otherwise."""
    if cluster is None:
        return None
    base, _, axis = name.partition(".")
    k = "xyz".find(axis) if axis else -1
    if base == "%cluster_nctaid" and k >= 0:
        return cluster[k]
    if base == "%nclusterid" and k >= 0:
        return grid[k] // cluster[k]
    if name == "%cluster_nctarank":
        return cluster[0] * cluster[1] * cluster[2]
    if name == "%is_explicit_cluster":
        return 1
    return None


@dataclass
class Context:
    """What the machine needs from the kernel: names for errors, where arrays are."""

    where: Callable[[Instruction], tuple[str, int | None]]  # -> (error place, column)
    name_of: Callable[[Site], str]  # a counted site -> its instruction's name
    global_ranges: list[tuple[int, int, str]]  # (first byte, end, name), sorted
    array_bytes: ArrayBytes
    param_bytes: dict[str, tuple[bytes, bool, str]]  # PTX param -> (bytes, known, why)
    initial: dict[str, bytes]  # module-scope global / constant variable -> its launch bytes
    arrays: Mapping[str, ResolvedArray]  # the pattern's, by name (for value fixes)


def diverge(stack: list[Frame], top: Frame, fall: tuple[int, Any], taken: tuple[int, Any],
            meet: int) -> None:
    """A branch that splits the lanes of `top`: both (pc, lanes) paths, the fall-through then
    the taken one, go on the stack to run until `meet` (the branch's immediate
    post-dominator), where `top` continues (or, when `top` ends there too, is done). Stack
    entries beyond the lanes (`top[3:]`) are carried to both paths."""
    if meet == top[1]:
        stack.pop()
    else:
        top[0] = meet
    for start, lanes in (fall, taken):
        if start != meet:
            stack.append([start, meet, lanes, *top[3:]])


class Machine:
    """One run of a Program over a chunk of whole blocks (threads of `threads`)."""

    def __init__(self, prog: Program, sites: list[Site], ctx: Context, threads: Threads,
                 block: tuple[int, int, int], grid: tuple[int, int, int], budget: Budget,
                 marks: frozenset[int] = frozenset()):
        self.prog, self.ctx, self.threads, self.budget = prog, ctx, threads, budget
        self.marks = marks
        self.code = prog.entry.instructions
        self.shape = threads.shape
        self.block_dims, self.grid_dims = block, grid
        self.sites: dict[int, list[tuple[int, Site]]] = numbered(sites)
        self.bits: dict[str, np.ndarray] = {}
        self.preds: dict[str, np.ndarray] = {}
        self.unknown: dict[str, tuple[np.ndarray, str | None]] = {}
        wpb = -(-block[0] * block[1] * block[2] // WARP_SIZE)
        rel = threads.warp - threads.warp[0]
        self.block_in_chunk: np.ndarray = np.broadcast_to((rel // wpb)[:, None], self.shape)
        self.lane = np.broadcast_to(np.arange(WARP_SIZE, dtype=np.int64), self.shape)
        self.thread_in_chunk: np.ndarray = rel[:, None] * WARP_SIZE + self.lane
        self.warp_in_block = np.broadcast_to((threads.warp % wpb)[:, None], self.shape)
        self.stores = {"global": ByteStore(), "shared": ByteStore(), "local": ByteStore(),
                       "constant": ByteStore()}
        self._initial_variables()
        self.events: list[tuple[str, int, Batch]] = []
        self.unknown_stored: dict[str, str | None] = {}  # space -> why the first unknown store was
        self._mask: np.ndarray | None = None
        self._full = False

    def _initial_variables(self) -> None:
        """Module-scope globals and constants hold their launch bytes where the kernel
        knows them (Context.initial); the others are unknown."""
        for name, data in self.ctx.initial.items():
            space, start = self.prog.layout.where[name]
            raw = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
            self.stores[space].write(np.arange(start, start + len(raw), dtype=np.int64), 1, raw)

    # ------------------------------------------------------------------ control

    def run(self) -> Iterator[tuple[str, int, Batch]]:
        """Every memory event of the chunk, in program order."""
        n = len(self.code)
        live = self.threads.valid.copy()
        stack: list[Frame] = [[0, n + 1, live]]
        step_units = PTX_STEP_UNITS + live.size // PTX_STEP_LANES
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
            if pc in self.marks:
                nowhere = np.zeros(mask.shape, dtype=np.int64)
                yield MARK, pc, Batch(mask, nowhere, nowhere, None, None, {})
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

    def _leave(self, stack: list[Frame], lanes: np.ndarray) -> None:
        """Lanes that return leave every entry of the stack."""
        for entry in stack:
            entry[2] = entry[2] & ~lanes

    def _branch(self, stack: list[Frame], top: Frame, pc: int, taken: np.ndarray,
                mask: np.ndarray) -> None:
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
        diverge(stack, top, (pc + 1, fall), (target, taken),
                self.prog.reconverge.get(pc, len(self.code) + 1))

    def _guarded(self, ins: Instruction, mask: np.ndarray) -> np.ndarray:
        if ins.guard is None:
            return mask
        name, negated = ins.guard
        p = self._pred(name)
        self._require_known(name, mask, ins, "the branch or predicate")
        act: np.ndarray = mask & (~p if negated else p)
        return act

    def _require_known(self, reg: str, mask: np.ndarray, ins: Instruction, what: str) -> None:
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
        masks = {"%lanemask_eq": lambda lane: 1 << lane,
                 "%lanemask_lt": lambda lane: (1 << lane) - 1,
                 "%lanemask_le": lambda lane: (2 << lane) - 1,
                 "%lanemask_gt": lambda lane: 0xFFFFFFFF ^ ((2 << lane) - 1),
                 "%lanemask_ge": lambda lane: 0xFFFFFFFF ^ ((1 << lane) - 1)}
        if name in masks:
            return np.broadcast_to(masks[name](np.arange(WARP_SIZE, dtype=np.int64)),
                                   self.shape)
        if name == "%dynamic_smem_size":
            return np.full(self.shape, self.prog.layout.dynamic_shared_bytes, dtype=np.int64)
        return self._cluster_register(name)

    def _cluster_register(self, name: str) -> np.ndarray | None:
        """%cluster_ctaid, %clusterid, %cluster_ctarank and the constants of a kernel that
        declares its cluster shape (blocks grouped x fastest); None otherwise."""
        cluster = self.prog.entry.cluster
        constant = cluster_constant(name, cluster, self.grid_dims)
        if constant is not None:
            return np.full(self.shape, constant, dtype=np.int64)
        if cluster is None:
            return None
        block = self.threads.block
        base, _, axis = name.partition(".")
        k = "xyz".find(axis) if axis else -1
        if base == "%cluster_ctaid" and k >= 0:
            return block[k] % cluster[k]
        if base == "%clusterid" and k >= 0:
            return block[k] // cluster[k]
        if name == "%cluster_ctarank":
            x, y, z = (block[j] % cluster[j] for j in range(3))
            rank: np.ndarray = x + cluster[0] * (y + cluster[1] * z)
            return rank
        return None

    def read(self, op: Operand, t: str) -> Read:
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
        if name.startswith(UNKNOWN_SPECIALS):
            return (np.zeros(self.shape, dtype=INT_DTYPES.get(t, np.uint64)),
                    np.ones(self.shape, dtype=bool), unknown_special(name))
        if name not in self.bits:
            if self.prog.entry.register_type(name) is None and name in self.preds:
                return self.read(op, "pred")
            self.bits[name] = np.zeros(self.shape, dtype=np.uint64)
            self.unknown[name] = (np.ones(self.shape, dtype=bool),
                                  f"the register {name}, read before it is set")
        unk = self.unknown.get(name)
        return view(self.bits[name], t), unk[0] if unk else None, unk[1] if unk else None

    def _symbol(self, op: Operand, t: str) -> np.ndarray:
        where = self.prog.layout.where.get(op.name)
        if where is None:
            raise Unrunnable(f"the address of {op.name}, which is not a variable it knows")
        return view(to_bits(np.full(self.shape, where[1] + op.offset, dtype=np.int64), "u64"),
                    t)

    def write(self, op: Operand, values: LaneValues, t: str, mask: np.ndarray,
              unk: np.ndarray | None = None, why: str | None = None) -> None:
        """Set a destination register (or a predicate) on the lanes of mask."""
        if op.kind == "sink":
            return
        if op.kind != "reg":
            raise Unrunnable("a destination that is not a register")
        name = op.name
        full = self._full if mask is self._mask else bool(mask.all())
        if not full and name not in self.bits and name not in self.preds:
            # set on some lanes only: the others stay unknown until set
            self.unknown[name] = (np.ones(self.shape, dtype=bool),
                                  f"the register {name}, read before it is set")
        if t == "pred" or self.prog.entry.register_type(name) == "pred":
            new = np.broadcast_to(np.asarray(values, dtype=bool), self.shape)
            old = self.preds.get(name)
            self.preds[name] = new.copy() if old is None or full else np.where(mask, new, old)
        else:
            rt = self.prog.entry.register_type(name) or t
            if t in INT_DTYPES and rt in INT_DTYPES and WIDTH[rt] > WIDTH[t] and is_signed(t):
                bits = to_bits(np.asarray(values).astype(np.int64), rt)  # sign-extended
            else:
                bits = to_bits(values, t)
            bits = np.broadcast_to(bits, self.shape)
            old = self.bits.get(name)
            self.bits[name] = bits.copy() if old is None or full else np.where(mask, bits, old)
        self._set_unknown(name, mask, unk, why)

    def _set_unknown(self, name: str, mask: np.ndarray, unk: np.ndarray | None,
                     why: str | None) -> None:
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
        self._mask, self._full = mask, bool(mask.all())  # what most writes are masked by
        with np.errstate(all="ignore"):
            handler(self, ins, pc, mask)
