"""The SASS ptxas makes of the very PTX the engine runs: the PTX is assembled for the
pattern's architecture with line information (`ptxas -lineinfo` beside nvcc, else NVIDIA's
nvJitLink library from the wheels, PTX in, cubin out, in nvrtc_child's process) and the cubin
disassembled with both line tables (`nvdisasm -g -gp`, beside ptxas or from NVIDIA's
`nvidia-cuda-nvdisasm` wheel). `-gp` ties every SASS instruction to the line of the PTX it
was built from (the cubin embeds that PTX, its line numbers kept), so each SASS memory
instruction of the entry becomes a model.ptx.sass_code.SassOp naming its PTX line; how they
are counted is model.ptx.sass_reading's. A compiler that makes its own cubin of its PTX
(Triton, with its bundled ptxas and `-lineinfo`, in its bounded compile) has that cubin read
the same way (`cubin_machine_code`). Both tools run bounded (bounded.py); the result is
cached with the PTX (compile.py, pykernel.py, ptxcache.py) as a JSON-able dict
(`code_json`).

Where no assembler or no nvdisasm is found, or either fails, there is no SASS: the kernel is
counted at the PTX level, and the assumptions say so.
"""

from __future__ import annotations

import ctypes
import json
import re
import shutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ...model.errors import PatternError
from ...model.pattern import ARCH
from ..ptx.limits import MAX_CONSTANT
from ..ptx.sass_code import SASS_SPACES, SassCode, SassOp
from .bounded import private_folder, run_bounded
from .compiler import Toolchain, wheel_folders
from .flags import DEFAULT_ARCH

SASS_SECONDS = 60.0  # ptxas or nvdisasm on one kernel
PTX_TABLE = ".nv_debug_ptx_txt"  # the file nvdisasm -gp names the embedded PTX (nvJitLink's
# with a number: `.nv_debug_ptx_txt.2130650783`)

_CONST = re.compile(r"^\s*\.const\b[^;\[]*\.[bsuf](\d+)\s+[\w$]+\[(\d+)\]", re.M)
_SECTION = re.compile(r"^\s*\.section\s+\.text\.([\w$.]+),")
_PTX_LINE = re.compile(r'^\s*//## File "' + re.escape(PTX_TABLE) + r'(?:\.\d+)?", line (\d+)')
_SASS_OP = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9]*(?:\.\w+)*)\s"
                      r"([^;]*);")
_STACK = re.compile(r"\[R1(?:\+(0x[0-9a-f]+))?\]")
_REGISTERS = re.compile(r"-maxrregcount=\d+")
# what nvdisasm says a cubin is for: `.target sm_90a` (the ELF format of ptxas 13), else
# `.headerflags @"... EF_CUDA_SM80 ..."` (the older one, which has no a/f suffix)
_MADE_FOR = re.compile(r"^\s*\.target\s+(sm_\w+)|^\s*\.headerflags\s.*\bEF_CUDA_SM(\d+)\b", re.M)


@dataclass(frozen=True)
class Assembler:
    """What turns PTX into a cubin here: `kind` "ptxas" (`path` the program) or "nvJitLink"
    (`path` its library, run in nvrtc_child's process), its release, and nvdisasm."""

    kind: str
    path: str
    version: str
    nvdisasm: str

    def words(self, arch: str) -> str:
        """`ptxas 13.0 for sm_90`: what the header says counted the kernel."""
        return f"{self.kind} {self.version} for {arch}"


@lru_cache(maxsize=8)
def assembler_tools(toolchain: Toolchain | None) -> Assembler | None:
    """The assembler for this compiler's PTX: ptxas beside nvcc, else NVIDIA's nvJitLink
    wheel; with nvdisasm beside ptxas or from its wheel. None when either is missing (looked
    up once per toolchain: every kernel pattern's reading asks)."""
    folder = None if toolchain is None or toolchain.kind != "nvcc" else \
        str(Path(toolchain.path).parent)
    nvdisasm = find_nvdisasm(folder)
    if nvdisasm is None:
        return None
    ptxas = folder and shutil.which("ptxas", path=folder)
    if ptxas and toolchain is not None:
        return Assembler("ptxas", ptxas, toolchain.version, nvdisasm)
    jitlink = find_jitlink()
    return None if jitlink is None else Assembler("nvJitLink", *jitlink, nvdisasm)


