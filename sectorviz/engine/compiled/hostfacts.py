"""What the source says that a kernel's PTX does not, read without running any C++ by hand:

- each pointer parameter's pointee type, from the entry's demangled name (entries.py: `void
  k<16, float>(float const*, ns::Cell*)`, the template's types resolved): a scalar or vector
  type as its pattern dtype (host/ctypes.py: `unsigned char` -> uint8, `float4`), any other
  by its name (`ns::Cell`), whose bytes the compiler gives: `sizeof_probe` is a line
  appended to the same source for one more compile, `probed_sizes` reads its PTX;
- the launch's dynamic shared memory bytes: the host code's `<<<grid, block, BYTES>>>`
  launches of the instantiation (host/launches.py), when they all give one constant.
"""

from __future__ import annotations

import re
from pathlib import Path

from ...host.ctypes import pattern_dtype, type_bytes
from ...host.kernels import parsed_text, signatures
from ...host.launches import shared_bytes
from ...model.errors import PatternError
from ...model.files import Roots
from .entries import same_arguments, split_name, top_level_split

SIZEOF = "__sectorviz_sizeof"  # the probe's array of sizes, one unsigned long long a type
_PROBED = re.compile(rf"\.(?P<kind>b8|u64|b64)\s+{SIZEOF}\[(?P<n>\d+)\]"
                     r"(?:\s*=\s*\{(?P<values>[^}]*)\})?")
WORD = 8  # bytes of an unsigned long long


def parameter_types(demangled: str) -> list[str] | None:
    """`void k<16, float>(float const*, ns::Cell*, int)` -> ['float const*', 'ns::Cell*',
    'int']; None for a name without a parameter list (one not demangled)."""
    if not demangled.endswith(")"):
        return None
    depth = 0
    for at in range(len(demangled) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(demangled[at], 0)
        if depth == 0:
            inside = demangled[at + 1:-1].strip()
            return [] if inside in ("", "void") else \
                [" ".join(p.split()) for p in top_level_split(inside)]
    return None


def pointee(parameter_type: str) -> str | None:
    """`float const*` -> 'float', `ns::Cell*` -> 'ns::Cell'; None for a type that is no
    pointer, or a pointer to a pointer or to a type no source line can name."""
    if not parameter_type.endswith("*"):
        return None
    to = " ".join(w for w in parameter_type[:-1].split() if w not in ("const", "volatile"))
    return None if not to or "*" in to or "(" in to or "&" in to else to


def pointee_types(demangled: str, params: list[str]) -> dict[str, str]:
    """Each pointer parameter (by name, `params` in order) -> its pointee type's name, as the
    demangled entry name writes it; empty where the name holds no parameter list."""
    types = parameter_types(demangled)
    if types is None or len(types) != len(params):
        return {}
    return {name: to for name, kind in zip(params, types) if (to := pointee(kind))}


def needs_probe(types: list[str]) -> list[str]:
    """The pointee types that are no scalar or vector (structs, classes), once each, in
    order: those whose bytes the probe asks the compiler."""
    return list(dict.fromkeys(t for t in types if pattern_dtype(t) is None))


def sizeof_probe(types: list[str]) -> str:
    """The line appended to the source so that its PTX holds each type's bytes: `__device__
    unsigned long long __sectorviz_sizeof[] = {sizeof(ns::Cell), ...};`."""
    sizes = ", ".join(f"sizeof({t})" for t in types)
    return f"\n__device__ unsigned long long {SIZEOF}[] = {{{sizes}}};\n"


def probed_sizes(ptx: str, count: int) -> list[int] | None:
    """The `count` sizes of the probe's array as the PTX initializes it: as bytes (`.b8
    __sectorviz_sizeof[16] = {16, 0, 0, 0, 0, 0, 0, 0, 24}`, little-endian words, trailing
    zeros left out) or as words (`.u64 ...[2] = {16, 24}`); None where it holds none."""
    found = _PROBED.search(ptx)
    if found is None or found.group("values") is None:
        return None
    values = [int(v, 0) for v in found.group("values").split(",") if v.strip()]
    if found.group("kind") == "b8":
        raw = bytes(values) + bytes(count * WORD - len(values))
        values = [int.from_bytes(raw[i * WORD:(i + 1) * WORD], "little")
                  for i in range(count)]
    values += [0] * (count - len(values))
    return values[:count] if int(found.group("n")) in (count, count * WORD) else None


def pointees(types: dict[str, str], struct_bytes: dict[str, int],
             arrays: list[str]) -> tuple[tuple[str, str, int], ...]:
    """(parameter, pattern dtype or type name, bytes) of each of `arrays` whose pointee type
    is known, with its bytes: a scalar's or vector's, or a struct's as probed (those the
    probe did not size are left out)."""
    out = []
    for name in arrays:
        kind = types.get(name)
        if kind is None:
            continue
        dtype, size = pattern_dtype(kind), type_bytes(kind) or struct_bytes.get(kind)
        if size:
            out.append((name, dtype or kind, size))
    return tuple(out)


def dynamic_shared_bytes(text: str, path: Path | None, roots: Roots, function: str,
                         targs: str | None) -> int | None:
    """The dynamic shared memory bytes the host code's launches of `function` (the
    instantiation of template arguments `targs`, as the entry's name writes them; None for
    a plain kernel) give, when they all give one constant; None otherwise, or where the
    host code cannot be read here."""
    try:
        unit = parsed_text(text, path, roots)
    except (PatternError, RecursionError):
        return None
    kernel = next((k for k in signatures(unit) if k.name == function), None)
    if kernel is None:
        return None
    found = set()
    for launched, value in shared_bytes(unit, kernel):
        args = split_name(launched)[1]
        if targs is None or (args is not None and same_arguments(args, targs)):
            found.add(value)
    return found.pop() if len(found) == 1 else None
