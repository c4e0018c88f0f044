"""ld / st / atom / red / cp.async on the machine: the address of each active lane resolved to
its space (a generic address by its window), checked against what that space holds, the
access yielded as a Batch of the space's addresses (global byte addresses; shared byte
offsets in the block's shared memory; local words interleaved across the lanes of the warp;
constant byte offsets), then the values moved: a load reads what was stored, else what the
pattern or an initializer gives, else unknown."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...model.assume import values_fix
from ...model.budget import BATCH_UNITS
from ...model.errors import PatternError
from ...model.kernel import Batch
from ...model.sectors import WARP_SIZE
from .bits import FLOATS, WIDTH, LaneValues, to_bits, view
from .memory import PAGE, every_byte, pack, span
from .parse import Instruction, Operand
from .program import CONST_GENERIC, LOCAL_GENERIC, SHARED_GENERIC, WINDOW, Program
from .refuse import BULK, Unrunnable
from .sites import Site, copies_nothing, data_type, space_of, vector_parts

if TYPE_CHECKING:
    from .execute import Machine

GENERIC = (("shared", SHARED_GENERIC), ("local", LOCAL_GENERIC), ("constant", CONST_GENERIC))
LOCAL_GRAIN = 4  # bytes: local words of a thread interleave across lanes at this width
WINDOWED = ("shared", "local", "constant")  # spaces whose addresses are 32 bits


def _address(m: "Machine", ins: Instruction, op: Operand, mask: np.ndarray,
             what: str, space: str | None) -> np.ndarray:
    """A memory operand of an access in `space` (None: generic) -> int64 byte address per
    lane in that space; a shared, local or constant address is 32 bits, its sum wrapping
    modulo 2^32 as the hardware's does."""
    if op.kind != "addr":
        raise PatternError(*m.ctx.where(ins)[:1], f"`{ins.text}` has no address operand")
    if not op.name:
        address = np.full(m.shape, op.offset, dtype=np.int64)
    elif op.name in m.prog.layout.where:
        address = np.full(m.shape, m.prog.layout.where[op.name][1] + op.offset, dtype=np.int64)
    else:
        v, unk, why = m.read(Operand("reg", op.name), "u64")
        if unk is not None and np.any(unk & mask):
            place, col = m.ctx.where(ins)
            raise PatternError(place, f"the address of {what} depends on {why}", col)
        address = np.asarray(v).astype(np.int64) + op.offset
    if space in WINDOWED:
        return address % WINDOW
    return address


def _resolve(m: "Machine", ins: Instruction, site_space: str, address: np.ndarray,
             mask: np.ndarray) -> tuple[str, np.ndarray]:
    """(space, address in that space) of a generic or explicit access; a generic access
    must land in the space the instruction is counted in."""
    explicit = space_of(ins)
    if explicit is not None:
        return explicit, address
    for space, base in GENERIC:
        inside = mask & (address >= base) & (address < base + WINDOW)
        if inside.any():
            if not inside[mask].all() or space != site_space:
                place, col = m.ctx.where(ins)
                raise PatternError(place, f"`{ins.text}` reaches {space} memory through a "
                                          "generic address where the PTX does not show it; "
                                          "sectorviz counts each instruction in one space",
                                   col)
            return space, address - base
    if site_space != "global" and mask.any():
        place, col = m.ctx.where(ins)
        raise PatternError(place, f"`{ins.text}` reaches global memory through a generic "
                                  f"address where the PTX shows {site_space} memory", col)
    return "global", address


