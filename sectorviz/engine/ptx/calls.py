"""Calls of `.func` bodies: the entry with every `call` of a function the module defines
inlined where it is made, so that the lane machine and the closed forms run the callee's
instructions as the entry's own (its loops, branches and accesses included) and each call
site's accesses are instructions of their own, as where nvcc inlines the function itself.

Each inlined call (an activation) is a fresh scope: the callee's registers, labels and
`.local` variables (its stack frame) are renamed with a suffix (`%r1~3`). `.param`
traffic is copied as PTX describes it: the caller's `st.param [param0+8], %rd1` and the
callee's `ld.param [f_param_0+8]` are moves through one slot register (`param0~2+8:8`,
named by the caller's argument, its byte offset and width), as are the callee's
`st.param [func_retval0]` and the caller's `ld.param [retval0]`. The callee's `ret` is a
branch to the end of its inlined body, where the caller goes on; a guarded call
(`@%p call`) branches around it. A divergent call (`call` under a partial mask) runs the
body under that mask, and its lanes reconverge at its end like any branch's; `call.uni`
only asserts that they do not diverge. Shared variables declared in a function are placed
once (they are static).

Calls nest at most MAX_CALL_DEPTH deep (recursion included) and inline at most
MAX_INLINED instructions in all: a call beyond either is kept as it is, and refused in one
line at its source line when a lane reaches it. The work of the calls that run is charged
to the work budget as the machines run their instructions.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from .bits import WIDTH
from .parse import Entry, Instruction, Loc, Module, Operand, Variable
from .sites import data_type, vector_parts

MAX_CALL_DEPTH = 8  # calls within calls (recursion included) that are inlined
MAX_INLINED = 50_000  # PTX instructions the inlined calls may add to an entry


@dataclass
class _Scope:
    """One activation of a function: its body, the suffix of its names, the caller's slot
    names of its parameters and return parameters, the label its `ret` goes to (None for
    the entry), how deep it is called, and the `.loc` of the call it is inlined at."""

    function: Entry
    suffix: str
    slots: dict[str, str]
    end: str | None
    depth: int
    call_loc: Loc | None
    locs: dict[Loc, Loc] = field(default_factory=dict)

    def register(self, name: str) -> str:
        return name + self.suffix if self.function.register_type(name) is not None else name

    def symbol(self, name: str) -> str:
        """A label or a local / `.param` variable of the function -> its name here."""
        local = name in self.function.labels or any(
            v.name == name and v.space in ("local", "param") for v in self.function.variables)
        return name + self.suffix if local else name

    def loc(self, loc: Loc | None) -> Loc | None:
        """A callee's `.loc`, inlined at the call (as nvcc writes an inlined function's)."""
        if self.call_loc is None or loc is None:
            return loc or self.call_loc
        if loc not in self.locs:
            self.locs[loc] = Loc(loc.file, loc.line, loc.column, self.loc(loc.inlined_at)
                                 if loc.inlined_at is not None else self.call_loc)
        return self.locs[loc]


class _Inliner:
    """Builds the entry with its calls inlined (see the module docstring)."""

    def __init__(self, module: Module, entry: Entry):
        self.module = module
        self.kernel_params = {p.name for p in entry.params}
        self.out = Entry(entry.name, params=entry.params, registers=dict(entry.registers),
                         register_ranges=dict(entry.register_ranges),
                         variables=list(entry.variables), ptx_line=entry.ptx_line,
                         cluster=entry.cluster)
        self.copies = itertools.count(1)
        self.emit(_Scope(entry, "", {}, None, 0, None))

    def emit(self, scope: _Scope) -> None:
        """The function's instructions, renamed for `scope`, at the end of the entry."""
        fn = scope.function
        starts: dict[int, list[str]] = {}
        for label, k in fn.labels.items():
            starts.setdefault(k, []).append(label)
        for k, ins in enumerate(fn.instructions):
            self.label(scope, starts.get(k, []))
            self.declare(scope, ins)
            if ins.op == "call" and not ins.problem:
                self.call(scope, ins)
            elif ins.op == "ret" and scope.end is not None:
                self.add(replace(ins, opcode=("bra",),
                                 operands=(Operand("sym", scope.end),),
                                 guard=self.guard(scope, ins.guard), loc=scope.loc(ins.loc)))
            elif ins.op in ("ld", "st") and ins.has("param") and not ins.problem and \
                    self.slot_base(scope, ins) is not None:
                self.param_moves(scope, ins)
            else:
                self.add(self.renamed(scope, ins))
        self.label(scope, starts.get(len(fn.instructions), []))

    def label(self, scope: _Scope, names: list[str]) -> None:
        for name in names:
            self.out.labels[scope.symbol(name)] = len(self.out.instructions)

    def add(self, ins: Instruction) -> None:
        self.out.instructions.append(ins)

    def declare(self, scope: _Scope, ins: Instruction) -> None:
        """The function's registers that `ins` names, declared in the entry as renamed."""
        if scope.suffix:
            for name, t in _registers_of(ins, scope.function):
                self.out.registers[scope.register(name)] = t

    def guard(self, scope: _Scope, guard: tuple[str, bool] | None) -> tuple[str, bool] | None:
        return None if guard is None else (scope.register(guard[0]), guard[1])

    def renamed(self, scope: _Scope, ins: Instruction) -> Instruction:
        """An instruction of the function with its registers, labels and local variables
        renamed for the activation, its `.loc` inlined at the call."""
        if not scope.suffix:
            return ins
        return replace(ins, guard=self.guard(scope, ins.guard), loc=scope.loc(ins.loc),
                       operands=tuple(_renamed(scope, op) for op in ins.operands))

    # ------------------------------------------------------------------ .param

    def slot_base(self, scope: _Scope, ins: Instruction) -> str | None:
        """The caller's name of the `.param` variable ld / st.param `ins` moves (None for
        an entry's own parameters, which the launch gives)."""
        op = ins.operands[0 if ins.op == "st" else 1]
        if op.kind != "addr" or not op.name or op.name in self.kernel_params:
            return None
        return scope.slots.get(op.name, scope.symbol(op.name))

    def param_moves(self, scope: _Scope, ins: Instruction) -> None:
        """ld.param / st.param of a call's parameter -> a mov per part from / to its slot
        register (`base+offset:width`)."""
        t = data_type(ins)
        width = WIDTH[t]
        base = self.slot_base(scope, ins)
        store = ins.op == "st"
        address, value = (ins.operands[0], ins.operands[1]) if store else \
            (ins.operands[1], ins.operands[0])
        parts = value.parts if value.kind == "vec" else (value,)
        assert len(parts) == vector_parts(ins)
        for j, part in enumerate(parts):
            slot = f"{base}+{address.offset + j * width}:{width}"
            if not store and slot not in self.out.registers and self.narrowed(ins, slot, part,
                                                                              scope):
                continue
            self.out.registers.setdefault(slot, t)
            slot_op, here = Operand("reg", slot), _renamed(scope, part)
            self.add(replace(ins, opcode=("mov", t), operands=(slot_op, here) if store else
                             (here, slot_op), guard=self.guard(scope, ins.guard),
                             loc=scope.loc(ins.loc)))

    def narrowed(self, ins: Instruction, slot: str, part: Operand, scope: _Scope) -> bool:
        """An ld.param narrower than the st.param that set its offset (-G passes a 1-byte
        argument in a .b32 parameter the callee reads with ld.param.u8): a cvt of the wider
        slot's low bytes (little-endian), as the memory holds them; False where no wider slot
        at that offset was set."""
        head, width = slot.rsplit(":", 1)
        wider = next((w for w in (2, 4, 8) if w > int(width)
                      and f"{head}:{w}" in self.out.registers), None)
        t = data_type(ins)
        if wider is None or t[0] not in "bsu":
            return False
        to = "u" + t[1:] if t[0] == "b" else t
        self.add(replace(ins, opcode=("cvt", to, f"u{8 * wider}"),
                         operands=(_renamed(scope, part), Operand("reg", f"{head}:{wider}")),
                         guard=self.guard(scope, ins.guard), loc=scope.loc(ins.loc)))
        return True

    # ------------------------------------------------------------------ calls

    def call(self, scope: _Scope, ins: Instruction) -> None:
        """A call of a function the module defines, inlined (see the module docstring);
        any other call is kept (calls.py's limits give it its problem)."""
        callee = self.module.functions.get(ins.operands[0].name) \
            if ins.operands[0].kind == "sym" else None
        problem = self.refusal(scope, callee)
        if callee is None or problem is not None:
            kept = self.renamed(scope, ins)
            self.add(kept if problem is None else replace(kept, problem=problem))
            return
        returns, args = (tuple(scope.symbol(p.name) for p in op.parts)
                         for op in ins.operands[1:3])
        if len(returns) != len(callee.returns) or len(args) != len(callee.params):
            self.add(replace(self.renamed(scope, ins), problem=(
                f"a call of {callee.name} with {len(args)} arguments and {len(returns)} "
                f"return parameters ({len(callee.params)} and {len(callee.returns)} declared)")))
            return
        suffix = f"~{next(self.copies)}"
        end = f"$call_end{suffix}"
        if ins.guard is not None:
            name, negated = ins.guard
            self.add(replace(ins, opcode=("bra",), operands=(Operand("sym", end),),
                             guard=(scope.register(name), not negated), loc=scope.loc(ins.loc)))
        slots = {p.name: a for p, a in zip(callee.params + callee.returns, args + returns)}
        self.out.variables.extend(_frame(callee, suffix, self.out.variables))
        self.emit(_Scope(callee, suffix, slots, end, scope.depth + 1, scope.loc(ins.loc)))
        self.out.labels[end] = len(self.out.instructions)

    def refusal(self, scope: _Scope, callee: Entry | None) -> str | None:
        """Why a call of `callee` is not inlined here (None: it is, or it is no call of a
        function the module defines)."""
        if callee is None:
            return None
        if scope.depth >= MAX_CALL_DEPTH:
            return (f"a call of {callee.name} nested {scope.depth + 1} calls deep (recursion, "
                    f"or calls within calls): sectorviz inlines calls {MAX_CALL_DEPTH} deep "
                    f"at most")
        if len(self.out.instructions) + len(callee.instructions) > MAX_INLINED:
            return (f"a call of {callee.name} past {MAX_INLINED:,} inlined PTX instructions "
                    f"(sectorviz inlines each call where it is made)")
        return None


