"""The include policy, one for both compilers: what a compile may read, and that what lies
outside the pattern's root can never change a number or a message.

Before any compiler runs, the main source and, recursively, every file of the root it
includes by name are read as the preprocessor reads them (pptokens.py: splices, comments,
digraphs and trigraphs as the compiler takes them, inactive branches included, so a refusal
errs on the safe side), and:
- an `#include` (`include_next`, `import`, `embed`) of a name is looked up as the compiler
  looks it up among the root's folders (beside the including file for a quoted name, then
  the -I folders); a file found there must be a regular file under the size cap (a FIFO or
  device is refused before the compiler opens it) and is read in turn. A lookup that would
  leave the root (an absolute path elsewhere, a link inside the root to a file outside, a
  name with `..` not found inside the root) is refused whether or not the file exists;
- `__has_include` (and `__has_include_next`, `__has_embed`) must name its file literally and
  is checked likewise, so its answer depends only on the root and the compiler's own
  headers; an identifier that could be pasted into one (`__has_`) is refused, but in a `##`
  chain of a `#define` whose first operand is neither a parameter nor such a piece (the
  pasted name starts with that operand: `block_sum_##T##_##U`), and `_` or `__` (CuTe's
  placeholder) unless identifiers of the compile's texts, pasted, could spell such a name
  (`_`, `has`, `_`, `include`); the pattern's `-D` values are checked as a file of the root is;
  a `#pragma GCC dependency` (which tells whether a file exists) must name its file
  literally and is checked likewise, and `dependency` where a macro could make it one
  (followed by a string, an identifier or the line's end) is refused;
- an include whose file a macro names cannot be looked up before the compile: NVRTC, which
  cannot list what it read, refuses it; nvcc's own listing (nvcc.py: `-M` and `-H`) checks
  every file it opened, and the files of the root among them get the checks above.
Every path of the root looked up is recorded with whether it was a file, so that a cached
compile is used only while each lookup would give the same answer (ptxcache.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ...model.errors import PatternError, printable
from ...model.files import Roots, lies_in, read_text
from .pptokens import Token, Tokens, token_readings

HAS_INCLUDE = ("__has_include", "__has_include_next", "__has_include__", "__has_embed")
INCLUDES = ("include", "include_next", "import", "embed")
MAX_FILES = 4096  # included files of the root one compile may read
_PASTE_PIECES = {name[:i] for name in HAS_INCLUDE for i in range(1, len(name))} - \
    set(HAS_INCLUDE)
# Identifiers that could be pieces of a pasted __has_include name (its substrings): where a
# lone `_` or `__` (CuTe's placeholder) stands, the name must not be made of those a
# compile's texts hold, in any order and number.
_SUBSTRINGS = {name[i:j] for name in HAS_INCLUDE for i in range(len(name))
               for j in range(i + 1, len(name) + 1)}


def _pasted_from(pieces: set[str]) -> str | None:
    """A __has_include name that two or more of `pieces` pasted together spell, or None."""
    for name in HAS_INCLUDE:
        spelled = [False] * (len(name) + 1)  # spelled[i]: name[:i] is a paste of pieces
        spelled[0] = True
        for end in range(1, len(name) + 1):
            spelled[end] = any(spelled[start] and name[start:end] in pieces
                               for start in range(end) if (start, end) != (0, len(name)))
        if spelled[-1]:
            return name
    return None


@dataclass
class Scan:
    """What the policy found: the real paths of the root's files read (first met first) and
    every path of the root looked up, with whether it was a file."""

    files: list[str] = field(default_factory=list)
    lookups: dict[str, bool] = field(default_factory=dict)
    underscores: str | None = None  # where a `_` or `__` first stands that may start a paste
    pieces: set[str] = field(default_factory=set)  # identifiers that are pieces of one


class IncludePolicy:
    """The checks above over one compile's files. `search`: the -I folders (inside the
    roots), `system`: the compiler's own header folders, `macro_includes`: whether an
    include whose file a macro names is left to the compiler's listing (nvcc)."""

    def __init__(self, roots: Roots, search: list[Path], system: list[Path],
                 macro_includes: bool):
        self.roots, self.search, self.system = roots, search, system
        self.macro_includes = macro_includes
        self.scan = Scan()

    def check_source(self, text: str, folder: Path, where: str) -> Scan:
        """Check `text` (the main source, lying in `folder`, named `where` in errors) and the
        root's files it includes -> the scan so far."""
        pending = [(text, folder, where)]
        while pending:
            text, folder, where = pending.pop(0)
            for path in self._check_text(text, folder, where):
                if path not in self.scan.files:
                    self.scan.files.append(path)
                    if len(self.scan.files) > MAX_FILES:
                        raise PatternError(where, f"the source includes over {MAX_FILES} "
                                                  "files")
                    pending.append((read_text(path, "include"), Path(path).parent,
                                    printable(os.path.basename(path))))
        underscore = self.scan.underscores
        spelled = _pasted_from(self.scan.pieces) if underscore else None
        if underscore and spelled:
            raise PatternError(underscore, "the identifier '_' could be pasted "
                               f"with others of the source into {spelled}; rename it")
        return self.scan

    def check_file(self, path: str) -> None:
        """Check a file of the root that the compiler says it read (and what it includes)."""
        if path not in self.scan.files:
            self.scan.files.append(path)
            self.check_source(read_text(path, "include"), Path(path).parent,
                              printable(os.path.basename(path)))

    def _check_text(self, text: str, folder: Path, where: str) -> list[str]:
        """One file's checks -> the root's files it includes by name."""
        found: list[str] = []
        for reading in token_readings(text):
            for name, rest in reading.directives():
                if name in INCLUDES:
                    found += self._include(reading, rest, folder, where)
                elif name == "pragma":
                    self._pragma(reading, rest, folder, where)
            self._identifiers(reading, folder, where)
        return found

    def _include(self, reading: Tokens, rest: list[Token], folder: Path,
                 where: str) -> list[str]:
        header = _header_name(reading, rest, 0)
        line = rest[0].line if rest else 1
        if header is None:
            if self.macro_includes:
                return []
            raise PatternError(f"{where} line {line}", "an #include of a file a macro names "
                                                       "cannot be checked before the compile; "
                                                       "name the file")
        name, quoted, _ = header
        path = self.look_up(name, quoted, folder, f"{where} line {line}")
        return [] if path is None else [path]

    def _pragma(self, reading: Tokens, rest: list[Token], folder: Path, where: str) -> None:
        """`#pragma GCC dependency "FILE"`: FILE is looked up as an include is."""
        words = [t.text for t in rest[:2]]
        if words == ["GCC", "dependency"]:
            header = _header_name(reading, rest, 2)
            place = f"{where} line {rest[0].line}"
            if header is None:
                raise PatternError(place, "a #pragma GCC dependency must name its file")
            self.look_up(header[0], True, folder, place, "#pragma GCC dependency of")

    def _identifiers(self, reading: Tokens, folder: Path, where: str) -> None:
        """__has_include with a literal name, checked; pieces that could be pasted into one,
        and `dependency` outside a `#pragma GCC dependency` line, refused."""
        toks = reading.tokens
        for i, tok in enumerate(toks):
            if tok.kind != "ident":
                continue
            place = f"{where} line {tok.line}"
            if tok.text in _SUBSTRINGS:
                self.scan.pieces.add(tok.text)
            if tok.text in HAS_INCLUDE:
                if i + 1 >= len(toks) or toks[i + 1].text != "(":
                    raise PatternError(place, f"{tok.text} must be followed by ( and a file "
                                              "name")
                header = _header_name(reading, toks[i + 2:], 0)
                if header is None:
                    raise PatternError(place, f"a {tok.text} of a file a macro names cannot "
                                              "be checked before the compile; name the file")
                self.look_up(header[0], header[1], folder, place, f"{tok.text} of")
            elif tok.text in ("_", "__") and not _pasted_after_a_fixed_start(toks, i):
                self.scan.underscores = self.scan.underscores or place  # checked at the end
            elif tok.text in _PASTE_PIECES and not _pasted_after_a_fixed_start(toks, i):
                raise PatternError(place, f"the identifier {tok.text!r} could be pasted into "
                                          "__has_include; rename it")
            elif tok.text == "dependency" and not _in_pragma_dependency(toks, i) and \
                    _could_name_a_file(toks, i + 1):
                raise PatternError(place, "'dependency' followed by what could name a file "
                                          "could form a #pragma GCC dependency; rename it")
            elif tok.text == "_Pragma" and i + 2 < len(toks) and \
                    "dependency" in toks[i + 2].text:
                raise PatternError(place, "a _Pragma naming a dependency is not allowed")

    def look_up(self, name: str, quoted: bool, folder: Path, place: str,
                what: str = "an #include of") -> str | None:
        """Where the compiler finds `name` among the root's folders (beside the including
        file when `quoted`, then along the -I folders) -> its real path, or None when the
        compiler would look on in its own folders; PatternError when the lookup would leave
        the root, whether or not the file exists (`what` names the lookup in it). Each path
        looked at is recorded."""
        if "\x00" in name or not name:
            raise PatternError(place, f"cannot read the include name {printable(repr(name))}")
        if os.path.isabs(name):
            if self._compiler_header(name):
                return None
            candidates = [Path(name)]
        else:
            candidates = [f / name for f in [folder] * quoted + self.search]
        for candidate in candidates:
            real = os.path.realpath(candidate)
            if not self.roots.allows(real):
                if self._compiler_header(real):
                    return None
                raise PatternError(place, f"{what} {printable(repr(name))}, outside the "
                                          "pattern's root; refused")
            exists = holds_file(real)
            self.scan.lookups[real] = exists
            if exists:
                return real
        if os.path.isabs(name) or ".." in Path(name).parts:
            raise PatternError(place, f"{what} {printable(repr(name))}: not found in the "
                                      "pattern's root (a name with .. or an absolute path is "
                                      "not looked for elsewhere)")
        return None

    def _compiler_header(self, path: str) -> bool:
        return any(lies_in(path, d) for d in self.system)