def _keys(m: "Machine", ins: Instruction, space: str, address: np.ndarray, mask: np.ndarray,
          width: int,
          name: str) -> np.ndarray:
    """Addresses -> keys of the space's store; an address outside what the space holds is
    one error naming the first lane."""
    if space == "global":
        active = address[mask]
        if not active.size:
            return address
        first, last = int(active.min()), int(active.max()) + width
        if any(lo <= first and last <= hi for lo, hi, _ in m.ctx.global_ranges):
            return address  # every lane inside one array
        ok = np.zeros(m.shape, dtype=bool)
        for lo, hi, _ in m.ctx.global_ranges:
            ok |= (address >= lo) & (address + width <= hi)
        _check(m, ins, mask & ~ok, address, name, "outside every array the pattern places")
        return address
    size = {"shared": m.prog.layout.shared_bytes, "local": m.prog.layout.local_bytes,
            "constant": m.prog.layout.const_bytes}[space]
    dynamic = space == "shared" and any(v.extern for v in m.prog.layout.variables.values())
    _check(m, ins, mask & ((address < 0) | (address + width > size)), address, name,
           f"outside the {size} bytes of {space} memory the kernel declares" + (
               " (with the launch's dynamic shared memory: give kernel.dynamic_shared_bytes)"
               if dynamic else ""))
    if space == "shared":
        in_block: np.ndarray = m.block_in_chunk * span(size, PAGE) + address
        return in_block
    if space == "local":
        in_thread: np.ndarray = m.thread_in_chunk * span(size, 16) + address
        return in_thread
    return address


def _read_only(m: "Machine", ins: Instruction, space: str, name: str) -> None:
    """A store or atomic whose address lies in constant memory (a debug compile writes a
    __constant__ variable through its generic address; -O3 drops the store) is refused at
    its line: constant memory is read-only on the device."""
    if space == "constant":
        place, col = m.ctx.where(ins)
        raise PatternError(place, f"'{name}' writes to constant memory, which is read-only on "
                                  f"the device", col)


def _check(m: "Machine", ins: Instruction, bad: np.ndarray, address: np.ndarray, name: str,
           what: str) -> None:
    if bad.any():
        w, lane = np.argwhere(bad)[0]
        place, col = m.ctx.where(ins)
        raise PatternError(place, f"{name} reaches byte {int(address[w, lane])}, {what}, at "
                                  f"warp {int(m.threads.warp[w])} lane {int(lane)}", col)


def element_origin(prog: Program, global_ranges: list[tuple[int, int, str]], site: Site,
                   space: str) -> int:
    """The address (global bytes, or bytes in the block's shared memory) of element 0 of
    the array a global or shared site reaches: a lane's element is (address - it) // width."""
    if not site.roots:
        return 0
    if space == "global":
        return next((lo for lo, _, n in global_ranges if n == site.roots[0]), 0)
    return prog.layout.where.get(site.roots[0], (space, 0))[1]


def _event(m: "Machine", k: int, site: Site, space: str, address: np.ndarray,
           mask: np.ndarray) -> None:
    """Yield (through m.events) the access as a Batch in the space's addresses (none for a
    slot site, k = -1: a -G frame slot, run but not counted)."""
    if k >= 0:
        m.events.append((space, k, _batch(m, site, space, address, mask)))
    m.budget.charge(mask.size + BATCH_UNITS, "running the compiled kernel",
                    *m.ctx.where(m.code[site.at]))


