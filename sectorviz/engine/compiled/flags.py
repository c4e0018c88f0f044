"""The compile's flags: sectorviz's own (-O3 -lineinfo, or -G for the "as written" debug
compile; the architecture) and the ones a
pattern may add in `"kernel": {"flags": [...]}`, restricted to a whitelist so that a pattern
file can never make the compiler run anything else, read outside its root, or reach a shell.

Allowed: `-DNAME[=VALUE]`, `-UNAME`, `-IDIR` (relative to the pattern's folder, inside its
root), `-std=c++NN`, `--use_fast_math`, `-maxrregcount=N`. Anything else (`-ccbin`, `--run`,
`-Xcompiler`, `-Xptxas`, `-o`, ...) is refused in one line.

nvcc hands parts of its command line to a shell when it runs its sub-tools, so macros never
go there: `-D` and `-U` become the lines of a generated header (`#define NAME VALUE`,
`#undef NAME`, in the order given) that the compiler pre-includes from a private folder
(`-include`). A macro's name is a C identifier and its value one line with no control
character and no unfinished comment. An include folder is resolved, must lie inside the
root and have a path that no shell or nvcc splits or expands (bounded.shell_safe).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ...model.errors import PatternError, printable
from ...model.files import Roots
from ...model.pattern import ARCH
from .bounded import shell_safe

OPTIMIZATION = "-O3"
FIXED_FLAGS = (OPTIMIZATION, "-lineinfo")
DEBUG = "-G"  # the "as written" reading: a debug compile, device code as the source says it
DEFAULT_ARCH = "sm_90"
_MACRO = re.compile(r"-D([A-Za-z_]\w*)(?:=(.*))?", re.DOTALL)
_UNDEF = re.compile(r"-U([A-Za-z_]\w*)")
_STD = re.compile(r"-std=c\+\+(03|11|14|17|20|23)")
_REGS = re.compile(r"--?maxrregcount=(\d{1,3})")
_FAST_MATH = ("--use_fast_math", "-use_fast_math")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]")
_COMMENTS = re.compile(r"/\*.*?\*/")
ALLOWED = ("-D, -U, -I (a folder inside the pattern's root), -std=c++NN, --use_fast_math "
           "and -maxrregcount=N")
UNSAFE_FOLDER = ("its path holds a character that nvcc or a shell splits or expands (a "
                 "space, comma, quote, $ or backtick); rename the folder")


@dataclass(frozen=True)
class CompileFlags:
    """What a compile is given: `options` for the compiler's command line (only forms no
    shell reads), `include_dirs` (real, shell-safe paths, searched in order) and `macros`,
    the lines of the generated header (`#define NAME VALUE`, `#undef NAME`)."""

    options: tuple[str, ...] = ()
    include_dirs: tuple[str, ...] = ()
    macros: tuple[str, ...] = ()

    def __add__(self, other: CompileFlags) -> CompileFlags:
        return CompileFlags(self.options + other.options,
                            self.include_dirs + other.include_dirs,
                            self.macros + other.macros)

    @property
    def header(self) -> str:
        """The generated header's text (empty when there are no macros)."""
        return "".join(f"{line}\n" for line in self.macros)

    @property
    def described(self) -> tuple[str, ...]:
        """The flags as a command line would spell them (`-O3 ... -DTILE=16 -I/abs/inc`):
        how the assumptions describe the compile and what its cache key holds."""
        spelled = [_spelled(line) for line in self.macros]
        return (*self.options, *spelled, *(f"-I{d}" for d in self.include_dirs))


def fixed_flags(arch: str, as_written: bool = False) -> CompileFlags:
    """sectorviz's own flags for a compile for `arch`: -O3 -lineinfo, or -G when
    `as_written` (the debug compile)."""
    return CompileFlags(options=(*((DEBUG,) if as_written else FIXED_FLAGS), f"-arch={arch}"))


