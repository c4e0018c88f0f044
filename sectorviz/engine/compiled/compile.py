"""A kernel pattern -> the PTX the compiler emits for its kernel (`compile_kernel`).

The compile is `-O3 -lineinfo -arch=ARCH` (`-G -arch=ARCH` for the "as written" reading)
plus the pattern's whitelisted flags (flags.py:
macros reach the compiler in a generated header, never on its command line), device code
only, by nvcc (nvcc.py) or NVRTC (nvrtc.py), of the whole file as written: what its host code
needs and is not installed here is declared by stand-in headers, and what NVRTC names a host
function is left out (hostcode.py). What a compile may read is
includes.py's policy, the same for both compilers: the pattern's root, an --include-dir and
the compiler's own headers, nothing else, and nothing outside can change an answer. Every
run is bounded, in a private folder, with no shell and a clean environment (bounded.py);
errors are one line naming the .cu (or included) file, its line and column (diagnostics.py).
Results are cached by content and by every file and lookup they depended on (ptxcache.py).
"""

from __future__ import annotations

import os
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...model.errors import PatternError, printable
from ...model.files import Roots, lies_in, read_text
from ...model.pattern import Pattern
from ..ptx.kernel import CompiledPtx
from . import hostfacts, ptxcache
from .bounded import private_folder
from .compiler import INSTALL, NO_COMPILER, Toolchain, find_compiler
from .entries import Entry, parameter_names, pick_entry, ptx_entries
from .flags import DEFAULT_ARCH, CompileFlags, check_arch, fixed_flags, include_folder, user_flags
from .hostcode import STANDINS
from .includes import IncludePolicy, Scan
from .sass import code_from_json, code_json, machine_code

MAX_PTX_BYTES = 2**30
INLINE_NAME = "kernel.code"  # how errors and the PTX's .file table name inline `code`
UNIT_NAME = "unit.cu"  # the file of sectorviz's own that a compile compiles, if any
FLAGS_HEADER = "flags.h"  # the generated header of the pattern's macros
FUNCTION = re.compile(r"\s*(?:void\s+)?(?P<name>[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*"
                       r"(?:<(?P<args>[\w\s,:<>*&().+\-]*)>)?\s*(?:\([^;{}#\"'\\/\n]*\))?\s*")
_UNSAFE_PATH = re.compile(r'["\x00-\x1f\x7f]')  # what an #include line cannot quote


class CompileFailed(PatternError):
    """The compiler exited with an error (the one-line message is its first)."""


@dataclass(frozen=True, kw_only=True)
class CompiledPTX(CompiledPtx):
    """A kernel compiled to PTX: what the PTX engine runs (CompiledPtx: the text, the mangled
    entry, the parameter names, the compiler's description, the files read, the main source
    first as the PTX's `.file` table names it, and their texts), and how it was compiled."""

    name: str  # demangled, as Nsight Compute prints it
    arch: str  # "sm_90"
    flags: tuple[str, ...]  # every flag the compile was given
    host_code_left_out: bool  # whether host functions NVRTC named were left out (hostcode.py)

    @property
    def source(self) -> str:
        """The main source as the PTX's `.file` table names it."""
        return self.files[0]


@dataclass(frozen=True)
class MainSource:
    """The kernel's source: its text, where it lies (None for inline code), its PTX name."""

    text: str
    path: Path | None
    name: str

    @property
    def folder(self) -> Path | None:
        return None if self.path is None else self.path.parent


def compile_kernel(pattern: Pattern, arch: str | None = None,
                   as_written: bool = False) -> CompiledPTX:
    """The PTX of a kernel pattern's kernel for `arch` (else the pattern's `kernel.arch`,
    else sm_90), at -O3 -lineinfo or, `as_written`, at -G (the debug compile), from the cache
    when its inputs are unchanged; PatternError in one line when there is no compiler, a
    flag or a read is refused, or the compile fails."""
    toolchain = find_compiler()
    if toolchain is None:
        raise PatternError("kernel", f"{NO_COMPILER} (nvcc on PATH, under CUDA_HOME or "
                                     f"CUDA_PATH, or NVRTC's wheels): {INSTALL}")
    spec = pattern.kernel
    arch = check_arch(arch, "--arch") if arch else check_arch(spec.get("arch", DEFAULT_ARCH),
                                                              "kernel.arch")
    roots = pattern.roots
    flags = fixed_flags(arch, as_written) + \
        user_flags(spec.get("flags"), pattern.base_dir, roots) + \
        CompileFlags(include_dirs=tuple(include_folder(folder, "--include-dir")
                                        for folder in roots.folders[1:]))  # searched last
    function = checked_function(spec["function"])
    source = main_source(pattern, roots)
    key = ptxcache.request_key({"compiler": toolchain.path, "version": toolchain.version,
                                "flags": flags.described, "function": function,
                                "source": source.text,
                                "path": str(source.path), "base": pattern.base_dir,
                                "root": str(roots.folders[0])})  # what the policy allows
    entry = ptxcache.load(key)
    if entry is None:
        entry = _with_sass(_route(toolchain, source, function, flags, pattern).run(), arch,
                           toolchain, flags)
        ptxcache.store(key, entry)
    elif entry.get("sass") is None:  # no SASS when cached: made once the tools are here
        entry = _with_sass(entry, arch, toolchain, flags)
        if entry["sass"] is not None:
            ptxcache.store(key, entry)
    includes = [f for f in entry["files"] if f != str(source.path)]
    pointees, dynamic = _host_facts(pattern, source, entry, key,
                                    lambda probe: _route(toolchain, source, function, flags,
                                                         pattern, probe).run())
    return CompiledPTX(entry["ptx"], entry["entry"], tuple(entry["params"]),
                       toolchain.compiling_for(arch, as_written), (source.name, *includes),
                       (source.text, *(read_text(f, "include") for f in includes)),
                       pointees=pointees, dynamic_shared_bytes=dynamic,
                       name=entry["name"], arch=arch, flags=flags.described,
                       host_code_left_out=entry["host_code_left_out"],
                       sass=code_from_json(entry["sass"]), as_written=as_written)