@lru_cache(maxsize=8)
def find_nvdisasm(folder: str | None = None) -> str | None:
    """nvdisasm beside ptxas in `folder`, else from NVIDIA's `nvidia-cuda-nvdisasm` wheel
    (looked up once per folder)."""
    return (folder and shutil.which("nvdisasm", path=folder)) or next(
        (str(p) for base in wheel_folders() for p in sorted(Path(base).glob("cu*/bin/nvdisasm*"))
         if shutil.which(str(p))), None)


@lru_cache(maxsize=1)
def find_jitlink() -> tuple[str, str] | None:
    """(library, release) of nvJitLink from NVIDIA's wheels, when it loads; else None."""
    for base in map(Path, wheel_folders()):
        for lib in [*sorted(base.glob("cu*/lib/libnvJitLink.so.*")),
                    *sorted(base.glob("nvjitlink/lib/libnvJitLink.so.*")),
                    *sorted(base.glob("cu*/bin/**/nvJitLink_*.dll"))]:
            try:
                jitlink = ctypes.CDLL(str(lib))
            except OSError:
                continue
            major, minor = ctypes.c_uint(), ctypes.c_uint()
            if jitlink.nvJitLinkVersion(ctypes.byref(major), ctypes.byref(minor)) == 0:
                return str(lib), f"{major.value}.{minor.value}"
    return None


def _cubin(ptx: str, arch: str, tools: Assembler, registers: list[str], folder: Path
           ) -> Path | None:
    """The PTX (written in `folder`) assembled into `folder`/kernel.cubin; None on failure."""
    source, cubin = folder / "kernel.ptx", folder / "kernel.cubin"
    source.write_text(ptx, encoding="utf-8")
    options = [f"-arch={arch}", "-lineinfo", "-O3", *registers]
    if tools.kind == "ptxas":
        args, stdin = [tools.path, *options, str(source), "-o", str(cubin)], None
    else:
        from .nvrtc import child_command  # nvrtc.py imports compile.py, which imports this
        request = {"assemble": True, "library": tools.path, "ptx": ptx, "options": options,
                   "cubin": str(cubin)}
        args, stdin = child_command(), json.dumps(request).encode("utf-8")
    try:
        done = run_bounded(args, "kernel", tools.kind, folder, seconds=SASS_SECONDS,
                           stdin=stdin)
    except PatternError:
        return None
    return cubin if done.returncode == 0 and cubin.is_file() else None


def disassembled(ptx: str, arch: str, tools: Assembler,
                 flags: tuple[str, ...] = ()) -> str | None:
    """The PTX assembled for `arch` (with the compile's -maxrregcount among `flags`) and
    disassembled with both line tables (nvdisasm -g -gp); None when either tool fails (the
    kernel is then counted at the PTX level, not wrongly)."""
    registers = [f for f in flags if _REGISTERS.fullmatch(f)]
    with private_folder("sectorviz-sass-") as folder:
        cubin = _cubin(ptx, arch, tools, registers, folder)
        return None if cubin is None else _listing(cubin, tools.nvdisasm, folder)


def _listing(cubin: Path, nvdisasm: str, folder: Path) -> str | None:
    """A cubin (in `folder`) disassembled with both line tables (nvdisasm -g -gp), bounded;
    None when nvdisasm fails."""
    try:
        done = run_bounded([nvdisasm, "-g", "-gp", "-c", str(cubin)], "kernel", "nvdisasm",
                           folder, seconds=SASS_SECONDS)
    except PatternError:
        return None
    return done.stdout if done.returncode == 0 else None


