"""The files a compile will read, found before it runs, for a compiler that cannot list them
(NVRTC has no `-M`): every `#include` of the source and, recursively, of the included files
of the pattern's root, resolved as the compiler resolves it (a quoted name beside the
including file first, then along the include folders). A file found outside the root and the
compiler's own header folders is refused naming it (nothing of it is read); so is an
`#include` whose file a macro names, which cannot be resolved before the compile, and an
absolute or `..` name found nowhere (the compiler might find it elsewhere).
Directives inside comments or inactive `#if` branches count too: a refusal errs on the safe
side.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..model.errors import PatternError, printable
from ..model.files import Roots, lies_in, read_text
from .diagnostics import outside_root

_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include(?:_next)?[ \t]*(?:\"([^\"\n]*)\"|<([^>\n]*)>|(.*))",
                      re.M)
MAX_FILES = 4096  # included files of the root one compile may read


def root_includes(text: str, folder: Path, where: str, search: list[Path],
                  system: list[Path], roots: Roots) -> list[str]:
    """The real paths of the root's files that `text` (the main source, lying in `folder`,
    named `where` in errors) includes, directly or not, in the order first met. `search`:
    the include folders inside the root (-I), `system`: the compiler's own header folders."""
    found: list[str] = []
    pending = [(text, folder, where)]
    while pending:
        text, folder, where = pending.pop(0)
        for match in _INCLUDE.finditer(text):
            quoted, angled, _ = match.groups()
            line = text.count("\n", 0, match.start()) + 1
            if quoted is None and angled is None:
                raise PatternError(f"{where} line {line}", "an #include of a file a macro "
                                                           "names cannot be checked before "
                                                           "the compile; name the file")
            name = quoted if quoted is not None else angled
            path = _resolve(name, [folder] * (quoted is not None) + search + system)
            if path is None and (os.path.isabs(name) or ".." in Path(name).parts):
                # the compiler may look further (beside the files that include this one)
                raise PatternError(f"{where} line {line}", f"cannot find the include "
                                                           f"{printable(repr(name))}")
            if path is None or path in found or any(lies_in(path, d) for d in system):
                continue
            if not roots.allows(path):
                raise outside_root(os.path.normpath(name if os.path.isabs(name)
                                                    else folder / name))
            found.append(path)
            if len(found) > MAX_FILES:
                raise PatternError(where, f"the source includes over {MAX_FILES} files")
            pending.append((read_text(path, "include"), Path(path).parent,
                            printable(os.path.basename(path))))
    return found


def _resolve(name: str, folders: list[Path]) -> str | None:
    """The real path of the first `folder / name` that is a file (`name` itself when it is
    absolute); None when there is none (the compiler then says it cannot find it)."""
    for candidate in [Path(name)] if os.path.isabs(name) else [f / name for f in folders]:
        if candidate.is_file():
            return os.path.realpath(candidate)
    return None
