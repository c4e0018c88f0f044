"""The static memory instructions of an entry: for each PTX instruction that touches global,
shared, local or constant memory, the space(s) it is counted in, its op ("load", "store",
"atom", "red"), its width in bytes per lane and the arrays or variables it can point into.
A cp.async is two: its global read (a load) and its shared write (a store). In the as-written
reading (a -G compile) a local access of a fixed frame slot (a variable -G keeps in memory
where the source keeps it in a register) is a `slot` site: run, but not counted."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...model.errors import PatternError
from .bits import WIDTH
from .parse import Entry, Instruction, Operand
from .program import NO_DESTINATION, Program

EXPLICIT = {"global": "global", "shared": "shared", "local": "local", "const": "constant"}
WMMA_CHUNK = 16  # bytes a lane moves in one pass of a wmma tile (matrix_ops.wmma_passes)
BULK_BYTES = 16  # the one size of a lane's bulk copy that runs (bulk_copy): a float4's


@dataclass(frozen=True)
class Site:
    """One counted memory instruction: PTX instruction index, space, op, bytes per lane
    (all components of a vector), bytes per component and components, names it points into."""

    at: int
    space: str
    op: str
    width: int
    part: int
    parts: int
    roots: tuple[str, ...]
    kept: bool = True  # a store whose bytes some load may read (else they are not kept)
    slot: bool = False  # a -G frame slot's access: run, left out of the counts


def data_type(ins: Instruction) -> str:
    """The data type of a memory instruction (its last modifier that is a type)."""
    for m in reversed(ins.opcode):
        if m in WIDTH:
            return m
    raise PatternError("kernel", f"no data type in the PTX instruction {ins.text}")


def vector_parts(ins: Instruction) -> int:
    return next((int(m[1:]) for m in ins.opcode if m in ("v2", "v4", "v8")), 1)


def space_of(ins: Instruction, modifiers_from: int = 1) -> str | None:
    """The explicit state space of a memory instruction (None: generic)."""
    for m in ins.opcode[modifiers_from:]:
        base = m.split("::")[0]
        if base in EXPLICIT:
            return EXPLICIT[base]
        if base == "param":
            return "param"
    return None


def _static_space(prog: Program, base: str, arrays: set[str]) -> tuple[str, tuple[str, ...]]:
    """A generic address's base register -> (the space its roots lie in, the roots)."""
    roots = prog.roots.get(base, set()) if base else set()
    if base in prog.layout.where:
        roots = {base}
    spaces = {prog.layout.where[r][0] if r in prog.layout.where else "global"
              for r in roots if r != "?"}
    if len(spaces) == 1:
        return spaces.pop(), tuple(sorted(r for r in roots if r != "?"))
    return "global", tuple(sorted(r for r in roots if r in arrays))


def _roots(prog: Program, op: Operand, space: str, arrays: set[str]) -> tuple[str, ...]:
    if op.name in prog.layout.where:
        return (op.name,)
    found = prog.roots.get(op.name, set())
    names = sorted(r for r in found if r != "?" and (
        (prog.layout.where[r][0] == space) if r in prog.layout.where else space == "global"))
    return tuple(names)


def memory_sites(prog: Program, arrays: set[str], reads: set[str],
                 frame_slots: bool = False) -> list[Site]:
    """Every memory instruction of the entry, in program order; `reads`: the registers
    whose value is used (an atom's result outside it: a red); `frame_slots`: whether
    accesses of fixed frame slots are `slot` sites (the as-written reading)."""
    out = []
    for at, ins in enumerate(prog.entry.instructions):
        if ins.op not in ("ld", "ldu", "st", "atom", "red", "cp", "ldmatrix", "stmatrix",
                          "wmma") or ins.problem:
            continue
        if ins.op == "wmma":  # a tile, 16 bytes a lane (matrix_ops.wmma_passes)
            if ins.opcode[1:2] in (("load",), ("store",)):
                out.append(_wmma_site(prog, at, ins, arrays))
            continue
        if ins.op in ("ldmatrix", "stmatrix"):  # a 16-byte row address from each of 8 lanes
            addr = ins.operands[1] if ins.op == "ldmatrix" else ins.operands[0]
            out.append(Site(at, "shared", "load" if ins.op == "ldmatrix" else "store", 16, 16,
                            1, _roots(prog, addr, "shared", arrays)))
            continue
        if ins.op == "cp":
            bulk = bulk_copy(prog.entry, ins)
            if len(ins.operands) < 3 or ins.opcode[1] != "async" or not bulk and any(
                    m in ("bulk", "reduce", "tensor") for m in ins.opcode):
                continue  # waits and commits move nothing; other bulk copies are refused
            size = BULK_BYTES if bulk else \
                ins.operands[2].value if ins.operands[2].kind == "imm" else 16
            dst, src = ins.operands[0], ins.operands[1]
            out.append(Site(at, "global", "load", size, size, 1,
                            _roots(prog, src, "global", arrays)))
            out.append(Site(at, "shared", "store", size, size, 1,
                            _roots(prog, dst, "shared", arrays)))
            continue
        explicit = space_of(ins)
        if explicit == "param":
            continue
        addr = ins.operands[0] if ins.op in ("st", "red") else ins.operands[1]
        if explicit is None:
            space, roots = _static_space(prog, addr.name, arrays)
        else:
            space, roots = explicit, _roots(prog, addr, explicit, arrays)
        t = data_type(ins)
        parts = vector_parts(ins)
        if ins.op == "atom":
            dest = ins.operands[0]
            used = dest.kind == "reg" and dest.name in reads
            # exch and cas have no reduction form: an atom even when the result is dropped
            op = "atom" if used or {"exch", "cas"} & set(ins.opcode) else "red"
        else:
            op = {"ld": "load", "ldu": "load", "st": "store", "red": "red"}[ins.op]
        slot = frame_slots and space == "local" and prog.frame_slot(addr) is not None
        out.append(Site(at, space, op, WIDTH[t] * parts, WIDTH[t], parts, roots, slot=slot))
    return _keep_read_stores(out)


