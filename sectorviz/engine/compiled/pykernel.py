"""A kernel written in Python (Triton, Numba) -> the PTX its compiler emits, run by the same
PTX engine as CUDA's: the file read inside the pattern's root (never run: pysource.py), the
compile in a bounded child (pykernel_child.py, under bounded.py's run_bounded: time, memory,
a private folder, a fixed environment), the PTX kept in the PTX cache by the content of
what was asked (ptxcache.py), with Triton's own cubin of it and the SASS read off that.

The PTX's `.file` names the generated module in the private folder; it is renamed to the
kernel's own file, whose lines are the generated module's. Triton's inline assembly
(`// begin inline asm` ... `// end inline asm`) carries `.loc` lines that count the asm's own
lines onwards from the statement's line (a chain 9, 10, 11, 12 before a line-9 load); they
are blanked, so each instruction of the block keeps the `.loc` in force before it and every
PTX line keeps its number (the one Triton's cubin names it by).
"""

from __future__ import annotations

import base64
import binascii
import importlib.util
import json
import re
import sys
from dataclasses import dataclass, replace
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from ...model.errors import PatternError
from ...model.files import read_text
from ...model.pattern import Pattern
from ...model.python_kernel import python_language
from ..ptx.kernel import CompiledPtx
from ..ptx.parse import PtxError, parse_module
from ..ptx.sass_code import SassCode
from . import ptxcache
from .bounded import private_folder, run_bounded
from .flags import DEFAULT_ARCH
from .pysource import PythonKernel, read_python_kernel
from .sass import code_from_json, code_json, cubin_machine_code, target_machine_code

CHILD = Path(__file__).resolve().with_name("pykernel_child.py")
ROUTE = "python/3"  # in the cache key: what an entry of this route holds (3: Triton's cubin)
# (module that must import, distribution whose version is shown, its name, what to
# install); numba-cuda's own package, since numba still ships an older numba.cuda
COMPILERS = {"triton": ("triton", "triton", "Triton", "pip install sectorviz[triton]"),
             "numba": ("numba_cuda", "numba-cuda", "Numba CUDA",
                       "pip install sectorviz[numba]")}
PYTHON_ASSEMBLER = None  # no toolchain: sass.assembler_tools takes nvJitLink from the wheels
FALLBACK = "The SASS is nvJitLink's, not {}'s own cubin: {}"  # why, in the assumptions
_ASM_BLOCK = re.compile(r"// begin inline asm.*?// end inline asm", re.S)
_LOC_LINE = re.compile(r"^[ \t]*\.loc\b[^\n]*\n", re.M)


@dataclass(frozen=True)
class PythonSource:
    """A pattern's Python kernel file: its language, path, text and what pysource read."""

    language: str
    path: Path
    text: str
    kernel: PythonKernel


def installed(module: str) -> bool:
    """Whether `module` can be imported here (a module hidden in sys.modules is not)."""
    top = module.split(".")[0]
    if top in sys.modules and sys.modules[top] is None:
        return False
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def compiler_version(language: str) -> str:
    """`Triton 3.9.0`; PatternError in one line saying what to install where it is not."""
    module, dist, name, install = COMPILERS[language]
    if not installed(module):
        raise PatternError(f"kernel.{language}", f"a {name} kernel needs {dist}, which is not "
                                                 f"installed: {install}")
    try:
        return f"{name} {version(dist)}"
    except PackageNotFoundError:
        return name


def python_arch(pattern: Pattern) -> str:
    assert pattern.kernel is not None
    return str(pattern.kernel.get("arch", DEFAULT_ARCH))


def read_python_source(pattern: Pattern) -> PythonSource:
    """The pattern's .py, read inside its root, and its kernel taken from the syntax tree."""
    language = python_language(pattern.kernel)
    assert pattern.kernel is not None and language is not None
    place = f"kernel.{language}"
    path = pattern.roots.resolve(pattern.kernel[language], place)
    text = read_text(path, place, roots=pattern.roots)
    return PythonSource(language, path, text,
                        read_python_kernel(path, text, pattern.kernel["function"]))


def own_ptxas_words(language: str, release: str, arch: str) -> str:
    """`Triton's ptxas 13.4 for sm_90`: the header's name of the ptxas a Python compiler
    runs itself (Triton's bundled one), of `release`."""
    return f"{COMPILERS[language][2]}'s ptxas {release} for {arch}"


