"""The machine code ptxas makes of the PTX, as the PTX engine needs it: each SASS memory
instruction of the entry (its offset, opcode with modifiers, the PTX line it was made from as
the cubin's SASS-to-PTX line table says, and its stack offset for an `LDL`/`STL` at
`[R1+off]`), and which assembler made it. A plain value: reading `nvdisasm` output is
sectorviz.engine.compiled.sass's; what the GPU issues from these is sass_reading.py's.
"""

from __future__ import annotations

from dataclasses import dataclass

# SASS opcode -> the PTX engine's spaces it reaches (LDGSTS reads global and writes shared)
SASS_SPACES = {
    "LDG": ("global",), "STG": ("global",), "ATOMG": ("global",), "RED": ("global",),
    "REDG": ("global",), "LDGSTS": ("global", "shared"), "LDS": ("shared",),
    "LDSM": ("shared",), "STS": ("shared",), "STSM": ("shared",), "ATOMS": ("shared",),
    "LDL": ("local",), "STL": ("local",), "LD": ("generic",), "ST": ("generic",),
    "ATOM": ("generic",), "UBLKCP": ("global", "shared"),
}
SPILLS = ("LDL", "STL")  # local loads and stores ptxas may add for registers it spills
WIDENS = ("LDG", "STG", "LDS", "STS", "LDL", "STL", "LD", "ST")  # may merge PTX accesses
WIDTH_BYTES = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "64": 8, "128": 16}  # else 4 bytes


@dataclass(frozen=True)
class SassOp:
    """One SASS memory instruction: byte offset in the kernel's code, opcode with its
    modifiers (`LDS.128`, `LDG.E.64.CONSTANT`), the PTX line it was made from (0: none), and
    for a stack access (`[R1+0x10]`) its byte offset in the thread's frame, else None."""

    offset: int
    opcode: str
    ptx_line: int
    stack: int | None = None

    @property
    def name(self) -> str:
        """The opcode without modifiers: `LDS`."""
        return self.opcode.split(".")[0]

    @property
    def width(self) -> int:
        """Bytes per lane (LDS.128 -> 16; 4 unless a width modifier says otherwise)."""
        return next((WIDTH_BYTES[m] for m in self.opcode.split(".")[1:] if m in WIDTH_BYTES), 4)

    @property
    def shown(self) -> str:
        """The opcode with its width, as the sheet names it: `LDS.128`, `LDG.E.64`."""
        parts = self.opcode.split(".")
        return ".".join([parts[0]] + [m for m in parts[1:] if m in ("E",) + tuple(WIDTH_BYTES)])


@dataclass(frozen=True)
class SassCode:
    """The SASS of one entry: its memory instructions in code order, the assembler
    (`ptxas 13.0 for sm_90`) and, where it is not the one first asked, why (`Triton's cubin
    carries no SASS-to-PTX line table`: said in the kernel's assumptions)."""

    assembler: str
    ops: tuple[SassOp, ...]
    note: str = ""
