"""Warp-wide matrix instructions. ldmatrix / stmatrix .m8n8 .x1 / .x2 / .x4 [.trans] .b16 on
shared memory, as the PTX ISA lays them out: lanes 8i .. 8i + 7 give the addresses of the
eight 16-byte rows of matrix i (the request: those lanes, 16 bytes each); lane t holds, of
each matrix, the two b16 of row t / 4 at columns 2 (t % 4) and 2 (t % 4) + 1 (with .trans, of
column t / 4 at rows 2 (t % 4) and 2 (t % 4) + 1), packed low first in one 32-bit register.
mma.sync.aligned (every shape and type): a tensor-core product from registers to registers,
no memory access; its results are data whose values are not computed.
wmma.load.{a,b,c} / wmma.store.d / wmma.mma (.sync.aligned): NVIDIA leaves which lane moves
which element unspecified, so a load or store is counted as the tile it moves (wmma_passes):
its lines (rows for .row, columns for .col; line r at p + r * stride * element bytes), 16
bytes a lane, line after line, one request per 32 lanes; registers it loads are unknown data."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...model.errors import PatternError
from .memory_ops import _address, _event, _keys, _read, _resolve, _sites, _unknown_reason
from .parse import Instruction, Operand
from .refuse import Unrunnable
from .sites import WMMA_CHUNK as CHUNK
from .sites import Site, space_of

if TYPE_CHECKING:
    from .execute import Machine

ROW_BYTES = 16
ROWS = 8  # rows of a matrix: the lanes that give one matrix's row addresses


def matrix_shape(ins: Instruction) -> tuple[int, bool]:
    """(matrices, transposed) of an ldmatrix / stmatrix; only .m8n8 of .b16 is run."""
    if "m8n8" not in ins.opcode or "b16" not in ins.opcode:
        raise Unrunnable("matrix shapes other than .m8n8 .b16")
    count = next((int(o[1:]) for o in ins.opcode if o in ("x1", "x2", "x4")), 1)
    return count, "trans" in ins.opcode


def _pieces(m: "Machine", rows: np.ndarray, i: int,
            transposed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Keys of row addresses (warps, 32) -> for matrix i, the keys of the two b16 each lane
    holds: (low half, high half), (warps, 32) each."""
    t = m.lane
    if not transposed:
        row = np.take_along_axis(rows, 8 * i + t // 4, axis=1)
        low = row + 4 * (t % 4)
        return low, low + 2
    first = np.take_along_axis(rows, 8 * i + 2 * (t % 4), axis=1)
    second = np.take_along_axis(rows, 8 * i + 2 * (t % 4) + 1, axis=1)
    return first + 2 * (t // 4), second + 2 * (t // 4)


def _whole_warps(ins: Instruction, mask: np.ndarray) -> None:
    """.sync.aligned: every lane of a warp runs the instruction, or none does."""
    if np.any(mask.any(axis=1) & ~mask.all(axis=1)):
        raise Unrunnable(f"{ins.op} in a warp whose lanes are not all active")


def mma_result(ins: Instruction) -> str:
    """Why the destination registers of an mma hold unknown values (errors say it)."""
    return (f"the result of `{ins.text}`, a tensor-core matrix product (data: sectorviz "
            "does not compute it)")


def mma(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """mma.sync.aligned d, a, b, c[, ...]: no access; the registers of d become unknown
    data on the warp's lanes."""
    _whole_warps(ins, mask)
    _unknown_fragment(m, ins, mask)


def _rows(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray, operand: Operand,
          count: int) -> tuple[Site, str, np.ndarray]:
    """The request (lanes giving row addresses) and the keys of every lane's row."""
    (k, site), = _sites(m, pc)
    name = m.ctx.name_of(site)
    _whole_warps(ins, mask)
    givers = mask & (m.lane < ROWS * count)
    address = _address(m, ins, operand, givers, f"'{name}'", "shared")
    keys = _keys(m, ins, "shared", address, givers, ROW_BYTES, f"'{name}'")
    _event(m, k, site, "shared", address, givers)
    return site, name, keys


def ldmatrix(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    count, transposed = matrix_shape(ins)
    site, name, keys = _rows(m, ins, pc, mask, ins.operands[1], count)
    dest = ins.operands[0]
    dests = list(dest.parts) if dest.kind == "vec" else [dest]
    flat = np.flatnonzero(mask)
    why = _unknown_reason(m, "shared", site, name)
    for i, d in enumerate(dests[:count]):
        low, high = (p.ravel()[flat] for p in _pieces(m, keys, i, transposed))
        lo_bits, lo_known, _ = _read(m, "shared", low, 2, why)
        hi_bits, hi_known, _ = _read(m, "shared", high, 2, why)
        bits = np.zeros(m.shape, dtype=np.uint64)
        bits.ravel()[flat] = lo_bits | (hi_bits << np.uint64(16))
        known = lo_known & hi_known
        unk = None
        if not known.all():
            unk = np.zeros(m.shape, dtype=bool)
            unk.ravel()[flat] = ~known
        m.write(d, bits, "b32", mask, unk, why)


def stmatrix(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    count, transposed = matrix_shape(ins)
    site, _, keys = _rows(m, ins, pc, mask, ins.operands[0], count)
    if not site.kept:
        return
    src = ins.operands[1]
    srcs = list(src.parts) if src.kind == "vec" else [src]
    flat = np.flatnonzero(mask)
    for i, s in enumerate(srcs[:count]):
        v, unk, why = m.read(s, "b32")
        bits = np.broadcast_to(np.asarray(v).astype(np.uint64), m.shape).ravel()[flat]
        known = None if unk is None else ~np.broadcast_to(unk, m.shape).ravel()[flat]
        if known is not None and not known.all():
            m.unknown_stored.setdefault("shared", why)
        low, high = (p.ravel()[flat] for p in _pieces(m, keys, i, transposed))
        m.stores["shared"].write(low, 2, bits & np.uint64(0xFFFF), known)
        m.stores["shared"].write(high, 2, bits >> np.uint64(16), known)


# wmma: NVIDIA leaves which lane moves which element unspecified; what is specified is the tile
WMMA_SHAPES = {"m16n16k16": (16, 16, 16), "m32n8k16": (32, 8, 16), "m8n32k16": (8, 32, 16),
               "m16n16k8": (16, 16, 8), "m8n8k4": (8, 8, 4)}  # (m, n, k)
WMMA_BYTES = {"f16": 2, "bf16": 2, "s8": 1, "u8": 1, "f32": 4, "s32": 4, "tf32": 4, "f64": 8}
PASS_BYTES = CHUNK * 32  # one request: 32 lanes of CHUNK bytes


def wmma_tile(ins: Instruction) -> tuple[int, int, int]:
    """wmma.load.{a,b,c} / wmma.store.d -> (lines, bytes per line, element bytes): fragment a
    is m x k, b k x n, c and d m x n, as rows (.row) or columns (.col); a line must be a
    multiple of CHUNK bytes."""
    code = ins.opcode
    shape = next((WMMA_SHAPES[o] for o in code if o in WMMA_SHAPES), None)
    size = next((WMMA_BYTES[o] for o in reversed(code) if o in WMMA_BYTES), None)
    layout = next((o for o in code if o in ("row", "col")), None)
    if shape is None or size is None or layout is None or len(code) < 3 or \
            code[2] not in ("a", "b", "c", "d"):
        raise Unrunnable("wmma shapes and types other than .m16n16k16, .m32n8k16, "
                         ".m8n32k16 (f16, bf16, s8, u8, f32, s32), .m16n16k8 (tf32) and "
                         ".m8n8k4 (f64)")
    m_, n, k = shape
    rows, cols = {"a": (m_, k), "b": (k, n)}.get(code[2], (m_, n))
    lines, elements = (rows, cols) if layout == "row" else (cols, rows)
    if elements * size % CHUNK:
        raise Unrunnable(f"wmma tiles whose {layout}s are not a multiple of {CHUNK} bytes")
    return lines, elements * size, size


def wmma_passes(lines: int, line_bytes: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The passes of a tile: for each, (line, byte in the line) of the CHUNK bytes each of the
    32 lanes moves (lane L of pass p: chunk 32 p + L, read line after line; line -1 where the
    tile has no such chunk: the lane is inactive)."""
    chunks = lines * line_bytes // CHUNK
    out = []
    for p in range(-(-chunks // 32)):
        q = 32 * p + np.arange(32, dtype=np.int64)
        line = np.where(q < chunks, CHUNK * q // line_bytes, -1)
        out.append((line, CHUNK * q % line_bytes))
    return out


def _wmma_stride(m: "Machine", ins: Instruction, mask: np.ndarray, at: int, line_bytes: int,
                 size: int) -> np.ndarray:
    """The stride operand (elements between lines) per lane; absent: the lines are packed."""
    if len(ins.operands) <= at:
        return np.full(m.shape, line_bytes // size, dtype=np.int64)
    v, unk, why = m.read(ins.operands[at], "s32")
    if unk is not None and np.any(unk & mask):
        place, col = m.ctx.where(ins)
        raise PatternError(place, f"the stride of `{ins.text}` depends on {why}", col)
    return np.broadcast_to(np.asarray(v).astype(np.int64), m.shape)


def _wmma_tile_access(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray,
                      address_at: int) -> tuple[Site, str, list[tuple[np.ndarray, np.ndarray]]]:
    """Record a wmma tile's passes (one event each) -> its site, space and the (mask, keys)
    of each pass."""
    lines, line_bytes, size = wmma_tile(ins)
    _whole_warps(ins, mask)
    (k, site), = _sites(m, pc)
    name = m.ctx.name_of(site)
    base = _address(m, ins, ins.operands[address_at], mask, f"'{name}'", space_of(ins))
    space, base = _resolve(m, ins, site.space, base, mask)
    stride = _wmma_stride(m, ins, mask, 2, line_bytes, size)
    out = []
    for line, byte in wmma_passes(lines, line_bytes):
        lanes = mask & (line >= 0)
        address = base + line * stride * size + byte
        keys = _keys(m, ins, space, address, lanes, CHUNK, f"'{name}'")
        _event(m, k, site, space, address, lanes)
        out.append((lanes, keys))
    return site, space, out


def wmma_load(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """wmma.load.{a,b,c} d, [p], stride: the tile's passes; d becomes unknown data."""
    _wmma_tile_access(m, ins, pc, mask, 1)
    _unknown_fragment(m, ins, mask)


def wmma_store(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """wmma.store.d [p], d, stride: the tile's passes; its bytes become unknown (the
    fragment's values are not computed)."""
    site, space, passes = _wmma_tile_access(m, ins, pc, mask, 0)
    if not site.kept:
        return
    m.unknown_stored.setdefault(space, mma_result(ins))
    for lanes, keys in passes:
        flat = np.flatnonzero(lanes)
        for half in range(0, CHUNK, 8):  # a store writes at most 8 bytes a key
            m.stores[space].write(keys.ravel()[flat] + half, 8,
                                  np.zeros(flat.size, dtype=np.uint64),
                                  np.zeros(flat.size, dtype=bool))


def wmma(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """wmma.load / wmma.store / wmma.mma."""
    kind = ins.opcode[1] if len(ins.opcode) > 1 else ""
    if kind == "mma":
        return mma(m, ins, pc, mask)
    if kind == "load":
        return wmma_load(m, ins, pc, mask)
    if kind == "store":
        return wmma_store(m, ins, pc, mask)
    raise Unrunnable(f"wmma.{kind}")


def _unknown_fragment(m: "Machine", ins: Instruction, mask: np.ndarray) -> None:
    dest = ins.operands[0]
    unknown = np.ones(m.shape, dtype=bool)
    for d in dest.parts if dest.kind == "vec" else (dest,):
        t = m.prog.entry.register_type(d.name) or "b32"
        m.write(d, np.zeros(m.shape, dtype=np.uint64), t, mask, unknown, mma_result(ins))
