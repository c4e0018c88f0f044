"""Identical loads of one statement -> one load instruction, as nvcc issues them.

The rule (an assumption the report states when it applies): inside one expression statement
or one declaration's initializer, two reads of the same memory lvalue (the same array, type,
memory space and address expression) are one load when the statement has no other effect
that could change what they read or whether they run: no assignment but the outermost, no
++/--, atomic, async copy, inlined function call, warp collective, comma, &&, || or ?:, and
the kernel's file declares nothing `volatile`. Then the second read cannot see another value
(no store runs between them, the outermost assignment's store comes after both) and both run
on the same lanes, so nvcc's common-subexpression elimination issues one load; the first
read in evaluation order is that load and the others read its value. Anything else is left
as written (one load per read), including identical reads in different statements.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Callable, Iterator

import numpy as np

from . import ir, lanes
from .async_copy import AsyncCopy

MERGED_LOADS = ("identical loads in one statement with no other effect (no store but its "
                "own assignment, no call, atomic, collective, &&, || or ?:) are one load "
                "instruction, as nvcc's common-subexpression elimination issues them")
BARRIERS = (ir.Logic, ir.Select, ir.Call, ir.Comma, ir.Assign, ir.Part, ir.PartRead,
            lanes.Atomic, lanes.Shuffle, lanes.Vote, lanes.SegmentReduce, lanes.Match,
            lanes.GroupShuffle, lanes.GroupReduce, lanes.Opaque, AsyncCopy)
COSMETIC = {"pos", "name"}  # fields that do not change what a node computes (but Builtin's)


class _Barrier(Exception):
    """The statement has an effect that keeps its identical loads apart."""


def merge_loads(e: ir.Expr, slot: Callable[[], int]) -> list[ir.Load]:
    """Rewrites `e` in place: each group of identical loads becomes its first load, kept in
    a new slot, and reads of that slot. Returns the loads it dropped (none when `e` does
    not qualify)."""
    order: list[tuple[object, object, ir.Load]] = []
    try:
        _collect(e, order, top=True)
    except _Barrier:
        return []
    groups: dict[tuple, list[tuple[object, object, ir.Load]]] = {}
    for holder, where, load in order:
        groups.setdefault(_key(load), []).append((holder, where, load))
    dropped = []
    for found in groups.values():
        if len(found) < 2:
            continue
        kept = slot()
        (holder, where, first), rest = found[0], found[1:]
        _put(holder, where, ir.Assign(kept, first, first.type, first.pos))
        for holder, where, load in rest:
            _put(holder, where, ir.Read(kept, load.type, load.pos, "(the same load)"))
            dropped.append(load)
    return dropped


def _collect(x, order: list, top: bool = False) -> None:
    """Memory loads under `x` in evaluation order (a load after its address), with where
    each hangs; _Barrier if `x` holds an effect that keeps loads apart."""
    if isinstance(x, BARRIERS) and not (top and isinstance(x, ir.Assign)):
        raise _Barrier
    if isinstance(x, ir.Assign):
        if isinstance(x.target, ir.Memory | lanes.Local):
            _descend(x.target, "addr", order)
        elif not isinstance(x.target, int):
            raise _Barrier
        _descend(x, "value", order)
        return
    if isinstance(x, ir.Memory | lanes.Local):
        _descend(x, "addr", order)
        return
    for f in fields(x):
        value = getattr(x, f.name)
        if isinstance(value, list):
            for i in range(len(value)):
                _child(value, i, order)
        elif isinstance(value, ir.Expr | ir.Memory | lanes.Local):
            _descend(x, f.name, order)
        elif isinstance(value, tuple) and _holds_nodes(value):
            raise _Barrier  # parts the rewrite could not replace
    if isinstance(x, ir.Load) and type(x.mem) is ir.Memory:
        order.append((None, None, x))


def _holds_nodes(value: tuple) -> bool:
    return any(_holds_nodes(v) if isinstance(v, tuple) else
               isinstance(v, ir.Expr | ir.Memory | lanes.Local) for v in value)


def _descend(holder, name: str, order: list) -> None:
    child = getattr(holder, name)
    start = len(order)
    _collect(child, order)
    _place(order, start, holder, name, child)


def _child(holder: list, i: int, order: list) -> None:
    start = len(order)
    _collect(holder[i], order)
    _place(order, start, holder, i, holder[i])


def _place(order: list, start: int, holder, where, child) -> None:
    """Records where `child` hangs, if it is the load just collected."""
    if len(order) > start and order[-1][2] is child and order[-1][0] is None:
        order[-1] = (holder, where, child)


def _put(holder, where, node) -> None:
    if isinstance(holder, list):
        holder[where] = node
    else:
        setattr(holder, where, node)


def _key(x):
    """What a node computes, without its places: equal keys, equal values (no assignment
    runs between them)."""
    if isinstance(x, ir.Memory):
        return ("memory", _key(x.addr), x.type, x.space, x.root)
    if isinstance(x, list | tuple):
        return tuple(_key(c) for c in x)
    if isinstance(x, np.generic):
        return (x.dtype.str, x.item())
    if hasattr(x, "__dataclass_fields__") and not isinstance(x, ir.Site):
        skip = COSMETIC - {"name"} if isinstance(x, ir.Builtin) else COSMETIC
        return (type(x).__name__,) + tuple(_key(getattr(x, f.name)) for f in fields(x)
                                           if f.name not in skip)
    return x


def sites_in(root) -> set[int]:
    """The ids of the sites the IR under `root` loads or stores through."""
    return {id(site) for x in ir.walk(root, once=True) for name in x.__dataclass_fields__
            for site in _sites(getattr(x, name))}


def _sites(value) -> Iterator[ir.Site]:
    """The Sites in a node's field: a Site, or those in a struct copy's (byte offset, Site)
    pairs and other lists and tuples."""
    if isinstance(value, ir.Site):
        yield value
    elif isinstance(value, (list, tuple)):
        for part in value:
            yield from _sites(part)
