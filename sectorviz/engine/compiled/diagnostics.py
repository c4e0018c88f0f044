"""A failed compile's output -> one line: the file (the .cu or the included file), its line
and column, and the compiler's first error message.

nvcc's front end writes `FILE(LINE): error: MESSAGE`, then the source line indented by two
and a caret under the column; the host preprocessor writes `FILE:LINE:COL: error: MESSAGE`.
A message located in a file outside the pattern's root (and not among the compiler's own
headers) is not quoted: the line only names that file and refuses it.
"""

from __future__ import annotations

import re
from typing import Callable

from ...model.errors import PatternError, printable
from .bounded import memory_limit, memory_words

_FRONT_END = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): (?:catastrophic )?error: (?P<msg>.*)$")
_PREPROCESSOR = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?:fatal )?error: "
                           r"(?P<msg>.*)$")
_MEMORY = re.compile(r"out of memory|bad_alloc|cannot allocate memory|memory allocation|"
                     r"segmentation fault|killed", re.I)  # what a process at its limit says

Place = Callable[[str], str | None]  # a file the compiler names -> how errors name it (None:
# outside the root: say nothing of it)
LineText = Callable[[str, int], str | None]  # (file the compiler names, line) -> its text


def compile_error(stderr: str, returncode: int, place_of: Place,
                  line_text: LineText) -> PatternError:
    """The one-line PatternError for a compile that failed with `stderr`. `place_of` turns a
    file nvcc names into the name errors give it (the .cu file's name, `kernel.code`, an
    include's path), or None for a file outside the pattern's root; `line_text` gives a line
    of a file, to find the column of a front-end error in it."""
    lines = stderr.splitlines()
    for i, line in enumerate(lines):
        found = _FRONT_END.match(line) or _PREPROCESSOR.match(line)
        if found is None:
            continue
        where = place_of(found.group("file"))
        if where is None:
            return outside_root(found.group("file"))
        line = int(found.group("line"))
        column = int(found.group("col")) if "col" in found.groupdict() else \
            _caret_column(lines[i + 1:i + 3], line_text(found.group("file"), line))
        return PatternError(f"{where} line {line}", found.group("msg").strip(), column)
    if returncode < 0 or _MEMORY.search(stderr):
        return PatternError("kernel", f"the compiler crashed or ran out of its memory limit "
                                      f"({memory_words(memory_limit())}; a template or macro "
                                      "expansion that does not end?)")
    said = [ln.strip() for ln in lines if ln.strip()]
    first = next((ln for ln in said if "error" in ln.lower()), said[0] if said else
                 f"exit status {returncode}")
    return PatternError("kernel", f"the compile failed: {first}")


def outside_root(file: str) -> PatternError:
    """The refusal of a compile that reads `file`, outside the pattern's root (nothing of
    the file is quoted)."""
    return PatternError("kernel", f"an #include reads {printable(file)}, outside the "
                                  "pattern's root; refused")


def _caret_column(quoted: list[str], original: str | None) -> int | None:
    """The 1-based column, in the `original` line, of the `^` nvcc puts under the line it
    quotes. The quoted line is the line after macro expansion (`__device__` shows as
    `__attribute__((device))`), so the column is where the quoted text from the caret on
    ends the original line, or where the word at the caret occurs once in it; None when
    neither tells."""
    if len(quoted) != 2 or quoted[1].strip() != "^" or original is None:
        return None
    at = quoted[1].index("^")
    rest = quoted[0][at:].rstrip()
    if rest and original.rstrip().endswith(rest):
        return len(original.rstrip()) - len(rest) + 1
    word = re.match(r"\w+|\S", rest)
    if word and original.count(word.group()) == 1:
        return original.index(word.group()) + 1
    return None
