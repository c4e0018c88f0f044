"""The compile's flags: sectorviz's own (-O3 -lineinfo, the architecture) and the ones a
pattern may add in `"kernel": {"flags": [...]}`, which are restricted to a whitelist so that a
pattern file can never make the compiler run anything else or read outside its root.

Allowed: `-DNAME[=VALUE]`, `-UNAME`, `-IDIR` (relative to the pattern's folder, inside its
root), `-std=c++NN`, `--use_fast_math`, `-maxrregcount=N`. Anything else (`-ccbin`, `--run`,
`-Xcompiler`, `-Xptxas`, `-o`, ...) is refused in one line.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..model.errors import PatternError, printable
from ..model.files import Roots
from ..model.pattern import ARCH

OPTIMIZATION = "-O3"
FIXED_FLAGS = (OPTIMIZATION, "-lineinfo")
DEFAULT_ARCH = "sm_90"
_MACRO = re.compile(r"-D([A-Za-z_]\w*)(=[^\x00-\x1f\x7f]*)?")
_UNDEF = re.compile(r"-U([A-Za-z_]\w*)")
_STD = re.compile(r"-std=c\+\+(03|11|14|17|20|23)")
_REGS = re.compile(r"--?maxrregcount=(\d{1,3})")
_FAST_MATH = ("--use_fast_math", "-use_fast_math")
ALLOWED = ("-D, -U, -I (a folder inside the pattern's root), -std=c++NN, --use_fast_math "
           "and -maxrregcount=N")


def check_arch(arch: str, place: str) -> str:
    """`sm_90`, `sm_90a`, `sm_100f` -> itself; PatternError at `place` otherwise."""
    if not isinstance(arch, str) or not ARCH.fullmatch(arch):
        raise PatternError(place, f"{printable(repr(arch))} is not an architecture such as "
                                  f"{DEFAULT_ARCH!r}")
    return arch


def user_flags(flags: object, base_dir: str | Path, roots: Roots) -> tuple[str, ...]:
    """A pattern's `kernel.flags` list -> the flags passed to nvcc (-I folders made absolute);
    PatternError at `kernel.flags[i]` for the first one outside the whitelist."""
    if flags is None:
        return ()
    if not isinstance(flags, (list, tuple)):
        raise PatternError("kernel.flags", "expected a list of strings")
    return tuple(_flag(f, f"kernel.flags[{i}]", Path(base_dir), roots)
                 for i, f in enumerate(flags))


def _flag(flag: object, place: str, base_dir: Path, roots: Roots) -> str:
    if not isinstance(flag, str):
        raise PatternError(place, "expected a string")
    if _MACRO.fullmatch(flag) or _UNDEF.fullmatch(flag) or _STD.fullmatch(flag) \
            or flag in _FAST_MATH:
        return flag
    regs = _REGS.fullmatch(flag)
    if regs:
        if not 16 <= int(regs.group(1)) <= 255:
            raise PatternError(place, "-maxrregcount takes 16 to 255 registers")
        return f"-maxrregcount={int(regs.group(1))}"
    if flag.startswith("-I") and len(flag) > 2:
        folder = base_dir / flag[2:]
        if "\x00" in flag:
            raise PatternError(place, f"{printable(repr(flag))}: the folder name holds a NUL")
        if not roots.allows(folder):
            raise roots.refusal(printable(repr(flag)), place)
        if not folder.is_dir():
            raise PatternError(place, f"{printable(repr(flag))}: no such folder")
        return f"-I{folder.resolve()}"
    raise PatternError(place, f"{printable(repr(flag))} is not allowed; a pattern may give "
                              f"only {ALLOWED}")
