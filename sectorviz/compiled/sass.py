"""What ptxas makes of the PTX, per source line: the PTX is assembled (`ptxas -lineinfo`) and
disassembled with line information (`nvdisasm -g`, from the toolkit or NVIDIA's
`nvidia-cuda-nvdisasm` wheel), and each line's memory instructions are counted on both sides
by state space and kind (load, store, atomic). A line whose counts differ is one where the
machine code issues other instructions than the PTX the report counts: ptxas merged
neighbouring accesses into a vector one (four `ld.shared.f32` into one `LDS.128`), unrolled
further, or dropped or added one. The notes say so, line by line; the counts stay the PTX's.

Where ptxas or nvdisasm is missing (an NVRTC-only machine without the disassembler wheel),
there are no notes and the assumption says counts are at the PTX level, unchecked.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..model.errors import PatternError
from ..model.ptx.limits import MAX_CONSTANT
from ..model.ptx.sites import EXPLICIT
from .bounded import private_folder, run_bounded
from .compiler import Toolchain, wheel_folders

SASS_SECONDS = 60.0  # ptxas or nvdisasm on one kernel
MAX_NOTES = 6  # lines named in the assumption; the rest are counted
Key = tuple[str, int, str, str]  # (file, line, space, kind)

_CONST = re.compile(r"^\s*\.const\b[^;\[]*\.[bsuf](\d+)\s+[\w$]+\[(\d+)\]", re.M)
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"')
_PTX_MEMORY = re.compile(r"^\s*(?:@!?%\w+\s+)?((?:ld|st|atom|red|cp\.async|ldmatrix|stmatrix)"
                         r"(?:\.[\w:]+)*)\s")
_SASS_LINE = re.compile(r'^\s*//## File "([^"]+)", line (\d+)')
_SASS_OP = re.compile(r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9]*)((?:\.\w+)*)\s")

SASS_KINDS = {  # SASS opcode -> ((space, kind), ...) it stands for
    "LDG": (("global", "load"),), "STG": (("global", "store"),),
    "ATOMG": (("global", "atomic"),), "RED": (("global", "atomic"),),
    "REDG": (("global", "atomic"),), "LDGSTS": (("global", "load"), ("shared", "store")),
    "LDS": (("shared", "load"),), "LDSM": (("shared", "load"),), "STS": (("shared", "store"),),
    "STSM": (("shared", "store"),), "ATOMS": (("shared", "atomic"),),
    "LDL": (("local", "load"),), "STL": (("local", "store"),),
    "LD": (("generic", "load"),), "ST": (("generic", "store"),),
    "ATOM": (("generic", "atomic"),),
}
SASS_WIDE = {"64", "128"}  # width modifiers of vector loads and stores (LDS.128)


@dataclass(frozen=True)
class LineChange:
    """A source line whose memory instructions of one space and kind number `ptx` in the
    PTX and `sass` in the machine code; `wide` counts the 64- and 128-bit ones of `sass`."""

    file: str
    line: int
    space: str
    kind: str
    ptx: int
    sass: int
    wide: int

    @property
    def words(self) -> str:
        """`matmul.cu line 33: 64 shared loads in the PTX, 40 in the SASS, 8 of them 64- or
        128-bit (merged into vector accesses: fewer, wider requests)`."""
        plural = "" if self.ptx == 1 else "s"
        wide = f", {self.wide} of them 64- or 128-bit" if self.wide else ""
        return (f"{Path(self.file).name} line {self.line}: {self.ptx} {self.space} "
                f"{self.kind}{plural} in the PTX, {self.sass} in the SASS{wide} "
                f"({self.what})")

    @property
    def what(self) -> str:
        """What ptxas did, as far as static counts tell."""
        if self.wide:
            return "merged into vector accesses: fewer, wider requests"
        if self.sass == 0:
            return "removed"
        if self.sass > self.ptx:
            return "more copies: unrolled further"
        return "fewer: combined or removed"


def ptx_counts(ptx: str) -> Counter[Key]:
    """Static memory instructions of the PTX per (file, line of the .loc in force, space,
    kind); cp.async is a global load and a shared store, ld.param / ld.const are not memory
    traffic here (ptxas makes them constant-bank operands)."""
    files: dict[str, str] = {}
    for line in ptx.splitlines():
        found = _FILE.match(line)
        if found:
            files[found.group(1)] = found.group(2)
    counts: Counter[Key] = Counter()
    place: tuple[str, int] | None = None
    for line in ptx.splitlines():
        loc = _LOC.match(line)
        if loc:
            place = (files.get(loc.group(1), loc.group(1)), int(loc.group(2)))
            continue
        op = _PTX_MEMORY.match(line)
        if op is None or place is None:
            continue
        for space, kind in _ptx_kinds(op.group(1).split(".")):
            key = (place[0], place[1], space, kind)
            counts[key] += 1
    return counts


def _ptx_kinds(parts: list[str]) -> list[tuple[str, str]]:
    name = parts[0]
    if name == "cp":
        return [("global", "load"), ("shared", "store")]
    if name in ("ldmatrix", "stmatrix"):
        return [("shared", "load" if name == "ldmatrix" else "store")]
    spaces = [EXPLICIT[p] for p in parts[1:] if p in EXPLICIT]
    if "param" in parts[1:] or "constant" in spaces:
        return []
    kind = {"ld": "load", "st": "store"}.get(name, "atomic")
    return [(spaces[0] if spaces else "generic", kind)]


def sass_counts(listing: str) -> tuple[Counter[Key], Counter[Key]]:
    """`nvdisasm -g` output -> (memory instructions per (file, line, space, kind), the wide
    ones among them)."""
    counts: Counter[Key] = Counter()
    wide: Counter[Key] = Counter()
    place: tuple[str, int] | None = None
    for line in listing.splitlines():
        at = _SASS_LINE.match(line)
        if at:
            place = (at.group(1), int(at.group(2)))
            continue
        op = _SASS_OP.match(line)
        if op is None or place is None or op.group(1) not in SASS_KINDS:
            continue
        for space, kind in SASS_KINDS[op.group(1)]:
            key = (place[0], place[1], space, kind)
            counts[key] += 1
            if SASS_WIDE & set(op.group(2).split(".")):
                wide[key] += 1
    return counts, wide


def line_changes(ptx: str, listing: str) -> list[LineChange]:
    """The lines whose memory instructions differ between the PTX and its SASS, in order."""
    before = ptx_counts(ptx)
    after, wide = sass_counts(listing)
    return [LineChange(*key, before[key], after[key], wide[key])
            for key in sorted(set(before) | set(after), key=lambda k: (k[0], k[1], k[2], k[3]))
            if before[key] != after[key]]


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


def disassembled(ptx: str, arch: str, tools: tuple[str, str]) -> str | None:
    """The PTX assembled for `arch` and disassembled with line information (nvdisasm -g);
    None when either tool fails (the counts are then unchecked, not wrong)."""
    ptxas, nvdisasm = tools
    with private_folder("sectorviz-sass-") as folder:
        source, cubin = folder / "kernel.ptx", folder / "kernel.cubin"
        source.write_text(ptx, encoding="utf-8")
        for args, what in (([ptxas, f"-arch={arch}", "-lineinfo", "-O3", str(source), "-o",
                             str(cubin)], "ptxas"),
                           ([nvdisasm, "-g", "-c", str(cubin)], "nvdisasm")):
            try:
                done = run_bounded(args, "kernel", what, folder, seconds=SASS_SECONDS)
            except PatternError:
                return None
            if done.returncode != 0:
                return None
        return done.stdout


def notes(changes: list[LineChange]) -> tuple[str, ...]:
    """The lines ptxas changed, in words (the first MAX_NOTES, then how many more)."""
    words = [c.words for c in changes[:MAX_NOTES]]
    if len(changes) > MAX_NOTES:
        words.append(f"{len(changes) - MAX_NOTES} more")
    return tuple(words)


def constant_bytes(ptx: str) -> int:
    """The bytes the PTX's `.const` variables declare (`.const .align 4 .b8 t[4096];`)."""
    return sum(int(bits) // 8 * int(count) for bits, count in _CONST.findall(ptx))


def machine_code_notes(ptx: str, arch: str, toolchain: Toolchain) -> tuple[str, ...] | None:
    """notes() for a compile's PTX; None when it cannot be checked here (no ptxas or
    nvdisasm, or either failed) or must not be: PTX whose constant memory no GPU has (the
    model refuses it; ptxas would allocate it all first)."""
    if constant_bytes(ptx) > MAX_CONSTANT:
        return None
    tools = assembler_tools(toolchain)
    listing = None if tools is None else disassembled(ptx, arch, tools)
    return None if listing is None else notes(line_changes(ptx, listing))