def _route(toolchain: Toolchain, source: MainSource, function: str, flags: CompileFlags,
           pattern: Pattern, appendix: str = "") -> Compile:
    """The compile of `source` (and `appendix` after it) by the toolchain's route."""
    if toolchain.kind == "nvcc":
        from .nvcc import NvccCompile as Route
    else:
        from .nvrtc import NvrtcCompile as Route
    return Route(toolchain, source, function, flags, pattern.roots, Path(pattern.base_dir),
                 appendix)


def _with_sass(entry: dict, arch: str, toolchain: Toolchain, flags: CompileFlags) -> dict:
    """A cache entry with its "sass": the SASS memory instructions ptxas makes of its PTX
    (sass.py), or None where they cannot be made here."""
    code = machine_code(entry["ptx"], entry["entry"], arch, toolchain, flags.options)
    return {**entry, "sass": code_json(code)}


def _host_facts(pattern: Pattern, source: MainSource, entry: dict, key: str,
                probe: Callable[[str], dict]
                ) -> tuple[tuple[tuple[str, str, int], ...], int | None]:
    """(pointer parameter, pattern dtype or type name, bytes) for the pattern's arrays
    without a dtype, from the entry's demangled name, and the host launches' dynamic shared
    bytes where the pattern does not give them (hostfacts.py); a struct's bytes come from
    `probe` (a compile of the source with hostfacts.sizeof_probe appended). Both are worked
    out once and kept in the cache entry ("struct_bytes", "launch_shared_bytes")."""
    untyped = [spec.name for spec in pattern.arrays if spec.dtype is None]
    types = hostfacts.pointee_types(entry["name"], entry["params"])
    sizes = dict(entry.get("struct_bytes", {}))
    unsized = [t for t in hostfacts.needs_probe([types[a] for a in untyped if a in types])
               if t not in sizes]
    asked = "dynamic_shared_bytes" not in pattern.kernel
    launched = asked and "launch_shared_bytes" not in entry
    if unsized:
        sizes |= _probed(unsized, probe)
        entry["struct_bytes"] = sizes
    if launched:
        name, targs = Entry(entry["entry"], entry["name"], len(entry["params"])).split
        entry["launch_shared_bytes"] = hostfacts.dynamic_shared_bytes(
            source.text, source.path, pattern.roots, name, targs)
    if unsized or launched:
        ptxcache.store(key, entry)
    return hostfacts.pointees(types, sizes, untyped), \
        entry["launch_shared_bytes"] if asked else None


def _probed(types: list[str], probe: Callable[[str], dict]) -> dict[str, int]:
    """Each type -> its bytes, as the compiler lays it out (0 where the probe's compile
    fails or its PTX holds no sizes: then it is not asked again)."""
    try:
        ptx = probe(hostfacts.sizeof_probe(types))["ptx"]
    except PatternError:
        return dict.fromkeys(types, 0)
    sizes = hostfacts.probed_sizes(ptx, len(types))
    return dict(zip(types, sizes or [0] * len(types)))


def checked_function(spec: str) -> str:
    """The pattern's `kernel.function`, if it reads as a function or instantiation name."""
    if not spec.isprintable() or not FUNCTION.fullmatch(spec):
        raise PatternError("kernel.function", f"cannot read the function name "
                                              f"{printable(repr(spec))}")
    return spec


def main_source(pattern: Pattern, roots: Roots) -> MainSource:
    """The kernel's source text: inline `code`, or the `source` file, which must lie in the
    pattern's root (refused naming the path, reading nothing, when it does not)."""
    spec = pattern.kernel
    if "code" in spec:
        return MainSource(spec["code"], None, INLINE_NAME)
    path = Path(pattern.base_dir) / spec["source"]
    if not roots.allows(path):
        raise roots.refusal(printable(repr(spec["source"])), "kernel.source")
    real = Path(os.path.realpath(path))
    if _UNSAFE_PATH.search(str(real)):
        raise PatternError("kernel.source", f"{printable(repr(str(real)))}: the path holds a "
                                            "quote or a control character; rename the file")
    return MainSource(read_text(real, "kernel.source"), real, str(real))


