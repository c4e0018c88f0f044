"""What a pattern's front end lists, as the views label it: (pattern) -> values.Listing, an
immutable value the model computes once beside the analysis and keeps in the one cache
(memo.MEMO), valid while the files its kernel read are unchanged."""

from __future__ import annotations

from types import MappingProxyType

from .expr import plain_names_in, subscripts_in
from .frontend import FrontEnd, counted_reading, kernel_for, read_as, reading_of
from .kernel import Kernel
from .memo import MEMO
from .pattern import Pattern
from .values import Listing


def listing_of(pattern: Pattern) -> Listing:
    """The Listing of `pattern` (its kernel resolved by kernel_for), cached while the files
    that kernel read are unchanged."""
    return MEMO.get("listing", read_as(pattern), lambda: _listing(pattern))


def _listing(pattern: Pattern) -> Listing:
    kernel = kernel_for(pattern)
    reading = reading_of(pattern)
    return Listing(
        pattern.name, pattern.sector_bytes, kernel.warps,
        kernel.blocks * kernel.threads_per_block, tuple(kernel.instructions),
        tuple(kernel.shared_instructions), tuple(kernel.constant_instructions),
        tuple(kernel.local_instructions), MappingProxyType(dict(kernel.arrays)),
        None if reading is None else counted_reading(reading, kernel).words,
        _gathers(pattern, kernel))


def _gathers(pattern: Pattern, kernel: FrontEnd) -> frozenset[tuple[str, int]]:
    """(space, index) of the accesses of a pattern file whose index reads an array's values,
    through the lets it reads; none for CUDA kernels (their loads are not traced)."""
    if not isinstance(kernel, Kernel):
        return frozenset()
    lets = pattern.let_trees
    found = set()
    for access, place in zip(pattern.accesses, kernel.spaces):
        read = (access.index,) if access.index is not None else access.at
        assert read is not None  # an access gives its index or its (row, col)
        todo = [e.tree for e in read]
        seen: set[str] = set()
        while todo:
            tree = todo.pop()
            if subscripts_in(tree):
                found.add(place)
                break
            for name in plain_names_in(tree):  # (not `keys() - seen`: a copy per let)
                if name in lets and name not in seen:
                    seen.add(name)
                    todo.append(lets[name])
    return frozenset(found)
