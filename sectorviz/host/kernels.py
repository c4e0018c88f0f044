"""A .cu parsed by the CUDA front end (its includes read inside its roots: model/files.py)
and its `__global__` functions' signatures."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model import PatternError
from ..model.files import Roots, pattern_roots, read_text


@dataclass(frozen=True)
class KernelSignature:
    """A `__global__` function of a .cu: its name, its parameters (name, is a pointer), each
    parameter's type as written without pointers (`float`, `T`) and the names of its
    template parameters (none for a plain kernel)."""

    name: str
    params: tuple[tuple[str, bool], ...]
    types: tuple[str, ...] = ()
    template: tuple[str, ...] = ()


def parsed(path: Path, include_dirs: tuple[str, ...] = ()) -> Any:
    """The .cu at `path` parsed (syntax.Unit), its includes read inside its folder's
    roots and `include_dirs`; PatternError naming the file."""
    return parsed_text(read_text(path, "kernel.source"), path,
                       pattern_roots(path.parent, include_dirs))


def parsed_text(text: str, path: Path | None, roots: Roots) -> Any:
    """A .cu's text (at `path`, None for inline code) parsed (syntax.Unit), its includes
    read inside `roots`; PatternError naming the file."""
    from .preprocess import preprocess  # tree-sitter loads only for a .cu
    from .syntax import Unit
    try:
        return Unit(preprocess(text, path, roots))
    except PatternError as err:
        raise PatternError(err.place, err.message, err.column,
                           None if path is None else str(path)) from None


def global_functions(path: Path, include_dirs: tuple[str, ...] = ()) -> list[KernelSignature]:
    """The `__global__` functions of the .cu at `path` (its includes read as `parsed` reads
    them), in file order; PatternError naming the file for one that cannot be read or
    parsed."""
    return signatures(parsed(path, include_dirs))


def signatures(unit: Any) -> list[KernelSignature]:
    """The `__global__` functions of a parsed unit, in file order."""
    found = [f for fs in unit.functions.values() for f in fs if "__global__" in f.qualifiers]
    found.sort(key=lambda f: f.node.start_point)
    return [_signature(f) for f in found]


def _signature(function: Any) -> KernelSignature:
    from .syntax import declared_name, text
    params, types = [], []
    for p in function.params:
        name = declared_name(p.child_by_field_name("declarator"))
        if name:
            params.append((name, "*" in text(p) or "[" in text(p)))
            kind = p.child_by_field_name("type")
            types.append("" if kind is None else text(kind))
    return KernelSignature(function.name, tuple(params), tuple(types),
                           template_parameters(function.template))


def template_parameters(parameters: Any) -> tuple[str, ...]:
    """The names of a template_parameter_list's parameters, types and values alike."""
    from .syntax import declared_name, text
    if parameters is None:
        return ()
    names = []
    for p in parameters.named_children:
        node = p.child_by_field_name("name") or p.child_by_field_name("declarator") or next(
            (c for c in p.named_children if c.type == "type_identifier"), None)
        names.append("" if node is None else declared_name(node) or text(node))
    return tuple(names)
