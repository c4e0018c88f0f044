"""What is known of an entry before it runs: where its variables live (shared, local and
constant byte offsets, addresses of module-scope globals), where divergent branches
reconverge, which registers are ever read, and which arrays each memory instruction's address
can come from (pointers.py)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .cfg import reconvergence
from .parse import Entry, Instruction, Module, Operand, Variable
from .pointers import Place, names, pointer_places, reached

# generic addresses of byte offset 0 of the shared, local and constant windows: far above any
# global array, and below 2^60, so that the closed forms' integers (symbolic.PART) carry them
SHARED_GENERIC = 0x0F00_0000_0000_0000
LOCAL_GENERIC = 0x0E00_0000_0000_0000
CONST_GENERIC = 0x0D00_0000_0000_0000
WINDOW = 1 << 32  # bytes in each of those windows
MEMORY_OPS = ("ld", "st", "atom", "red", "cp", "ldu")
SPACE_OF = {"global": "global", "shared": "shared", "local": "local", "const": "constant"}
# instructions whose first operand is read, not set: they set no register
NO_DESTINATION = ("st", "red", "bar", "barrier", "bra", "cp", "prefetch", "stmatrix")


def round_up(x: int, align: int) -> int:
    return -(-x // max(1, align)) * max(1, align)


@dataclass
class Layout:
    """Variables -> (space, byte offset in it, or global address); sizes of the spaces."""

    where: dict[str, tuple[str, int]] = field(default_factory=dict)
    variables: dict[str, Variable] = field(default_factory=dict)
    shared_bytes: int = 0
    local_bytes: int = 0
    const_bytes: int = 0
    dynamic_shared_bytes: int = 0  # the launch's dynamic shared memory


def layout(module: Module, entry: Entry, global_end: int, dynamic_shared: int) -> Layout:
    """Place every variable the entry can see: shared, local and constant ones at aligned
    offsets in declaration order (the `extern` shared arrays after the others, all at the
    start of the launch's dynamic bytes), module-scope globals at aligned addresses from
    global_end."""
    out = Layout(dynamic_shared_bytes=dynamic_shared)
    ends = {"shared": 0, "local": 0, "constant": 0, "global": global_end}
    externs = []
    for var in module.variables + entry.variables:
        space = SPACE_OF.get(var.space)
        if space is None:
            continue
        out.variables[var.name] = var
        if space == "shared" and var.extern:
            externs.append(var)
            continue
        start = round_up(ends[space], max(var.align, 256 if space == "global" else 1))
        out.where[var.name] = (space, start)
        ends[space] = start + var.size
    if externs:  # every extern shared array names the one dynamic region: they alias
        start = round_up(ends["shared"], max(16, *(var.align for var in externs)))
        out.where.update((var.name, ("shared", start)) for var in externs)
        ends["shared"] = start + dynamic_shared
    out.shared_bytes, out.local_bytes, out.const_bytes = \
        ends["shared"], ends["local"], ends["constant"]
    return out


def _sources(ins: Instruction) -> list[Operand]:
    """The register operands an instruction reads (every operand after the destinations;
    a store's and a vector's parts included)."""
    ops = list(ins.operands)
    if ins.op in NO_DESTINATION or not ops:
        reads = ops
    else:
        reads = ops[1:]
        if ops[0].kind == "addr":  # never for a destination, but keep its base
            reads = ops
    out: list[Operand] = []
    for op in reads:
        if op.kind == "vec":
            out.extend(p for p in op.parts if p.kind == "reg")
        elif op.kind in ("reg", "addr") and op.name:
            out.append(op)
    return out


def source_registers(ins: Instruction) -> set[str]:
    """Registers one instruction reads: its sources, addresses and guard."""
    return {op.name for op in _sources(ins)} | ({ins.guard[0]} if ins.guard else set())


def set_registers(ins: Instruction) -> set[str]:
    """Registers one instruction sets on every lane that runs it: its destination (a
    vector's or a `d|p` pair's parts); none where a guard may keep the old value."""
    if ins.op in NO_DESTINATION or not ins.operands or ins.guard is not None:
        return set()
    dest = ins.operands[0]
    parts = dest.parts if dest.kind == "vec" else (dest,)
    return {p.name for p in parts if p.kind == "reg"}


def read_registers(entry: Entry) -> set[str]:
    """Registers some instruction reads (sources, addresses, guards)."""
    return set().union(*(source_registers(ins) for ins in entry.instructions))


def used_registers(entry: Entry) -> set[str]:
    """Registers whose value some instruction reads other than to copy it into another
    register (`mov`, as inlined calls pass their .param slots), directly or through such
    copies: an atom whose result is only copied around (a -G atomicAdd returning the old
    value to a caller that drops it) has no use."""
    copied_from: dict[str, list[str]] = {}  # a copy's destination -> its sources
    used: set[str] = set()
    for ins in entry.instructions:
        sources = [op.name for op in _sources(ins)]
        dest = ins.operands[0] if ins.operands else None
        if ins.op == "mov" and ins.guard is None and dest is not None and \
                dest.kind == "reg" and len(ins.operands) == 2 and ins.operands[1].kind == "reg":
            copied_from.setdefault(dest.name, []).extend(sources)
            continue
        used.update(sources)
        if ins.guard:
            used.add(ins.guard[0])
    todo = list(used)
    while todo:
        for source in copied_from.get(todo.pop(), ()):
            if source not in used:
                used.add(source)
                todo.append(source)
    return used


@dataclass
class Program:
    """An entry with its static facts (see the module docstring)."""

    module: Module
    entry: Entry
    layout: Layout
    reconverge: dict[int, int]
    reads: set[str]
    roots: dict[str, set[str]]  # register -> the names its value may point into
    places: dict[str, set[Place]]  # register -> those names with byte offsets (pointers.py)
    local: frozenset[str]  # the variables in local memory

    def frame_slot(self, address: Operand) -> Place | None:
        """The one local variable and fixed byte offset an address operand reaches on every
        execution (a -G frame slot), or None (another space, or indexed at run time)."""
        found = reached(self.places, set(self.layout.where), self.local, address)
        if len(found) != 1:
            return None
        (name, offset), = found
        return (name, offset) if name in self.local and offset is not None else None


def program(module: Module, entry: Entry, param_arrays: dict[str, str], global_end: int,
            dynamic_shared: int, placed: Program | None = None) -> Program:
    """Module and entry -> Program; param_arrays: PTX parameter name -> pattern array;
    `placed`: a Program of the same entry and arrays at other addresses, whose facts that do
    not depend on addresses (reconvergence, registers read, pointer places) are kept."""
    lay = layout(module, entry, global_end, dynamic_shared)
    if placed is not None:
        return replace(placed, layout=lay)
    local = frozenset(n for n, (space, _) in lay.where.items() if space == "local")
    places = pointer_places(entry, param_arrays, set(lay.where), local)
    return Program(module, entry, lay, reconvergence(entry), read_registers(entry),
                   {reg: names(found) for reg, found in places.items()}, places, local)