def holds_file(path: str) -> bool:
    """Whether a lookup finds a file at `path` (anything but a folder: a FIFO is found, then
    refused when read); the PTX cache asks the same question again of a stored lookup."""
    return os.path.exists(path) and not os.path.isdir(path)


def _header_name(reading: Tokens, toks: list[Token] | tuple[Token, ...],
                 at: int) -> tuple[str, bool, int] | None:
    """The file name at `toks[at]`: ("name", quoted, index after it) for `"name"` or
    `<name>`; None for anything else (a macro)."""
    if at >= len(toks):
        return None
    first = toks[at]
    if first.kind == "string" and first.text.startswith('"') and first.text.endswith('"') \
            and len(first.text) >= 2:
        return first.text[1:-1], True, at + 1
    if first.text == "<":
        for j in range(at + 1, len(toks)):
            if toks[j].text == ">":
                return reading.text[first.end:toks[j].start], False, j + 1
            if toks[j].kind == "newline":
                break
    return None


def _could_name_a_file(toks: tuple[Token, ...], i: int) -> bool:
    """Whether toks[i], the token after `dependency`, could start a file name once macros
    are expanded and stringified: a string, `<`, an identifier, `#`, or the line's end (the
    name then comes where a macro holding `dependency` is used)."""
    if i >= len(toks):
        return True
    return toks[i].kind in ("string", "ident", "newline") or toks[i].text in ("<", "#")


