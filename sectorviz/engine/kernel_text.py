"""The text of a kernel pattern's kernel, as the app's Kernel tab shows it: read as the
file holds it, before any compile (the window shows it while the kernel is being compiled)."""

from __future__ import annotations

from pathlib import Path

from ..model.files import read_text
from ..model.pattern import Pattern
from ..model.python_kernel import python_language


def source_path(pattern: Pattern) -> Path | None:
    """The kernel's `source` file (relative to the pattern's folder, inside its roots), None
    for inline code."""
    spec = pattern.kernel
    assert spec is not None  # a kernel pattern
    return None if "code" in spec else pattern.roots.resolve(spec["source"], "kernel.source")


def kernel_source(pattern: Pattern) -> str:
    """The CUDA text of a kernel pattern: inline `code`, or the `source` file (relative to
    the pattern's folder), read as files.read_text reads (a regular UTF-8 file, capped); for
    a `ptx` file, the source of its kernel that lies in the pattern's root ('' if none); for
    a `triton` or `numba` kernel, its .py file."""
    spec = pattern.kernel
    assert spec is not None  # a kernel pattern
    if "ptx" in spec:
        from .compiled.ptxfile import shown_source
        return shown_source(pattern)
    language = python_language(spec)
    if language is not None:  # a Triton or Numba kernel: its .py, as the Kernel tab shows it
        return read_text(pattern.roots.resolve(spec[language], f"kernel.{language}"),
                         f"kernel.{language}", roots=pattern.roots)
    path = source_path(pattern)
    return spec["code"] if path is None else \
        read_text(path, "kernel.source", roots=pattern.roots)