def _wmma_site(prog: Program, at: int, ins: Instruction, arrays: set[str]) -> Site:
    """wmma.load [p] / wmma.store [p]: a 16-byte access (WMMA_CHUNK) per lane, in the space
    it names or, generic, the one its address's roots lie in (as ld)."""
    loads = ins.opcode[1] == "load"
    addr = ins.operands[1] if loads else ins.operands[0]
    explicit = space_of(ins)
    if explicit is None:
        space, roots = _static_space(prog, addr.name, arrays)
    else:
        space, roots = explicit, _roots(prog, addr, explicit, arrays)
    return Site(at, space, "load" if loads else "store", WMMA_CHUNK, WMMA_CHUNK, 1, roots)


def copies_nothing(ins: Instruction) -> bool:
    """Whether a cp.async instruction moves no data: a commit or wait of groups, or
    `cp.async.mbarrier.arrive` (a bulk copy's `.mbarrier::complete_tx` copies)."""
    return ins.opcode[2:3] == ("mbarrier",) or any(
        o.startswith(("commit_group", "wait_group", "wait_all")) for o in ins.opcode[2:])


def bulk_copy(entry: Entry, ins: Instruction) -> bool:
    """Whether `ins` is a lane's 1-D bulk copy of BULK_BYTES from global to shared
    (`cp.async.bulk.shared::cta.global` or `.shared::cluster.global [dst], [src], size,
    [mbar]`, as cuda::memcpy_async of a float4 through a cuda::barrier emits it), its size an
    immediate or a register set once, by a mov of one; it runs as a cp.async of that size.
    Other bulk copies (tensor maps, reductions, other sizes) are refused."""
    code = ins.opcode
    if code[:3] != ("cp", "async", "bulk") or len(code) < 5 or len(ins.operands) < 3 or \
            not code[3].startswith("shared") or code[4] != "global":
        return False
    size = ins.operands[2]
    if size.kind == "reg":
        sets = [i for i in entry.instructions
                if i.operands and i.op not in NO_DESTINATION and i.operands[0].kind == "reg"
                and i.operands[0].name == size.name]
        if len(sets) != 1 or sets[0].op != "mov" or sets[0].guard is not None:
            return False
        size = sets[0].operands[1]
    return size.kind == "imm" and size.value == BULK_BYTES


def numbered(sites: list[Site]) -> dict[int, list[tuple[int, Site]]]:
    """PTX instruction index -> its sites, each with its index among the counted
    instructions of its space (-1: a slot site, not counted)."""
    counters: dict[str, int] = {}
    out: dict[int, list[tuple[int, Site]]] = {}
    for s in sites:
        k = -1
        if not s.slot:
            k = counters.get(s.space, 0)
            counters[s.space] = k + 1
        out.setdefault(s.at, []).append((k, s))
    return out


def _keep_read_stores(sites: list[Site]) -> list[Site]:
    """Sites with `kept` False for stores no load can read: their roots are not among the
    roots of any load or atomic of their space (a load whose roots are unknown reads all)."""
    read: dict[str, set[str]] = {}
    for s in sites:
        if s.op != "store":
            read.setdefault(s.space, set()).update(s.roots or {"*"})
    return [replace(s, kept=bool({"*", *s.roots} & read.get(s.space, set()) or not s.roots))
            if s.op == "store" else s for s in sites]