class Compile(ABC):
    """One compile of the file as written (and `appendix` after it) in a temporary folder, by
    the compiler's route (`route`, nvcc.py, nvrtc.py) -> a cache entry (dict) through
    `entry`."""

    def __init__(self, toolchain: Toolchain, source: MainSource, function: str,
                 flags: CompileFlags, roots: Roots, base_dir: Path, appendix: str = ""):
        self.toolchain, self.source, self.function = toolchain, source, function
        self.flags, self.roots, self.base_dir = flags, roots, base_dir
        self.appendix = appendix  # C++ compiled after the main source (hostfacts.py's probe)
        self.header_folders: tuple[str, ...] = (str(STANDINS),)  # the compiler's own headers

    def run(self) -> dict:
        with private_folder("sectorviz-ptx-") as tmp:
            self.tmp = tmp
            return self.route(self.source.text)

    def flags_header(self) -> Path | None:
        """The generated header of the pattern's macros, written in the private folder
        (None when there are none)."""
        if not self.flags.macros:
            return None
        header = self.tmp / FLAGS_HEADER
        header.write_text(self.flags.header, encoding="utf-8")
        return header

    def include_policy(self, text: str, search: list[Path],
                       macro_includes: bool) -> IncludePolicy:
        """includes.py's checks of `text` (the main source as compiled) and the root's files
        it includes, done before the compiler runs, with `search` the include folders the
        compiler is given that lie in the roots -> the policy, to check more files."""
        policy = IncludePolicy(self.roots, search, [Path(d) for d in self.header_folders],
                               macro_includes)
        if self.source.path is not None:
            policy.scan.files.append(str(self.source.path))
        folder = self.source.folder or self.base_dir
        policy.check_source(self.flags.header, folder, "kernel.flags")  # -D values, too
        policy.check_source(text, folder, self.place_of(self.source.name) or INLINE_NAME)
        return policy

    def search_folders(self) -> list[Path]:
        """The include folders of the roots a compile searches: the -I folders, then, for
        inline code (compiled from the private folder), the pattern's folder."""
        folders = [Path(d) for d in self.flags.include_dirs]
        if self.source.path is None:
            folders.append(self.source.folder or self.base_dir)
        return folders

    @abstractmethod
    def route(self, text: str) -> dict:
        """Compile `text`, the main source -> the cache entry."""

    def entry(self, ptx: str, text: str, scan: Scan, left_out: bool,
              lowered: str | None = None, hint: str = "") -> dict:
        """The cache entry of a compile of `text` (the main source as compiled) that read
        the root's files and made the lookups of `scan`, and gave `ptx`; `lowered`: the
        entry's mangled name, when the compiler said which it is; `hint` follows a "no such
        function" error."""
        main = [] if self.source.path is None else [str(self.source.path)]
        files = main + [f for f in scan.files if f not in main]
        # a relative `#line` or program name (inline code's) comes out joined to the folder
        # the compiler ran in
        ptx = ptx.replace(f'"{(self.tmp / INLINE_NAME).as_posix()}"', f'"{INLINE_NAME}"')
        if self.source.path is None:
            ptx = ptx.replace(f'"{(self.base_dir / INLINE_NAME).as_posix()}"',
                              f'"{INLINE_NAME}"')
        entries = ptx_entries(ptx)
        found = [e for e in entries if e.mangled == lowered]
        entry = found[0] if found else pick_entry(entries, self.function, hint)
        texts = [text] + [read_text(f, "include") for f in files
                          if f != str(self.source.path)]
        params = parameter_names(texts, entry)
        if params is None:
            raise PatternError("kernel.function", f"cannot find the parameters of "
                                                  f"{entry.shown!r} in its source")
        return {"ptx": ptx, "entry": entry.mangled, "name": entry.demangled,
                "params": list(params), "files": {f: ptxcache.file_digest(f) for f in files},
                "lookups": dict(scan.lookups), "host_code_left_out": left_out}

    def line_text(self, file: str, line: int) -> str | None:
        """Line `line` of a file the compiler names (the main source's text for its name)."""
        if file == self.source.name:
            text = self.source.text
        else:
            try:
                text = read_text(self.tmp / file, "kernel")
            except PatternError:
                return None
        lines = text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else None

    def place_of(self, file: str) -> str | None:
        """A file the compiler names -> how an error names it; None outside the root."""
        if file == self.source.name:
            return Path(file).name if self.source.path is not None else file
        real = os.path.realpath(self.tmp / file)
        if real == str(self.tmp / UNIT_NAME):
            return "kernel.function"
        if real == str(self.tmp / FLAGS_HEADER):
            return "kernel.flags"
        if self.roots.allows(real):
            return os.path.relpath(real, self.base_dir)
        if self.compiler_header(real):
            return real
        return None

    def compiler_header(self, real: str) -> bool:
        return any(lies_in(real, folder) for folder in self.header_folders)
