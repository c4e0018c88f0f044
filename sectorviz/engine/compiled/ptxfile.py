"""A pattern's own PTX -> what the PTX engine runs (`ptx_kernel`), with no compiler.

`"kernel": {"ptx": "k.ptx", "function": "vecAdd"}` names PTX compiled elsewhere (`nvcc -ptx
-lineinfo`, Triton, Numba); the function is matched against its `.entry` names as a compiled
kernel's is (entries.py: mangled or demangled). The .ptx file is read like any input: inside
the pattern's root, a regular UTF-8 file, capped (files.read_text). Its `.file` lines name the
sources: each one inside the root is read the same way, for the source lines the engine shows
and the kernel's parameter names; one outside is named, never read. The parameter names are
those of the source defining the entry where one is read, else the PTX's own
(`_Z6vecAddPKfS0_Pfi_param_0`). Where a compiler's ptxas and nvdisasm are found, the SASS is
checked as a compiled kernel's is (sass.py); nothing else needs a compiler.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...model.errors import PatternError
from ...model.files import Roots, read_text
from ...model.pattern import Pattern
from ..ptx.kernel import CompiledPtx
from ..ptx.parse import Module, PtxError, parse_module
from ..ptx.sass_code import SassCode
from .compile import checked_function
from .compiler import find_compiler
from .entries import Entry, parameter_names, pick_entry, ptx_entries
from .sass import target_machine_code

PLACE = "kernel.ptx"


def ptx_compiler(pattern: Pattern) -> str:
    """How a PTX pattern's reading names its compiler: `the compiler of k.ptx`."""
    assert pattern.kernel is not None
    return f"the compiler of {Path(pattern.kernel['ptx']).name}"


@dataclass(frozen=True)
class PtxFile:
    """A pattern's PTX file read: its text, parsed, the entry the pattern names, and the
    sources inside the root (`.file` name -> text), the one defining the entry first."""

    text: str
    module: Module
    entry: Entry
    sources: dict[str, str]
    params: tuple[str, ...]


def read_ptx_file(pattern: Pattern) -> PtxFile:
    """The PTX file a pattern names, its entry, parameter names and readable sources;
    PatternError in one line for a file outside the root, unreadable, or without the
    function."""
    assert pattern.kernel is not None
    roots = pattern.roots
    path = roots.resolve(pattern.kernel["ptx"], PLACE)
    text = read_text(path, PLACE, roots=roots)
    module = _module(text, path)
    entry = pick_entry(ptx_entries(text), checked_function(pattern.kernel["function"]))
    sources = _readable_sources(module, path.parent, roots)
    main, params = _defining_source(sources, entry)
    first = {name: sources[name] for name in sorted(sources, key=lambda name: name != main)}
    return PtxFile(text, module, entry, first, params or _ptx_parameter_names(module, entry))


def ptx_kernel(pattern: Pattern) -> CompiledPtx:
    """A PTX pattern -> what the PTX engine runs (no other file than those read_ptx_file
    reads is ever read for it), with the SASS check where ptxas is found."""
    ptx = read_ptx_file(pattern)
    return CompiledPtx(ptx.text, ptx.entry.mangled, ptx.params, ptx_compiler(pattern),
                       tuple(ptx.sources), tuple(ptx.sources.values()),
                       sass=_sass(ptx.text, ptx.entry.mangled, ptx.module), others_read=False)


def shown_source(pattern: Pattern) -> str:
    """The text of the source defining a PTX pattern's kernel ('' where none is readable)."""
    return next(iter(read_ptx_file(pattern).sources.values()), "")


def _module(text: str, path: Path) -> Module:
    """The PTX parsed; an error names the .ptx file and its line."""
    try:
        return parse_module(text)
    except PtxError as err:
        raise PatternError(err.place, err.message, file=str(path)) from None


def _sass(text: str, entry: str, module: Module) -> SassCode | None:
    """The SASS memory instructions an assembler makes of the entry (sass.py: ptxas beside a
    found nvcc, else nvJitLink), for the PTX's `.target` (else sm_90); else None."""
    return target_machine_code(text, entry, module.target, find_compiler())


def _ptx_parameter_names(module: Module, entry: Entry) -> tuple[str, ...]:
    """The entry's parameter names as the PTX declares them."""
    if entry.mangled not in module.entries:  # a prototype: no body to run
        raise PatternError("kernel.function", f"the PTX declares {entry.shown!r} without "
                                              "its body")
    return tuple(p.name for p in module.entries[entry.mangled].params)


def _readable_sources(module: Module, folder: Path, roots: Roots) -> dict[str, str]:
    """The `.file` names (as the PTX writes them) of sources inside the roots that read as
    text -> their texts; a relative name starts at the .ptx file's folder. A name outside
    is never opened."""
    found = {}
    for name in module.files.values():
        path = folder / name
        if name in found or not roots.allows(path):
            continue
        try:
            found[name] = read_text(path, PLACE, roots=roots)
        except PatternError:  # gone since the PTX was made, or not text: named, not shown
            continue
    return found


def _defining_source(sources: dict[str, str], entry: Entry
                     ) -> tuple[str | None, tuple[str, ...] | None]:
    """(the source defining the entry's `__global__` function, its parameter names), else
    (the first source, None); (None, None) when there is none."""
    for name, text in sources.items():
        try:
            params = parameter_names([text], entry)
        except ImportError:  # no tree-sitter: the PTX's own names
            break
        if params is not None:
            return name, params
    return next(iter(sources), None), None