def _batch(m: "Machine", site: Site, space: str, address: np.ndarray,
           mask: np.ndarray) -> Batch:
    if space == "local":
        grain = max(LOCAL_GRAIN, site.width)
        frame = -(-max(m.prog.layout.local_bytes, 1) // grain) * grain
        warp_base = m.threads.warp[:, None] * (frame * WARP_SIZE)
        address = warp_base + (address // grain) * (grain * WARP_SIZE) + m.lane * grain + \
            address % grain
        base = 0
    else:
        base = element_origin(m.prog, m.ctx.global_ranges, site, space)
    address = np.where(mask, address, 0)
    element = (address - base) // max(1, site.width)
    return Batch(mask, element, address, None, None, {})


def _read(m: "Machine", space: str, keys: np.ndarray, nbytes: int,
          why: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Compact keys -> (uint64 bits, known bool, reason where unknown)."""
    bits, written = m.stores[space].read(keys, nbytes)
    known = every_byte(written)
    if space == "global" and not known.all() and m.ctx.array_bytes.arrays:
        init, given = m.ctx.array_bytes.read(keys, nbytes)
        byte_mask = _byte_mask(written)
        bits = (bits & byte_mask) | (init & ~byte_mask)
        known = every_byte(written | given)
    return bits, known, why


def _byte_mask(written: np.ndarray) -> np.ndarray:
    """(n, k) bools -> n uint64 with 0xFF in the bytes written."""
    return pack(written.astype(np.uint8) * np.uint8(0xFF))


def _unknown_reason(m: "Machine", space: str, site: Site, name: str) -> str:
    if space == "global":
        arrays = ", ".join(f"'{r}'" for r in site.roots) or "the array it reads"
        fixes = "".join(values_fix(r, m.ctx.arrays) for r in site.roots)
        return (f"data loaded by '{name}'; give {arrays} values in the pattern file to "
                f"read it{fixes}")
    stored = m.unknown_stored.get(space)
    if stored is not None:  # the kernel stored unknown values there: say where they came from
        return f"data read from {space} memory by '{name}', stored there from {stored}"
    return f"data read from {space} memory by '{name}' that the kernel did not store first"


def _sites(m: "Machine", pc: int) -> list[tuple[int, Site]]:
    return m.sites.get(pc, [])


def load(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """ld / ldu: one event, then the destination(s) read from memory."""
    t = data_type(ins)
    dest = ins.operands[0]
    dests = list(dest.parts) if dest.kind == "vec" else [dest]
    if space_of(ins) == "param":
        return _load_param(m, ins, t, dests, mask)
    site, name, space, keys = _access(m, ins, pc, ins.operands[1], mask)
    flat = np.flatnonzero(mask)
    ck = keys.ravel()[flat]
    for j, d in enumerate(dests):
        if d.kind == "sink":
            continue
        bits, known, why = _read(m, space, ck + j * site.part, site.part,
                                 _unknown_reason(m, space, site, name))
        _write_compact(m, d, t, mask, flat, bits, known, why)


def _access(m: "Machine", ins: Instruction, pc: int, operand: Operand,
            mask: np.ndarray) -> tuple[Site, str, str, np.ndarray]:
    """The memory access of ld / st `ins` at `pc` through address `operand`: its one site
    and array name, the space the address resolves to and the memory keys of its lanes,
    after recording the event."""
    (k, site), = _sites(m, pc)
    name = m.ctx.name_of(site)
    address = _address(m, ins, operand, mask, f"'{name}'", space_of(ins))
    space, address = _resolve(m, ins, site.space, address, mask)
    keys = _keys(m, ins, space, address, mask, site.width, f"'{name}'")
    _event(m, k, site, space, address, mask)
    return site, name, space, keys


def _write_compact(m: "Machine", d: Operand, t: str, mask: np.ndarray, flat: np.ndarray,
                   bits: np.ndarray, known: np.ndarray, why: str | None) -> None:
    full = np.zeros(m.shape, dtype=np.uint64)
    full.ravel()[flat] = bits
    unk = None
    if not known.all():
        unk = np.zeros(m.shape, dtype=bool)
        unk.ravel()[flat] = ~known
    m.write(d, view(full, t), t, mask, unk, why)


def _load_param(m: "Machine", ins: Instruction, t: str, dests: list[Operand],
                mask: np.ndarray) -> None:
    """ld.param of a kernel parameter: the pattern's value (an array's base address, an
    integer param), or unknown; a call's return parameter is unknown."""
    op = ins.operands[1]
    data, known, why = m.ctx.param_bytes.get(op.name, (b"", False, f"the value returned "
                                                                   f"by a call ({op.name})"))
    width = WIDTH[t]
    for j, d in enumerate(dests):
        start = op.offset + j * width
        chunk = data[start:start + width]
        ok = known and len(chunk) == width
        value = int.from_bytes(chunk, "little") if ok else 0
        bits = np.full(m.shape, value, dtype=np.uint64)
        m.write(d, view(bits, t), t, mask, None if ok else np.ones(m.shape, dtype=bool),
                None if ok else why)


def store(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """st: one event, then the value(s) written (unknown values make the bytes unknown)."""
    if space_of(ins) == "param":
        return  # a call's argument: the call itself is a no-op
    t = data_type(ins)
    site, name, space, keys = _access(m, ins, pc, ins.operands[0], mask)
    _read_only(m, ins, space, name)
    if not site.kept:
        return
    src = ins.operands[1]
    srcs = list(src.parts) if src.kind == "vec" else [src]
    flat = np.flatnonzero(mask)
    ck = keys.ravel()[flat]
    for j, s in enumerate(srcs):
        v, unk, why = m.read(s, t)
        bits = np.broadcast_to(to_bits(v, t), m.shape).ravel()[flat]
        known = None if unk is None else ~np.broadcast_to(unk, m.shape).ravel()[flat]
        if known is not None and not known.all():
            m.unknown_stored.setdefault(space, why)
        m.stores[space].write(ck + j * site.part, site.part, bits, known)


ATOM_REDUCE = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
               "or": np.bitwise_or, "xor": np.bitwise_xor}


def atom(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """atom / red: one event; the new value of each address is its old value combined with
    every active lane's operand (add, min, max, and, or, xor; in lane order for the others,
    whose result then depends on the order and is unknown where lanes share an address).
    The old value returned is known only where one lane updated its address."""
    t = data_type(ins)
    if vector_parts(ins) > 1 or t in ("f16x2", "bf16x2"):
        raise Unrunnable("vector or packed atomics")
    has_dest = ins.op == "atom"
    addr_op = ins.operands[1] if has_dest else ins.operands[0]
    site, name, space, keys = _access(m, ins, pc, addr_op, mask)
    _read_only(m, ins, space, name)
    kind = next((o for o in ins.opcode[1:] if o in ATOM_REDUCE or o in (
        "exch", "cas", "inc", "dec")), None)
    if kind is None:
        raise Unrunnable("this atomic operation")
    flat = np.flatnonzero(mask)
    ck = keys.ravel()[flat]
    srcs = ins.operands[2:] if has_dest else ins.operands[1:]
    operands = [m.read(s, t) for s in srcs]
    vals = [np.broadcast_to(v, m.shape).ravel()[flat] for v, _, _ in operands]
    op_known = np.ones(len(flat), dtype=bool)
    for _, unk, _ in operands:
        if unk is not None:
            op_known &= ~np.broadcast_to(unk, m.shape).ravel()[flat]
    old_bits, old_known, why = _read(m, space, ck, site.width,
                                     _unknown_reason(m, space, site, name))
    old = view(old_bits, t)
    uniq, first, inverse, counts = np.unique(ck, return_index=True, return_inverse=True,
                                             return_counts=True)
    alone = counts[inverse] == 1
    group_known = np.ones(len(uniq), dtype=bool)
    np.logical_and.at(group_known, inverse, op_known & old_known)
    if kind in ATOM_REDUCE:
        f = ATOM_REDUCE[kind]
        if t in FLOATS and kind in ("min", "max"):
            f = np.fmin if kind == "min" else np.fmax
        order = np.argsort(inverse, kind="stable")
        starts = np.searchsorted(inverse[order], np.arange(len(uniq)))
        combined = f.reduceat(vals[0][order], starts) if len(order) else vals[0][:0]
        new = f(old[first], combined.astype(old.dtype))
    else:
        new = _serial(kind, t, old[first], vals, inverse, len(uniq))
        group_known &= counts == 1
    m.stores[space].write(uniq, site.width, to_bits(np.asarray(new).astype(old.dtype), t),
                          group_known)
    if has_dest:
        why_old = (f"the value an atomic returns where several threads update one address "
                   f"(their order is not defined) at '{name}'")
        known = old_known & alone
        reason = why if not old_known.all() else why_old
        _write_compact(m, ins.operands[0], t, mask, flat, old_bits, known, reason)


def _serial(kind: str, t: str, old: np.ndarray, vals: list[np.ndarray], inverse: np.ndarray,
            groups: int) -> LaneValues:
    """exch / cas / inc / dec where one lane updates an address (others are unknown)."""
    pick = np.zeros(groups, dtype=np.int64)
    pick[inverse] = np.arange(len(inverse))
    a = vals[0][pick]
    if kind == "exch":
        return a
    if kind == "cas":
        return np.where(old == a, vals[1][pick], old)
    if kind == "inc":
        return np.where(old >= a, 0, old + 1).astype(old.dtype)
    return np.where((old == 0) | (old > a), a, old - 1).astype(old.dtype)


def cp_async(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """cp.async.ca / .cg.shared.global [dst], [src], cp-size[, src-size]: a global load of the
    lanes that read (src-size above 0: the PTX ISA reads src-size bytes from src, and a lane
    whose src-size is 0 reads nothing, as Triton's masked loads issue it) and a shared store
    of cp-size bytes on every active lane (bytes past src-size are zeros); commit and wait
    groups order nothing here, the copy is done when it is issued. A lane's 16-byte bulk
    copy (sites.bulk_copy) runs so; other bulk copies are refused."""
    if ins.opcode[1] != "async":
        raise Unrunnable("this copy")
    if copies_nothing(ins):
        return
    if any(o in ("bulk", "reduce", "tensor") for o in ins.opcode[2:]) and \
            len(_sites(m, pc)) != 2:
        raise Unrunnable(BULK)
    (kg, load), (ks, store) = _sites(m, pc)
    size = _source_size(m, ins, mask)
    reads = mask if size is None else mask & (size > 0)
    name = m.ctx.name_of(load)
    src = _address(m, ins, ins.operands[1], reads, f"'{name}'", "global")
    dst = _address(m, ins, ins.operands[0], mask, f"'{m.ctx.name_of(store)}'", "shared")
    src_keys = _keys(m, ins, "global", src, reads, load.width, f"'{name}'")
    dst_keys = _keys(m, ins, "shared", dst, mask, store.width, f"'{m.ctx.name_of(store)}'")
    _event(m, kg, load, "global", src, reads)
    _event(m, ks, store, "shared", dst, mask)
    if not store.kept:
        return
    flat = np.flatnonzero(mask)
    gk, sk = src_keys.ravel()[flat], dst_keys.ravel()[flat]
    src_size = None if size is None else size.ravel()[flat]
    for b in range(0, load.width, 8):
        n = min(8, load.width - b)
        bits, known, _ = _read(m, "global", gk + b, n, "")
        if src_size is not None:
            keep = np.clip(src_size - b, 0, n)
            ones = np.where(keep >= 8, ~np.uint64(0),
                            (np.uint64(1) << (np.uint64(8) * keep.astype(np.uint64)))
                            - np.uint64(1))
            bits = bits & ones
            known = known | (keep == 0)
        m.stores["shared"].write(sk + b, n, bits, known)


def _source_size(m: "Machine", ins: Instruction, mask: np.ndarray) -> np.ndarray | None:
    """A cp.async's src-size operand -> the bytes each lane reads, (warps, 32) int64; None
    without one (every lane reads cp-size bytes)."""
    if len(ins.operands) <= 3 or ins.operands[3].kind not in ("imm", "reg"):
        return None
    v, unk, why = m.read(ins.operands[3], "u32")
    if unk is not None and np.any(unk & mask):
        place, col = m.ctx.where(ins)
        raise PatternError(place, f"the size `{ins.text}` copies depends on {why}", col)
    size: np.ndarray = np.broadcast_to(np.asarray(v).astype(np.int64), m.shape)
    return size
