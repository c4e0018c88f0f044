"""What a kernel may declare on the GPU its PTX targets, checked before a run allocates
anything: 64 KiB of `__constant__` memory, at most 48 KiB of static `__shared__` variables,
and static plus dynamic shared memory per block up to the architecture's maximum (CUDA C++
Programming Guide, "Technical Specifications per Compute Capability")."""

from __future__ import annotations

import re

from ...model.pattern import MAX_BLOCK_SHARED, MAX_STATIC_SHARED
from .program import Layout

MAX_CONSTANT = 64 * 1024  # bytes of __constant__ memory, every compute capability
GUIDE = 'the CUDA Programming Guide, "Technical Specifications per Compute Capability"'
# compute capability -> KiB of shared memory a block may have (static plus dynamic)
BLOCK_SHARED_KIB = {(7, 0): 96, (7, 2): 96, (7, 5): 64, (8, 0): 163, (8, 6): 99, (8, 7): 163,
                    (8, 9): 99, (9, 0): 227, (10, 0): 227, (10, 3): 227, (11, 0): 227,
                    (12, 0): 99, (12, 1): 99}


def compute_capability(target: str) -> tuple[int, int] | None:
    """A PTX target ("sm_90", "sm_90a", "sm_100f") -> (9, 0); None if it names none."""
    found = re.fullmatch(r"sm_(\d+)(\d)[af]?", target)
    return (int(found.group(1)), int(found.group(2))) if found else None


def block_shared_limit(target: str) -> int:
    """Bytes of shared memory a block may have on `target`: 48 KiB before Volta, the table's
    figure, else (an architecture the table does not list) the most any GPU gives."""
    cc = compute_capability(target)
    if cc is not None and cc < (7, 0):
        return MAX_STATIC_SHARED
    return BLOCK_SHARED_KIB.get(cc, MAX_BLOCK_SHARED // 1024) * 1024 if cc else MAX_BLOCK_SHARED


def static_shared_bytes(layout: Layout) -> int:
    """Bytes of the layout's `__shared__` variables other than the extern (dynamic) array:
    the end of the last one."""
    return max((start + layout.variables[name].size
                for name, (space, start) in layout.where.items()
                if space == "shared" and not layout.variables[name].extern), default=0)


def memory_problem(layout: Layout, target: str, dynamic: int) -> tuple[str, str] | None:
    """(space, why) where the layout's constant or shared memory does not fit `target`
    (`dynamic` bytes of it the launch's extern shared memory), else None."""
    arch = target or "the GPU"
    if layout.const_bytes > MAX_CONSTANT:
        return "constant", (f"the __constant__ variables total {layout.const_bytes:,} bytes; "
                            f"{arch} has {MAX_CONSTANT:,} (64 KiB) of constant memory ({GUIDE})")
    static = static_shared_bytes(layout)
    if static > MAX_STATIC_SHARED:
        return "shared", (f"the __shared__ variables total {static:,} bytes; a block's static "
                          f"shared memory is at most {MAX_STATIC_SHARED:,} (48 KiB) ({GUIDE})")
    most = block_shared_limit(target)
    if layout.shared_bytes > most:
        return "shared", (f"the block's shared memory totals {layout.shared_bytes:,} bytes "
                          f"({static:,} static, {dynamic:,} dynamic); {arch} allows at most "
                          f"{most:,} ({most // 1024} KiB) per block ({GUIDE})")
    return None
