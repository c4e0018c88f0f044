"""The SASS ptxas makes of the very PTX the engine runs: the PTX is assembled for the
pattern's architecture with line information (`ptxas -lineinfo`, beside nvcc) and the cubin
disassembled with both line tables (`nvdisasm -g -gp`, beside ptxas or from NVIDIA's
`nvidia-cuda-nvdisasm` wheel). `-gp` ties every SASS instruction to the line of the PTX it
was built from (the cubin embeds that PTX, its line numbers kept), so each SASS memory
instruction of the entry becomes a model.ptx.sass_code.SassOp naming its PTX line; how they
are counted is model.ptx.sass_reading's. Both tools run bounded (bounded.py); the result is
cached with the PTX (compile.py, ptxcache.py) as a JSON-able dict (`code_json`).

Where ptxas or nvdisasm is missing (an NVRTC-only machine) or either fails, there is no
SASS: the kernel is counted at the PTX level, and the assumptions say so.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from ..model.errors import PatternError
from ..model.ptx.limits import MAX_CONSTANT
from ..model.ptx.sass_code import SASS_SPACES, SassCode, SassOp
from .bounded import private_folder, run_bounded
from .compiler import Toolchain, wheel_folders

SASS_SECONDS = 60.0  # ptxas or nvdisasm on one kernel
PTX_TABLE = ".nv_debug_ptx_txt"  # the file name nvdisasm -gp gives the embedded PTX

_CONST = re.compile(r"^\s*\.const\b[^;\[]*\.[bsuf](\d+)\s+[\w$]+\[(\d+)\]", re.M)
_SECTION = re.compile(r"^\s*\.section\s+\.text\.([\w$.]+),")
_PTX_LINE = re.compile(r'^\s*//## File "' + re.escape(PTX_TABLE) + r'", line (\d+)')
_SASS_OP = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9]*(?:\.\w+)*)\s"
                      r"([^;]*);")
_STACK = re.compile(r"\[R1(?:\+(0x[0-9a-f]+))?\]")
_REGISTERS = re.compile(r"-maxrregcount=\d+")


def assembler_tools(toolchain: Toolchain) -> tuple[str, str] | None:
    """(ptxas, nvdisasm) for this compiler: ptxas beside nvcc, nvdisasm beside it or from
    NVIDIA's wheel; None when either is missing (NVRTC brings no assembler)."""
    if toolchain.kind != "nvcc":
        return None
    folder = Path(toolchain.path).parent
    ptxas = shutil.which("ptxas", path=str(folder))
    disassembler = shutil.which("nvdisasm", path=str(folder)) or next(
        (str(p) for base in wheel_folders() for p in sorted(Path(base).glob("cu*/bin/nvdisasm*"))
         if shutil.which(str(p))), None)
    return (ptxas, disassembler) if ptxas and disassembler else None


def disassembled(ptx: str, arch: str, tools: tuple[str, str],
                 flags: tuple[str, ...] = ()) -> str | None:
    """The PTX assembled for `arch` (with the compile's -maxrregcount among `flags`) and
    disassembled with both line tables (nvdisasm -g -gp); None when either tool fails (the
    kernel is then counted at the PTX level, not wrongly)."""
    ptxas, nvdisasm = tools
    registers = [f for f in flags if _REGISTERS.fullmatch(f)]
    with private_folder("sectorviz-sass-") as folder:
        source, cubin = folder / "kernel.ptx", folder / "kernel.cubin"
        source.write_text(ptx, encoding="utf-8")
        for args, what in (([ptxas, f"-arch={arch}", "-lineinfo", "-O3", *registers,
                             str(source), "-o", str(cubin)], "ptxas"),
                           ([nvdisasm, "-g", "-gp", "-c", str(cubin)], "nvdisasm")):
            try:
                done = run_bounded(args, "kernel", what, folder, seconds=SASS_SECONDS)
            except PatternError:
                return None
            if done.returncode != 0:
                return None
        return done.stdout


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


def machine_code(ptx: str, entry: str, arch: str, toolchain: Toolchain,
                 flags: tuple[str, ...] = ()) -> SassCode | None:
    """The SASS of a compile's entry; None when it cannot be made here (no ptxas or
    nvdisasm, or either failed) or must not be: PTX whose constant memory no GPU has (the
    model refuses it; ptxas would allocate it all first)."""
    if constant_bytes(ptx) > MAX_CONSTANT:
        return None
    tools = assembler_tools(toolchain)
    listing = None if tools is None else disassembled(ptx, arch, tools, flags)
    if listing is None:
        return None
    return SassCode(f"ptxas {toolchain.version} for {arch}", sass_ops(listing, entry))


def code_json(code: SassCode | None) -> dict | None:
    """A SassCode -> its cache form: {"assembler": str, "ops": [[offset, opcode, PTX line,
    stack offset or null], ...]}."""
    return None if code is None else {
        "assembler": code.assembler,
        "ops": [[op.offset, op.opcode, op.ptx_line, op.stack] for op in code.ops]}


def code_from_json(doc: dict | None) -> SassCode | None:
    """code_json's form -> the SassCode (the cache checked its shape: ptxcache.py)."""
    return None if doc is None else SassCode(
        doc["assembler"], tuple(SassOp(*op) for op in doc["ops"]))