def compiled_python(source: PythonSource, request: dict[str, Any], compiler: str,
                    param_names: tuple[str, ...], arch: str) -> CompiledPtx:
    """Compile (or find in the cache) -> what the PTX engine runs, with its SASS
    (python_machine_code) for the pattern's `arch`; `request` is the compiler's part of the
    child's input, `param_names` the PTX parameters' names."""
    key = ptxcache.request_key({"route": ROUTE, "compiler": compiler, "request": request,
                                "module": source.kernel.module, "path": str(source.path)})
    entry = ptxcache.load(key)
    if entry is None:
        entry = {**_compiled(source, request), "name": request["function"],
                 "params": list(param_names),
                 "files": {str(source.path): ptxcache.file_digest(str(source.path))},
                 "lookups": {}, "host_code_left_out": False}
        entry["entry"] = _entry_name(entry["ptx"], source.path)
        ptxcache.store(key, entry)
    # the SASS, made once nvdisasm (and, without a readable cubin, nvJitLink) is found
    if entry.get("sass") is None:
        code = python_machine_code(entry, source.language, arch)
        entry = {**entry, "sass": code_json(code)}
        if code is not None:
            ptxcache.store(key, entry)
    shared = entry.get("dynamic_shared_bytes")
    return CompiledPtx(entry["ptx"], entry["entry"], tuple(entry["params"]), compiler,
                       (str(source.path),), (source.text,), others_read=False,
                       expressions=source.kernel.calls,
                       dynamic_shared_bytes=shared if isinstance(shared, int) else None,
                       sass=code_from_json(entry["sass"]))


def python_machine_code(entry: dict[str, Any], language: str, arch: str) -> SassCode | None:
    """The SASS of a cache entry's PTX: its compiler's own cubin (Triton's, made by its
    bundled ptxas with `-lineinfo`: the SASS the GPU would run) where nvdisasm reads a
    SASS-to-PTX line table in it for the PTX's `.target`; else what NVIDIA's nvJitLink wheel
    makes of the PTX for its `.target` (sass.py; Triton's and Numba's PTX is newer than an
    installed nvcc 13.0's ptxas takes), with why in its note; None when neither is made."""
    target = parse_module(entry["ptx"]).target
    cubin, release = entry.get("cubin"), entry.get("ptxas")
    why = ""
    if isinstance(cubin, str) and isinstance(release, str):
        try:
            machine = base64.b64decode(cubin, validate=True)
        except binascii.Error:  # a cache entry changed by hand
            machine, why = b"", "its cubin in the PTX cache is not base64"
        if machine:
            code, why = cubin_machine_code(machine, entry["entry"], target,
                                           own_ptxas_words(language, release, arch))
            if code is not None:
                return code
    code = target_machine_code(entry["ptx"], entry["entry"], target, PYTHON_ASSEMBLER)
    if code is None or not why:
        return code
    return replace(code, note=FALLBACK.format(COMPILERS[language][2], why))


def _compiled(source: PythonSource, request: dict[str, Any]) -> dict[str, Any]:
    """The child's compile -> the cache entry's {"ptx": PTX with its `.file` renamed and
    inline-asm `.loc`s blanked, "dynamic_shared_bytes": the launch's or None, "cubin": the
    compiler's own cubin of that PTX (base64) or None, "ptxas": the release of the ptxas
    that made it or None}; PatternError naming the file and line of the compiler's error."""
    file = _module_file(source.path)
    with private_folder() as folder:
        done = run_bounded([sys.executable, "-I", str(CHILD)], f"kernel.{source.language}",
                           "the compile", folder,
                           stdin=json.dumps({**request, "compiler": source.language,
                                             "file": file, "module": source.kernel.module,
                                             "dotted": source.kernel.dotted}).encode())
        try:
            result = json.loads(done.stdout)
        except ValueError:
            tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
            raise PatternError(f"kernel.{source.language}", f"the compile ended "
                                                            f"({done.returncode}): {tail[0]}"
                               ) from None
        if not result["ok"]:
            raise PatternError(f"line {result['line']}" if result["line"] else "kernel",
                               result["log"], file=str(source.path))
        ptx = str(result["ptx"]).replace(str(folder / file), str(source.path))
    shared = result.get("shared")
    return {"ptx": _ASM_BLOCK.sub(lambda m: _LOC_LINE.sub("\n", m.group(0)), ptx),
            "dynamic_shared_bytes": shared if isinstance(shared, int) else None,
            "cubin": result.get("cubin"), "ptxas": result.get("ptxas")}


def _module_file(path: Path) -> str:
    """The generated module's file name: the kernel file's stem as an identifier."""
    stem = re.sub(r"\W", "_", path.stem)
    return f"{stem if stem[:1].isalpha() else 'k_' + stem}.py"


def _entry_name(ptx: str, path: Path) -> str:
    """The one `.entry` of a Python kernel's PTX."""
    try:
        entries = list(parse_module(ptx).entries)
    except PtxError as err:
        raise PatternError(err.place, err.message, file=str(path)) from None
    if len(entries) != 1:
        raise PatternError("kernel", f"the compiler's PTX has {len(entries)} entries, not one",
                           file=str(path))
    return entries[0]
