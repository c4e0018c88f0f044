"""A bare .cu file opened in the app -> a starting pattern for one of its `__global__`
functions, saved beside the .cu (File > Open, a drop, or the command line on a .cu).

The pattern takes the kernel's own parameter names: each pointer parameter an array of
ELEMENTS elements (its element type comes from the pointee), each scalar parameter a param;
a 1-D launch of THREADS threads a block covering ELEMENTS threads. A scalar named like an
element count (n, N, size, count, length) is that count. The user adjusts launch, params and
lengths in the Form tab: the numbers are a start, not read from the host code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..atomic import write_atomic
from ..model import PatternError
from ..model.files import read_text

ELEMENTS = 1 << 20  # elements of each array and threads launched
THREADS = 256  # threads per block
COUNT_NAMES = ("n", "N", "size", "count", "length", "len", "num_elements", "numElements")


@dataclass(frozen=True)
class KernelSignature:
    """A `__global__` function of a .cu: its name and its parameters (name, is a pointer)."""

    name: str
    params: tuple[tuple[str, bool], ...]


def global_functions(path: Path) -> list[KernelSignature]:
    """The `__global__` functions of the .cu at `path`, in file order; PatternError naming
    the file for one that cannot be read or parsed."""
    from ..cuda.preprocess import preprocess  # the CUDA front end loads only for a .cu
    from ..cuda.source import Unit, declared_name, text
    try:
        unit = Unit(preprocess(read_text(path, "kernel.source"), path, path.parent))
    except PatternError as err:
        raise PatternError(err.place, err.message, err.column, str(path)) from None
    found = [f for fs in unit.functions.values() for f in fs if "__global__" in f.qualifiers]
    found.sort(key=lambda f: f.node.start_point)
    return [KernelSignature(f.name, tuple(
        (name, "*" in text(p) or "[" in text(p))
        for p in f.params if (name := declared_name(p.child_by_field_name("declarator")))))
        for f in found]


def starter_pattern(cu: Path, kernel: KernelSignature) -> dict:
    """The pattern document (a dict, as the file holds it) for `kernel` of the .cu `cu`."""
    scalars = [name for name, pointer in kernel.params if not pointer]
    count = next((name for name in scalars if name in COUNT_NAMES), "elements")
    params = {name: ELEMENTS if name == count else 1 for name in scalars}
    params.setdefault(count, ELEMENTS)
    params.setdefault("threads", THREADS)
    return {
        "format": "sectorviz.pattern/1",
        "name": f"{kernel.name} ({cu.name})",
        "notes": f"made from {cu.name}: a 1-D launch of {count} threads and arrays of "
                 f"{count} elements; adjust them in the Form tab",
        "params": params,
        "launch": {"grid": [f"({count} + threads - 1) / threads"], "block": ["threads"]},
        "arrays": {name: {"length": count} for name, pointer in kernel.params if pointer},
        "kernel": {"source": cu.name, "function": kernel.name},
    }


def pattern_path(cu: Path, kernel: KernelSignature) -> Path:
    """Where the starting pattern is saved: beside the .cu, named after it and the kernel."""
    return cu.with_name(f"{cu.stem}-{kernel.name}.sectorviz.json")


def write_starter(cu: Path, kernel: KernelSignature) -> Path:
    """Write the starting pattern beside the .cu (never over an existing file: that one is
    opened instead) and return its path."""
    path = pattern_path(cu, kernel)
    if not path.exists():
        write_atomic(path, json.dumps(starter_pattern(cu, kernel), indent=2) + "\n")
    return path