def _spelled(line: str) -> str:
    """`#define TILE 16` -> `-DTILE=16`; `#undef X` -> `-UX`."""
    kind, name, *value = line.split(" ", 2)
    if kind == "#undef":
        return f"-U{name}"
    return f"-D{name}" if value == ["1"] else f"-D{name}={value[0] if value else ''}"


def check_arch(arch: object, place: str) -> str:
    """`sm_90`, `sm_90a`, `sm_100f` -> itself; PatternError at `place` otherwise."""
    if not isinstance(arch, str) or not ARCH.fullmatch(arch):
        raise PatternError(place, f"{printable(repr(arch))} is not an architecture such as "
                                  f"{DEFAULT_ARCH!r}")
    return arch


def include_folder(folder: Path, place: str) -> str:
    """An include folder already checked inside the roots -> its real path; PatternError at
    `place` when that path is not shell-safe."""
    real = folder.resolve()
    if not shell_safe(str(real)):
        raise PatternError(place, f"{printable(repr(str(real)))}: {UNSAFE_FOLDER}")
    return str(real)


def user_flags(flags: object, base_dir: str | Path, roots: Roots) -> CompileFlags:
    """A pattern's `kernel.flags` list -> what the compile is given; PatternError at
    `kernel.flags[i]` for the first one outside the whitelist."""
    if flags is None:
        return CompileFlags()
    if not isinstance(flags, (list, tuple)):
        raise PatternError("kernel.flags", "expected a list of strings")
    read = CompileFlags()
    for i, flag in enumerate(flags):
        read += _flag(flag, f"kernel.flags[{i}]", Path(base_dir), roots)
    return read


def _flag(flag: object, place: str, base_dir: Path, roots: Roots) -> CompileFlags:
    if not isinstance(flag, str):
        raise PatternError(place, "expected a string")
    macro = _MACRO.fullmatch(flag)
    if macro:
        return CompileFlags(macros=(_define(macro.group(1), macro.group(2), place),))
    undef = _UNDEF.fullmatch(flag)
    if undef:
        return CompileFlags(macros=(f"#undef {undef.group(1)}",))
    if _STD.fullmatch(flag) or flag in _FAST_MATH:
        return CompileFlags(options=(flag,))
    regs = _REGS.fullmatch(flag)
    if regs:
        if not 16 <= int(regs.group(1)) <= 255:
            raise PatternError(place, "-maxrregcount takes 16 to 255 registers")
        return CompileFlags(options=(f"-maxrregcount={int(regs.group(1))}",))
    if flag.startswith("-I") and len(flag) > 2:
        return CompileFlags(include_dirs=(_include_flag(flag, place, base_dir, roots),))
    raise PatternError(place, f"{printable(repr(flag))} is not allowed; a pattern may give "
                              f"only {ALLOWED}")


def _define(name: str, value: str | None, place: str) -> str:
    """A -D flag's name and value -> its `#define` line (`-DX` defines X as 1, as the
    compiler does); PatternError for a value that is not one clean line."""
    if value is None:
        return f"#define {name} 1"
    if _CONTROL.search(value):
        raise PatternError(place, f"the value of {name} holds a line break or a control "
                                  "character; a macro value is one line")
    if value.endswith("\\") or "/*" in _COMMENTS.sub("", value):
        raise PatternError(place, f"the value of {name} ends in a backslash or opens a "
                                  "comment it does not close; a macro value is one line")
    return f"#define {name} {value}"


def _include_flag(flag: str, place: str, base_dir: Path, roots: Roots) -> str:
    """`-IDIR` -> DIR's real path, once it is checked to be a folder inside the roots whose
    path is shell-safe."""
    if "\x00" in flag:
        raise PatternError(place, f"{printable(repr(flag))}: the folder name holds a NUL")
    folder = base_dir / flag[2:]
    if not roots.allows(folder):
        raise roots.refusal(printable(repr(flag)), place)
    if not folder.is_dir():
        raise PatternError(place, f"{printable(repr(flag))}: no such folder")
    return include_folder(folder, place)
