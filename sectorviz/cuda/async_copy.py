"""Asynchronous copies global -> shared (`cuda::memcpy_async`, `cooperative_groups::
memcpy_async`, `__pipeline_memcpy_async`) as the hardware runs them: LDGSTS reads the source
through the LSU like a load (its sectors counted as a load's) and writes the destination in
shared memory like a store.

The bytes are cut into chunks of W bytes: W is `cuda::aligned_size_t<A>`'s A (at most 16, the
widest LDGSTS), else the widest of 16, 8, 4, 2, 1 bytes that divides a constant byte count and
the alignment of both pointers' pointee types. A per-thread copy moves its own chunks, one
after another. A group's copy (every thread of the group passes the same arguments) gives
chunk c to the thread of rank c % size, in round c // size: consecutive chunks go to the
group's threads in rank order, as cooperative groups' copy loop deals them. Each round is one
load and one store per lane that has a chunk. Barriers and pipelines only order: their
waits are ignored like `__syncthreads`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import ctype as C
from . import ir
from .ctype import CType
from .ir import Expr, Memory, fail, first_lane, known
from .source import Node, error, text

if TYPE_CHECKING:
    from .compile import Compiler

MAX_CHUNK = 16  # bytes: the widest LDGSTS
CHUNK_TYPES = {1: C.UCHAR, 2: C.USHORT, 4: C.UINT, 8: C.NAMED["uint2"], 16: C.NAMED["uint4"]}
ASYNC_COPIES = ("memcpy_async copies chunks of the aligned_size_t alignment (else the widest "
                "of 16/8/4/2/1 bytes dividing the count and the pointees' alignment), each "
                "one global load and one shared store (LDGSTS); a group's copy deals "
                "consecutive chunks to its threads in rank order")


@dataclass
class AsyncCopy(Expr):
    """`count` bytes from `src` to `dst` in chunks of `load.type.size` bytes: in round r, the
    lane of group rank `rank` copies chunk r * size + rank while it is below count / W (one
    load of `load`'s site and one store of `store`'s per lane that has a chunk)."""

    dst: Expr
    src: Expr
    count: Expr
    rank: Expr
    size: Expr
    load: Memory
    store: Memory
    type: CType
    pos: tuple[int, int]

    def ev(self, run, mask):
        found = []
        for e, what in ((self.dst, "a copy's destination"), (self.src, "a copy's source"),
                        (self.count, "a copy's size"), (self.rank, "a thread's rank"),
                        (self.size, "a group's size")):
            value = known((yield from e.ev(run, mask)), e.pos, what)
            found.append(np.broadcast_to(np.asarray(value).astype(np.int64), run.shape))
        dst, src, count, rank, size = found
        width = self.load.type.size
        bad = mask & ((count < 0) | (count % width != 0))
        if bad.any():
            raise fail(self.pos, f"a copy of {int(count[bad][0])} bytes is not a whole number "
                                 f"of its {width}-byte chunks at {first_lane(run, bad)}")
        chunks = count // width
        rounds = np.where(mask & (chunks > rank), -(-(chunks - rank) // np.maximum(size, 1)), 0)
        for r in range(int(rounds.max(initial=0))):
            c = r * size + rank
            on = mask & (c < chunks)
            for mem, site, base in ((self.load, self.load.load_site, src),
                                    (self.store, self.store.store_site, dst)):
                yield mem.space, site.index, mem._batch(run, on, base + c * width, site)[1]
        return 0


def byte_count(comp: "Compiler", node: Node) -> tuple[ir.Expr, int | None]:
    """A copy's size argument -> (bytes, A when it is a `cuda::aligned_size_t<A>`, else
    None)."""
    count = comp.rvalue(node)
    return count, getattr(count.type, "align", None)


def chunk_width(count: ir.Expr, align: int | None, *pointees: C.CType) -> int:
    """The bytes each access of the copy moves (see the module's rule)."""
    if align is not None:
        return min(align, MAX_CHUNK)
    width = MAX_CHUNK
    if count.const:
        n = int(ir.constant_value(count))
        while width > 1 and n % width:
            width //= 2
    for t in pointees:
        if t.size:
            width = min(width, C.alignof(t))
    return width


def memcpy_async(comp: "Compiler", args: list[Node], node: Node, rank: ir.Expr,
                 size: ir.Expr) -> AsyncCopy:
    """`(dst, src, size[, barrier or pipeline])` copied by the threads `rank` of `size`
    (0 of 1: each thread its own bytes) -> the copy."""
    dst, src = (comp.rvalue(a) for a in args[:2])
    for e, a in ((dst, args[0]), (src, args[1])):
        if not isinstance(e.type, C.Pointer) or not e.type.root:
            raise error(a, f"memcpy_async needs a pointer into an array, not '{text(a)}'")
    if dst.type.space == "constant":
        raise error(args[0], f"a copy into the __constant__ array {dst.type.root!r}")
    count, align = byte_count(comp, args[2])
    if not C.is_int(count.type):
        raise error(args[2], "a copy's size must be an integer")
    for sync in args[3:]:
        comp.expr(sync)  # a barrier or pipeline: it orders the copy, it moves no bytes
    chunk = CHUNK_TYPES[chunk_width(count, align, dst.type.to, src.type.to)]
    loads, stores = (Memory(e, chunk, e.type.space, e.type.root, e.pos, tuple(comp.loops))
                     for e in (src, dst))
    loads.load_site = comp.site(loads, "load", args[1])
    stores.store_site = comp.site(stores, "store", args[0])
    if ASYNC_COPIES not in comp.assumptions:
        comp.assumptions.append(ASYNC_COPIES)
    return AsyncCopy(dst, src, comp.cast(count, C.LONG), rank, size, loads, stores, C.VOID,
                     (node.start_point[0] + 1, node.start_point[1] + 1))
