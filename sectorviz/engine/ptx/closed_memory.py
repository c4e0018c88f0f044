"""The closed-form machine's (closed.py) memory instructions: ld, ldu, st, atom, red,
cp.async (its global read and its shared write), ldmatrix / stmatrix and wmma.load / wmma.store
(each pass of the tile) record their access
(after the checks the lane path makes: inside one array, or the space's bytes) with the lanes
and the loop runs around it (a local access at the interleaved address the lane path counts;
a -G frame slot's access, not counted, records nothing); loaded
values are Opaque, but for a parameter's bytes and a constant variable's known bytes at an
address alike on every lane."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...model.budget import BATCH_UNITS, charge
from ...model.sectors import WARP_SIZE
from ..closed_forms import Aff, Mask, NotClosed
from .bits import INT_DTYPES, WIDTH
from .closed_ops import matrix_product
from .matrix_ops import ROWS, matrix_shape, wmma_passes, wmma_tile
from .memory_ops import ATOM_REDUCE, LOCAL_GRAIN, WINDOWED
from .parse import Instruction, Operand
from .program import CONST_GENERIC, LOCAL_GENERIC, SHARED_GENERIC, WINDOW
from .refuse import Unrunnable
from .sites import Site, copies_nothing, data_type, space_of, vector_parts
from .symbolic import OPAQUE, need

if TYPE_CHECKING:
    from .closed import ClosedMachine

GENERIC = (("shared", SHARED_GENERIC), ("local", LOCAL_GENERIC), ("constant", CONST_GENERIC))


def load(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """ld / ldu: the access, then Opaque values (or a parameter's bytes, or a constant
    variable's initial bytes at an address the same on every lane)."""
    t = data_type(ins)
    dest = ins.operands[0]
    dests = list(dest.parts) if dest.kind == "vec" else [dest]
    if space_of(ins) == "param":
        return _known(mc, dests, t, _param_bytes(mc, ins.operands[1]), m)
    address = access(mc, ins, pc, ins.operands[1], m)
    known = _constant_bytes(mc, address) if address is not None and \
        space_of(ins) == "constant" else None
    _known(mc, dests, t, known, m)


def _known(mc: "ClosedMachine", dests: list[Operand], t: str, data: bytes | None, m: Mask) -> None:
    """Destinations set from `data` (little-endian, a part each; None: Opaque)."""
    width = WIDTH[t]
    for j, d in enumerate(dests):
        part = None if data is None else data[j * width:(j + 1) * width]
        if part is None or len(part) != width or t not in INT_DTYPES:
            mc.write(d, OPAQUE, t, m)
        else:
            mc.write(d, Aff(int.from_bytes(part, "little", signed=t[0] == "s")), t, m)


def _param_bytes(mc: "ClosedMachine", op: Operand) -> bytes | None:
    data, known, _ = mc.kernel.param_bytes.get(op.name, (b"", False, ""))
    return data[op.offset:] if known else None


def _constant_bytes(mc: "ClosedMachine", address: Aff) -> bytes | None:
    """The launch bytes of a constant variable from a scalar byte offset on, if known."""
    if not address.scalar:
        return None
    assert isinstance(address.base, int)
    for name, data in mc.kernel.initial_bytes.items():
        space, start = mc.prog.layout.where[name]
        if space == "constant" and start <= address.base < start + len(data):
            return data[address.base - start:]
    return None


def atom(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """atom / red: the access; an atom's result is Opaque (what the lane path runs:
    memory_ops.atom, whose refusals give the chunk to it)."""
    t = data_type(ins)
    kinds = (*ATOM_REDUCE, "exch", "cas", "inc", "dec")
    if vector_parts(ins) > 1 or t in ("f16x2", "bf16x2") or \
            not any(o in kinds for o in ins.opcode[1:]):
        raise NotClosed(f"`{ins.text}` has no closed form")
    has_dest = ins.op == "atom"
    access(mc, ins, pc, ins.operands[1 if has_dest else 0], m)
    if has_dest:
        mc.write(ins.operands[0], OPAQUE, t, m)


def store(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    if space_of(ins) != "param":
        access(mc, ins, pc, ins.operands[0], m)


def cp_async(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """cp.async.ca / .cg.shared.global [dst], [src], cp-size[, src-size]: the global read of
    the lanes whose src-size is above 0, the shared write of every lane (as
    memory_ops.cp_async); commits and waits order nothing here."""
    if ins.opcode[1] != "async":
        raise NotClosed(f"`{ins.text}` has no closed form")
    if copies_nothing(ins):
        return
    listed = mc.sites.get(pc, [])  # a bulk copy has its two sites only where it runs
    if len(listed) != 2:
        raise NotClosed("not one copy")
    (kg, load), (ks, store) = listed
    reads = m
    if len(ins.operands) > 3 and ins.operands[3].kind in ("imm", "reg"):
        reads = mc.ck.holds(need(mc.read(ins.operands[3], "u32", m)), ">", m)
    if reads.any():
        record(mc, ins, ins.operands[1], reads, (kg, load), "global")
    record(mc, ins, ins.operands[0], m, (ks, store), "shared")


def matrix_rows(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """ldmatrix / stmatrix .m8n8 .b16 of whole warps: the shared access of the lanes that
    give row addresses (lanes 8i .. 8i + 7 for matrix i, as matrix_ops); ldmatrix's
    registers Opaque."""
    try:
        count, _ = matrix_shape(ins)
    except Unrunnable:
        raise NotClosed(f"`{ins.text}` has no closed form") from None
    if not mc.aligned(m):
        raise NotClosed(f"`{ins.text}` in a warp whose lanes are not all active")
    listed = mc.sites.get(pc, [])
    if len(listed) != 1:
        raise NotClosed("not one matrix access")
    lane = mc.special("%laneid")
    assert isinstance(lane, Aff)
    givers = mc.ck.holds(lane + Aff(-ROWS * count), "<", m)
    loads = ins.op == "ldmatrix"
    record(mc, ins, ins.operands[1 if loads else 0], givers, listed[0], "shared")
    if loads:
        dest = ins.operands[0]
        for d in dest.parts if dest.kind == "vec" else (dest,):
            mc.write(d, OPAQUE, "b32", m)


def wmma_access(mc: "ClosedMachine", ins: Instruction, pc: int, m: Mask) -> None:
    """wmma.load / wmma.store of whole warps, its stride the same on every lane and
    iteration: each pass of the tile (matrix_ops.wmma_passes) recorded as an access at the
    address plus each lane's offset in the tile; wmma.mma and a load's registers Opaque."""
    if ins.opcode[1:2] == ("mma",):
        return matrix_product(mc, ins, pc, m)
    try:
        lines, line_bytes, size = wmma_tile(ins)
    except Unrunnable:
        raise NotClosed(f"`{ins.text}` has no closed form") from None
    listed = mc.sites.get(pc, [])
    if not mc.aligned(m) or len(listed) != 1 or ins.opcode[1] not in ("load", "store"):
        raise NotClosed(f"`{ins.text}` has no closed form")
    loads = ins.opcode[1] == "load"
    stride = line_bytes // size
    if len(ins.operands) > 2:
        given = need(mc.read(ins.operands[2], "s32", m))
        if not given.scalar:
            raise NotClosed("a wmma stride that varies")
        assert isinstance(given.base, int)
        stride = given.base
    lane = mc.special("%laneid")
    assert isinstance(lane, Aff)
    classes = len(mc.ck.valid)
    for line, byte in wmma_passes(lines, line_bytes):
        lanes = mc.ck.holds(lane + Aff(-int((line >= 0).sum())), "<", m)
        offset = np.tile(np.maximum(line, 0) * stride * size + byte, (classes, 1))
        record(mc, ins, ins.operands[1 if loads else 0], lanes, listed[0], space_of(ins),
               Aff(0, offset))
    if loads:
        dest = ins.operands[0]
        for d in dest.parts if dest.kind == "vec" else (dest,):
            mc.write(d, OPAQUE, mc.prog.entry.register_type(d.name) or "b32", m)


def access(mc: "ClosedMachine", ins: Instruction, pc: int, op: Operand, m: Mask
           ) -> Aff | None:
    """Record the access of ld / st `ins` through address operand `op` over m (record) ->
    its address; None for a -G frame slot's (sites.py), which is not counted: nothing to
    record, and a value loaded from it is Opaque (a use that needs it gives way)."""
    listed = mc.sites.get(pc, [])
    if len(listed) != 1:
        raise NotClosed("not one plain access")
    if listed[0][1].slot:
        return None
    return record(mc, ins, op, m, listed[0], space_of(ins))


def record(mc: "ClosedMachine", ins: Instruction, op: Operand, m: Mask, counted: tuple[int, Site],
           space: str | None, shift: Aff | None = None) -> Aff:
    """Record the access through address operand `op` (plus `shift`, bytes per lane) over m
    of site `counted` (its index among its space's sites, and itself) in `space` (None:
    generic), after the checks the lane path makes (inside one array, or the space's bytes);
    a constant load is checked only (constant reads are counted apart)."""
    if op.kind != "addr":
        raise NotClosed("not one plain access")
    k, site = counted
    if not op.name:
        address = Aff(op.offset)
    elif op.name in mc.prog.layout.where:
        address = Aff(mc.prog.layout.where[op.name][1] + op.offset)
    else:
        address = need(mc.read(Operand("reg", op.name), "u64", m)) + Aff(op.offset)
    if shift is not None:
        address = address + shift
    if space is None:
        space, base = _generic(mc, site, address, m)
        address = address + Aff(-base)
    elif space in WINDOWED:
        address = _window_offset(mc, address, m)
    charge(mc.ck.n + BATCH_UNITS, "running the compiled kernel", *mc.kernel.where(ins))
    _inside(mc, space, address, site.width, m)
    if space != "constant":
        lanes_at = _interleaved(mc, address, site.width) if space == "local" else address
        mc.events.append((space, k, lanes_at, m, tuple(mc.loops)))
    return address


def _interleaved(mc: "ClosedMachine", offset: Aff, width: int) -> Aff:
    """A byte offset in a thread's local frame -> the address the lane path counts
    (memory_ops._batch): warp * 32 F + (o / g) * 32 g + lane * g + o % g, g = max(4, width)
    and F the frame rounded up to g; with o a multiple of g on every lane and iteration,
    that is 32 o + warp * 32 F + lane * g (NotClosed otherwise)."""
    grain = max(LOCAL_GRAIN, width)
    parts = [np.asarray(offset.base), *(() if offset.off is None else (offset.off,))]
    if any(c % grain for _, c in offset.coef) or any((p % grain).any() for p in parts):
        raise NotClosed("a local access not aligned to its word")
    frame = -(-max(mc.prog.layout.local_bytes, 1) // grain) * grain
    ck = mc.ck
    gx, gy, _ = mc.kernel.grid
    block = ck.block[0] + ck.block[1].scaled(gx) + ck.block[2].scaled(gx * gy)
    classes = len(ck.valid)
    lanes = np.arange(classes, dtype=np.int64)[:, None] * (WARP_SIZE * frame) + \
        np.arange(WARP_SIZE, dtype=np.int64) * grain
    return offset.scaled(WARP_SIZE) + block.scaled(classes * WARP_SIZE * frame) + \
        Aff(0, lanes)


def _window_offset(mc: "ClosedMachine", address: Aff, m: Mask) -> Aff:
    """A shared, local or constant address -> its 32-bit offset, as memory_ops._address
    wraps it modulo 2^32: less the multiple of 2^32 every active lane's address passes
    (NotClosed where the lanes pass different ones)."""
    span = mc.ck.extent(address, m)
    if span is None:
        return address
    passed = span[0] // WINDOW
    if span[1] // WINDOW != passed:
        raise NotClosed("a 32-bit address that wraps on some lanes only")
    return address + Aff(-passed * WINDOW) if passed else address


def _generic(mc: "ClosedMachine", site: Site, address: Aff, m: Mask) -> tuple[str, int]:
    """A generic address -> (its space, the generic address of that space's byte 0),
    where every active lane lies in the space the instruction is counted in."""
    span = mc.ck.extent(address, m)
    if span is not None:
        if site.space == "global" and span[1] < min(b for _, b in GENERIC):
            return "global", 0
        base = dict(GENERIC).get(site.space)
        if base is not None and base <= span[0] and span[1] < base + WINDOW:
            return site.space, base
    raise NotClosed("a generic address the closed forms do not place")


def _inside(mc: "ClosedMachine", space: str, address: Aff, width: int, m: Mask) -> None:
    span = mc.ck.extent(address, m)
    if span is None:
        return
    lo, hi = span[0], span[1] + width
    if space == "global":
        ok = any(a <= lo and hi <= b for a, b, _ in mc.kernel.global_ranges)
    else:
        size = {"shared": mc.prog.layout.shared_bytes, "local": mc.prog.layout.local_bytes,
                "constant": mc.prog.layout.const_bytes}[space]
        ok = 0 <= lo and hi <= size
    if not ok:
        raise NotClosed("an access outside its array")
