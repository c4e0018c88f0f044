"""A bare .cu file opened in the app -> a starting pattern for one of its `__global__`
functions, saved beside the .cu (File > Open, a drop, or the command line on a .cu).

The pattern takes the kernel's own parameter names: each pointer parameter an array, each
scalar parameter a param. Where the host code launches the kernel (`k<<<grid, block>>>(...)`)
the launch, the integer constants it uses (`const int n = 1 << 20;`, `#define TILE 32`) and
each array's length (its `cudaMalloc(&p, count * sizeof(T))`) are taken from there; else, or
when that pattern does not check, a 1-D launch of THREADS threads a block covering ELEMENTS
threads, arrays of ELEMENTS elements (a scalar named like an element count, n, N, size, count,
length, is that count). The user adjusts them in the Form tab.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from ..atomic import write_atomic
from ..model import PatternError, pattern_from_dict
from ..model.files import pattern_roots, read_text

ELEMENTS = 1 << 20  # elements of each array and threads launched
THREADS = 256  # threads per block
COUNT_NAMES = ("n", "N", "size", "count", "length", "len", "num_elements", "numElements")


@dataclass(frozen=True)
class KernelSignature:
    """A `__global__` function of a .cu: its name and its parameters (name, is a pointer)."""

    name: str
    params: tuple[tuple[str, bool], ...]


def parsed(path: Path, include_dirs: tuple[str, ...] = ()):
    """The .cu at `path` parsed (cuda.source.Unit), its includes read inside its folder's
    roots and `include_dirs`; PatternError naming the file."""
    from ..cuda.preprocess import preprocess  # the CUDA front end loads only for a .cu
    from ..cuda.source import Unit
    try:
        return Unit(preprocess(read_text(path, "kernel.source"), path,
                               pattern_roots(path.parent, include_dirs)))
    except PatternError as err:
        raise PatternError(err.place, err.message, err.column, str(path)) from None


def global_functions(path: Path, include_dirs: tuple[str, ...] = ()) -> list[KernelSignature]:
    """The `__global__` functions of the .cu at `path` (its includes read as `parsed` reads
    them), in file order; PatternError naming the file for one that cannot be read or
    parsed."""
    from ..cuda.source import declared_name, text
    unit = parsed(path, include_dirs)
    found = [f for fs in unit.functions.values() for f in fs if "__global__" in f.qualifiers]
    found.sort(key=lambda f: f.node.start_point)
    return [KernelSignature(f.name, tuple(
        (name, "*" in text(p) or "[" in text(p))
        for p in f.params if (name := declared_name(p.child_by_field_name("declarator")))))
        for f in found]


INT_LITERAL = re.compile(r"\(?\s*(\d+)\s*(?:<<\s*(\d+))?\s*\)?[uUlL]*")
SIZEOF = re.compile(r"\s*\*\s*sizeof\s*\([^()]*\)\s*$|^\s*sizeof\s*\([^()]*\)\s*\*\s*")


def _integer(words: str) -> int | None:
    """'1024', '1 << 20', '(256)' -> the integer; anything else None (nothing is run)."""
    m = INT_LITERAL.fullmatch(words.strip())
    if m is None:
        return None
    return int(m.group(1)) << int(m.group(2) or 0)


def _calls(node, name: str):
    """The call_expression nodes under `node` whose function is `name`."""
    from ..cuda.source import text
    stack = [node]
    while stack:
        n = stack.pop()
        fn = n.child_by_field_name("function") if n.type == "call_expression" else None
        if fn is not None and text(fn).split("<")[0].split("::")[-1] == name:
            yield n
        stack.extend(n.named_children)


def host_pattern(cu: Path, kernel: KernelSignature,
                 include_dirs: tuple[str, ...] = ()) -> dict | None:
    """The pattern of `kernel`'s first launch in the host code of `cu` (launch, integer
    constants, array lengths from cudaMalloc), or None without a launch."""
    from ..cuda.source import declared_name, text
    unit = parsed(cu, include_dirs)
    launch = next((x for x in unit.launches if x.name == kernel.name and len(x.config) >= 2),
                  None)
    if launch is None:
        return None
    host = launch.host
    params = {name: v for name, m in unit.macros.items()
              if m.params is None and (v := _integer(text(m.value))) is not None}
    dims: dict[str, list[str]] = {}
    for decl in (n for n in _walk(host) if n.type == "declaration"):
        kind = text(decl.child_by_field_name("type"))
        for d in decl.children_by_field_name("declarator"):
            name = declared_name(d)
            value = d.child_by_field_name("value") or d.child_by_field_name("parameters") \
                or d.child_by_field_name("arguments")
            if name is None or value is None:
                continue
            if kind == "dim3":
                dims[name] = [text(a) for a in value.named_children]
            elif (v := _integer(text(value))) is not None:
                params[name] = v
    grid, block = (dims.get(text(c), [text(c)]) for c in launch.config[:2])
    call = next(c for c in _calls(host, kernel.name))
    args = [text(a) for a in call.child_by_field_name("arguments").named_children]
    sizes = {}
    for malloc in _calls(host, "cudaMalloc"):
        target, size = (text(a) for a in malloc.child_by_field_name("arguments").named_children[:2])
        sizes[target.split("&")[-1].strip(" )")] = SIZEOF.sub("", size)
    doc = starter_pattern(cu, kernel)
    fallback = doc["arrays"][next(iter(doc["arrays"]))]["length"] if doc["arrays"] else ""
    doc["launch"] = {"grid": grid, "block": block}
    doc["arrays"] = {name: {"length": sizes.get(arg, fallback)}
                     for (name, pointer), arg in zip(kernel.params, args) if pointer}
    used = set(re.findall(r"[A-Za-z_]\w*", " ".join(
        grid + block + [a["length"] for a in doc["arrays"].values()])))
    scalars = {name for name, pointer in kernel.params if not pointer}
    doc["params"] = {**{k: v for k, v in doc["params"].items() if k in scalars},
                     **{k: v for k, v in params.items() if k in used | scalars}}
    doc["notes"] = f"made from {cu.name}: the launch, constants and array sizes of its host code"
    return doc


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.named_children)


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


def write_starter(cu: Path, kernel: KernelSignature, include_dirs: tuple[str, ...] = ()) -> Path:
    """Write the starting pattern beside the .cu (never over an existing file: that one is
    opened instead) and return its path: the host code's launch where it has one that
    checks, else the 1-D default."""
    path = pattern_path(cu, kernel)
    if not path.exists():
        doc = _first_that_checks(cu, kernel, include_dirs)
        write_atomic(path, json.dumps(doc, indent=2) + "\n")
    return path


def _first_that_checks(cu: Path, kernel: KernelSignature, include_dirs: tuple[str, ...]) -> dict:
    from .document import checked
    host = host_pattern(cu, kernel, include_dirs)
    if host is not None:
        try:
            checked(pattern_from_dict(host, cu.parent, include_dirs))
            return host
        except PatternError:
            pass  # the host code's numbers do not make a pattern: the default does
    return starter_pattern(cu, kernel)