def _in_pragma_dependency(toks: tuple[Token, ...], i: int) -> bool:
    """Whether toks[i] (`dependency`) follows `# pragma GCC` at a line's start."""
    return i >= 3 and [t.text for t in toks[i - 3:i]] == ["#", "pragma", "GCC"] and \
        (i == 3 or toks[i - 4].kind == "newline")


def _pasted_after_a_fixed_start(toks: tuple[Token, ...], at: int) -> bool:
    """Whether the token at `at` is a later operand of a `##` chain in a #define's body
    whose first operand is an identifier or number that is no parameter of the macro, no
    piece of a __has_include name and no such name: the pasted name then starts with it,
    so it cannot be one (a parameter may be empty, or anything its argument spells)."""
    first = at
    while first >= 2 and toks[first - 1].text == "##":
        first -= 2
    start = toks[first]
    if first == at or start.kind not in ("ident", "number") or \
            start.text in _PASTE_PIECES or start.text in HAS_INCLUDE:
        return False
    params = _define_parameters(toks, first)
    return params is not None and start.text not in params


def _define_parameters(toks: tuple[Token, ...], at: int) -> set[str] | None:
    """The parameters of the #define whose body holds the token at `at` (empty for an
    object-like macro; `__VA_ARGS__` counts as one), None outside a #define's body."""
    line_start = at
    while line_start > 0 and toks[line_start - 1].kind != "newline":
        line_start -= 1
    head = toks[line_start:line_start + 3]
    if len(head) < 3 or [t.text for t in head[:2]] != ["#", "define"] or \
            head[2].kind != "ident" or line_start + 2 >= at:
        return None
    name, after = head[2], line_start + 3
    if after >= len(toks) or toks[after].text != "(" or toks[after].start != name.end:
        return set()  # object-like: its body starts after the name
    params = {"__VA_ARGS__"}
    for k in range(after + 1, at):
        if toks[k].text == ")":
            return params
        if toks[k].kind == "ident":
            params.add(toks[k].text)
    return None  # `at` lies in the parameter list