def cubin_machine_code(cubin: bytes, entry: str, target: str, words: str
                       ) -> tuple[SassCode | None, str]:
    """A compiler's own cubin of a PTX (Triton's) -> (its SASS, named `words`, "") when
    nvdisasm reads it as made for the PTX's `target` (`sm_90a`) with a SASS-to-PTX line
    table (the PTX lines it names are then that PTX's own); else (None, why not, in
    words)."""
    nvdisasm = find_nvdisasm()
    if nvdisasm is None:
        return None, "no nvdisasm was found to read its cubin"
    with private_folder("sectorviz-sass-") as folder:
        (folder / "kernel.cubin").write_bytes(cubin)
        listing = _listing(folder / "kernel.cubin", nvdisasm, folder)
    if listing is None:
        return None, "nvdisasm could not read its cubin"
    found = _MADE_FOR.search(listing)
    if found is None:
        return None, "nvdisasm names no architecture its cubin is for"
    made_for, expected = (found.group(1), target) if found.group(1) else \
        (f"sm_{found.group(2)}", target.rstrip("af"))
    if made_for != expected:
        return None, f"its cubin is for {made_for}, not the PTX's {target}"
    if not any(_PTX_LINE.match(line) for line in listing.splitlines()):
        return None, "its cubin carries no SASS-to-PTX line table"
    return SassCode(words, sass_ops(listing, entry)), ""


def sass_ops(listing: str, entry: str) -> tuple[SassOp, ...]:
    """`nvdisasm -g -gp` output -> the memory instructions of `entry`'s code section, in
    code order, each with the PTX line in force (0 before any)."""
    ops: list[SassOp] = []
    section, ptx_line = None, 0
    for line in listing.splitlines():
        found = _SECTION.match(line)
        if found:
            section, ptx_line = found.group(1), 0
            continue
        at = _PTX_LINE.match(line)
        if at:
            ptx_line = int(at.group(1))
            continue
        op = _SASS_OP.match(line)
        if op is None or section != entry or op.group(2).split(".")[0] not in SASS_SPACES:
            continue
        stack = _STACK.search(op.group(3))
        ops.append(SassOp(int(op.group(1), 16), op.group(2), ptx_line,
                          None if stack is None else int(stack.group(1) or "0", 16)))
    return tuple(ops)


def constant_bytes(ptx: str) -> int:
    """The bytes the PTX's `.const` variables declare (`.const .align 4 .b8 t[4096];`)."""
    return sum(int(bits) // 8 * int(count) for bits, count in _CONST.findall(ptx))


def machine_code(ptx: str, entry: str, arch: str, toolchain: Toolchain | None,
                 flags: tuple[str, ...] = ()) -> SassCode | None:
    """The SASS of a compile's entry; None when it cannot be made here (no ptxas or
    nvdisasm, or either failed) or must not be: PTX whose constant memory no GPU has (the
    model refuses it; ptxas would allocate it all first)."""
    if constant_bytes(ptx) > MAX_CONSTANT:
        return None
    tools = assembler_tools(toolchain)
    listing = None if tools is None else disassembled(ptx, arch, tools, flags)
    if tools is None or listing is None:
        return None
    return SassCode(tools.words(arch), sass_ops(listing, entry))


def target_machine_code(ptx: str, entry: str, target: str, toolchain: Toolchain | None
                        ) -> SassCode | None:
    """machine_code for the PTX's own `.target` (`sm_90a`, as Triton writes it), else for
    sm_90: PTX that was not compiled here (a .ptx file, Triton's, Numba's)."""
    return machine_code(ptx, entry, target if ARCH.fullmatch(target) else DEFAULT_ARCH,
                        toolchain)


def code_json(code: SassCode | None) -> dict | None:
    """A SassCode -> its cache form: {"assembler": str, "ops": [[offset, opcode, PTX line,
    stack offset or null], ...], "note": str}."""
    return None if code is None else {
        "assembler": code.assembler,
        "ops": [[op.offset, op.opcode, op.ptx_line, op.stack] for op in code.ops],
        "note": code.note}


def code_from_json(doc: dict | None) -> SassCode | None:
    """code_json's form -> the SassCode (the cache checked its shape: ptxcache.py; an entry
    stored before notes has none)."""
    return None if doc is None else SassCode(
        doc["assembler"], tuple(SassOp(*op) for op in doc["ops"]), doc.get("note", ""))
