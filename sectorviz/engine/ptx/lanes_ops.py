"""Instructions across the lanes of a warp or a block: shfl.sync, vote.sync, match.sync,
activemask, redux.sync, bar / barrier (all warps run in lockstep, so a barrier only has to
combine what bar.red reduces), and the calls run as no-ops (printf, assert)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from ...model.errors import PatternError
from .bits import to_bits
from .parse import Instruction, Operand
from .refuse import SILENT_CALLS, Unrunnable

if TYPE_CHECKING:
    from .execute import Machine

WARP_BITS = np.uint64(1) << np.arange(32, dtype=np.uint64)


def _ballot(pred: np.ndarray) -> np.ndarray:
    """(warps, 32) bools -> (warps,) uint64: bit l set where lane l's is true."""
    bits: np.ndarray = np.bitwise_or.reduce(np.where(pred, WARP_BITS, np.uint64(0)), axis=1)
    return bits


def _per_warp(values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return np.broadcast_to(values[:, None], shape)


def shfl(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """shfl.sync.mode.b32 d[|p], a, b, c, membermask, as the PTX ISA computes the source
    lane from b (lane or offset) and c (clamp and segment mask); a lane that reads an inactive
    lane gets an unknown value."""
    mode = next((o for o in ins.opcode[1:] if o in ("up", "down", "bfly", "idx")), "")
    dest = ins.operands[0]
    a, ua, wa = m.read(ins.operands[1], "b32")
    b, ub, wb = m.read(ins.operands[2], "u32")
    c, uc, wc = m.read(ins.operands[3], "u32")
    for u, w in ((ub, wb), (uc, wc)):
        if u is not None and np.any(u & mask):
            place, col = m.ctx.where(ins)
            raise PatternError(place, f"the lane `{ins.text}` reads depends on {w}", col)
    lane = m.lane
    bval = np.broadcast_to(np.asarray(b).astype(np.int64), m.shape) & 0x1F
    cval = np.broadcast_to(np.asarray(c).astype(np.int64), m.shape)
    seg = (cval >> 8) & 0x1F
    clamp = cval & 0x1F
    max_lane = (lane & seg) | (clamp & ~seg)
    min_lane = lane & seg
    if mode == "up":
        j = lane - bval
        ok = j >= max_lane
    elif mode == "down":
        j = lane + bval
        ok = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        ok = j <= max_lane
    elif mode == "idx":
        j = min_lane | (bval & ~seg)
        ok = j <= max_lane
    else:
        raise Unrunnable(f"shfl mode {mode}")
    j = np.where(ok, j, lane)
    a = np.broadcast_to(np.asarray(a), m.shape)
    got = np.take_along_axis(a, j, axis=1)
    src_active = np.take_along_axis(mask, j, axis=1)
    unk = ~src_active
    if ua is not None:
        unk = unk | np.take_along_axis(np.broadcast_to(ua, m.shape), j, axis=1)
    why = wa or f"a lane that `{ins.text}` reads, which is not active"
    if dest.kind == "vec":
        m.write(dest.parts[0], got, "b32", mask, unk if unk.any() else None, why)
        if dest.parts[1].kind != "sink":
            m.write(dest.parts[1], ok, "pred", mask)
    else:
        m.write(dest, got, "b32", mask, unk if unk.any() else None, why)


def _members(m: "Machine", ins: Instruction, mask: np.ndarray) -> np.ndarray:
    """(warps, 32, 32) bools: [w, l, j] where lane j is active and in lane l's membermask
    (the operand after the source: vote.sync / redux.sync combine over those lanes; tiles
    of one warp that run one instruction each name their own lanes)."""
    member, um, wm = m.read(ins.operands[2], "u32")
    if um is not None and np.any(um & mask):
        place, col = m.ctx.where(ins)
        raise PatternError(place, f"the lanes `{ins.text}` combines depend on {wm}", col)
    member = np.broadcast_to(np.asarray(member).astype(np.uint64), m.shape)
    bits = ((member[:, :, None] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)).astype(bool)
    return cast(np.ndarray, bits & mask[:, None, :])


def _unknown_in(members: np.ndarray, unk: np.ndarray | None,
                shape: tuple[int, ...]) -> np.ndarray | None:
    """Per lane: whether an unknown value is among its members' (None: none is)."""
    if unk is None:
        return None
    return cast(np.ndarray, (members & np.broadcast_to(unk, shape)[:, None, :]).any(axis=2))


def vote(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """vote.sync.all / any / uni.pred d, a, membermask; vote.sync.ballot.b32 d, a,
    membermask (over the active lanes of each lane's membermask)."""
    mode = next((o for o in ins.opcode[1:] if o in ("all", "any", "uni", "ballot")), "")
    p, up, wp = m.read(ins.operands[1], "pred")
    p = np.asarray(p, bool) & mask
    members = _members(m, ins, mask)
    unk = _unknown_in(members, up, m.shape)
    voting = members & np.broadcast_to(p, m.shape)[:, None, :]
    if mode == "ballot":
        ballot = np.bitwise_or.reduce(np.where(voting, WARP_BITS, np.uint64(0)), axis=2)
        m.write(ins.operands[0], ballot, "b32", mask, unk, wp)
        return
    count = voting.sum(axis=2)
    active = members.sum(axis=2)
    r = {"all": count == active, "any": count > 0,
         "uni": (count == 0) | (count == active)}.get(mode)
    if r is None:
        raise Unrunnable(f"vote mode {mode}")
    m.write(ins.operands[0], r, "pred", mask, unk, wp)


def match(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """match.sync.any / all.b32 / .b64 d[|p], a, membermask: the active lanes holding the
    same value."""
    mode, t = ins.opcode[1], ins.opcode[-1]
    a, ua, wa = m.read(ins.operands[1], t)
    a = np.broadcast_to(np.asarray(a), m.shape)
    same = (a[:, :, None] == a[:, None, :]) & mask[:, None, :]
    bits = np.bitwise_or.reduce(np.where(same, WARP_BITS, np.uint64(0)), axis=2)
    unk = None if ua is None else _per_warp((ua & mask).any(axis=1), m.shape)
    dest = ins.operands[0]
    if mode == "any":
        m.write(dest, bits, "b32", mask, unk, wa)
        return
    everyone = _per_warp(_ballot(mask), m.shape)
    alike = bits == everyone
    target = dest.parts[0] if dest.kind == "vec" else dest
    m.write(target, np.where(alike, everyone, 0), "b32", mask, unk, wa)
    if dest.kind == "vec" and dest.parts[1].kind != "sink":
        m.write(dest.parts[1], alike, "pred", mask, unk, wa)


def activemask(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    m.write(ins.operands[0], _per_warp(_ballot(mask), m.shape), "b32", mask)


REDUX = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
         "or": np.bitwise_or, "xor": np.bitwise_xor}


def redux(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """redux.sync.op.type d, a, membermask: op over the active lanes of each lane's
    membermask."""
    op, t = ins.opcode[2], ins.opcode[-1]
    if op not in REDUX:
        raise Unrunnable(f"redux.{op}")
    a, ua, wa = m.read(ins.operands[1], t)
    a = np.broadcast_to(np.asarray(a), m.shape)
    neutral = {"add": 0, "or": 0, "xor": 0, "and": -1,
               "min": np.iinfo(a.dtype).max, "max": np.iinfo(a.dtype).min}[op]
    members = _members(m, ins, mask)
    r = REDUX[op].reduce(np.where(members, a[:, None, :], np.array(neutral).astype(a.dtype)),
                         axis=2)
    m.write(ins.operands[0], r, t, mask, _unknown_in(members, ua, m.shape), wa)


def barrier(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """bar.sync / barrier.sync / bar.arrive: every warp of the chunk is here already (they
    run in lockstep). bar.red.popc / .and / .or reduce a predicate over the block."""
    if "red" not in ins.opcode:
        return
    kind = next(o for o in ins.opcode if o in ("popc", "and", "or"))
    dest = ins.operands[0]
    p, up, wp = m.read(ins.operands[-1], "pred")
    p = np.asarray(p, bool) & mask
    blocks = m.block_in_chunk[:, 0]
    n = int(blocks.max()) + 1
    count = np.bincount(blocks, p.sum(axis=1), minlength=n)
    active = np.bincount(blocks, mask.sum(axis=1), minlength=n)
    per_block = {"popc": count, "and": count == active, "or": count > 0}[kind]
    r = _per_warp(per_block[blocks], m.shape)
    unk = None
    if up is not None:
        bad = np.bincount(blocks, (up & mask).sum(axis=1), minlength=n) > 0
        unk = _per_warp(bad[blocks], m.shape)
    if kind == "popc":
        m.write(dest, to_bits(r, "u32"), "u32", mask, unk, wp)
    else:
        m.write(dest, r.astype(bool), "pred", mask, unk, wp)


def call(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """A direct call to printf's vprintf or assert's __assertfail runs as a no-op (their
    argument buffers, written by the kernel, are counted); calls of the module's functions
    are inlined before the run (calls.py); other calls are refused."""
    callee = ins.operands[0]
    if callee.kind != "sym":
        raise Unrunnable("a call through a function pointer")
    if callee.name not in SILENT_CALLS:
        raise Unrunnable(f"a call to {callee.name}, whose body the PTX does not hold")


def mbarrier(m: "Machine", ins: Instruction, pc: int, mask: np.ndarray) -> None:
    """mbarrier.init / arrive / expect_tx / inval order nothing when every warp runs in
    lockstep and copies complete when issued: a state they return is 0; test_wait and
    try_wait find the phase complete."""
    dest = ins.operands[0] if ins.operands else None
    if any(o in ("test_wait", "try_wait") for o in ins.opcode):
        # test_wait / try_wait always name a destination predicate
        m.write(cast(Operand, dest), np.ones(m.shape, dtype=bool), "pred", mask)
    elif dest is not None and dest.kind == "reg":
        m.write(dest, np.zeros(m.shape, dtype=np.uint64), "b64", mask)