def _renamed(scope: _Scope, op: Operand) -> Operand:
    if op.kind == "reg":
        return replace(op, name=scope.register(op.name))
    if op.kind == "addr" and op.name:
        renamed = scope.register(op.name)
        return replace(op, name=renamed if renamed != op.name else scope.symbol(op.name))
    if op.kind == "sym":
        return replace(op, name=scope.symbol(op.name))
    if op.kind == "vec":
        return replace(op, parts=tuple(_renamed(scope, p) for p in op.parts))
    return op


def _registers_of(ins: Instruction, fn: Entry) -> list[tuple[str, str]]:
    """(name, type) of the registers the function declares that `ins` names."""
    names = [ins.guard[0]] if ins.guard else []
    todo = list(ins.operands)
    while todo:
        op = todo.pop()
        todo.extend(op.parts)
        if op.kind in ("reg", "addr") and op.name:
            names.append(op.name)
    return [(n, t) for n in names if (t := fn.register_type(n)) is not None]


def _frame(fn: Entry, suffix: str, placed: list[Variable]) -> list[Variable]:
    """The variables an activation of `fn` adds to the entry: its `.local` ones (its stack
    frame) renamed, its static (shared, constant, global) ones once."""
    known = {v.name for v in placed}
    return [replace(v, name=v.name + suffix) if v.space == "local" else v
            for v in fn.variables
            if v.space != "param" and (v.space == "local" or v.name not in known)]


def inlined(module: Module, entry: Entry) -> Entry:
    """The entry with the calls of the module's functions inlined (the entry itself where
    it makes none)."""
    if not any(ins.op == "call" for ins in entry.instructions):
        return entry
    return _Inliner(module, entry).out
