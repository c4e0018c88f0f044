"""Warp-wide matrix instructions. ldmatrix / stmatrix .m8n8 .x1 / .x2 / .x4 [.trans] .b16 on
shared memory, as the PTX ISA lays them out: lanes 8i .. 8i + 7 give the addresses of the
eight 16-byte rows of matrix i (the request: those lanes, 16 bytes each); lane t holds, of
each matrix, the two b16 of row t / 4 at columns 2 (t % 4) and 2 (t % 4) + 1 (with .trans, of
column t / 4 at rows 2 (t % 4) and 2 (t % 4) + 1), packed low first in one 32-bit register.
mma.sync.aligned (every shape and type): a tensor-core product from registers to registers,
no memory access; its results are data whose values are not computed."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .memory_ops import _address, _event, _keys, _read, _sites, _unknown_reason
from .parse import Instruction, Operand
from .refuse import Unrunnable
from .sites import Site

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
    dest = ins.operands[0]
    unknown = np.ones(m.shape, dtype=bool)
    for d in dest.parts if dest.kind == "vec" else (dest,):
        t = m.prog.entry.register_type(d.name) or "b32"
        m.write(d, np.zeros(m.shape, dtype=np.uint64), t, mask, unknown, mma_result(ins))


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
