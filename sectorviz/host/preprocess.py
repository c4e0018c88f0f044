"""A .cu file and the files it `#include`s -> one text for tree-sitter, with a map back to
the files the user wrote.

What runs before parsing: `#include "file"` (relative to the including file, then the
pattern's folder, then the user's include folders; recursively, with `#pragma once` and
include guards; only inside the pattern's roots (files.Roots): a path that leaves them is
refused, never opened nor probed, and `__has_include` of it is 0), and
the conditionals `#if` / `#ifdef` / `#ifndef` / `#elif` / `#else` / `#endif` on integer
expressions (with `defined`), which need `#define` / `#undef` tracked in order.
Angle-bracket includes are skipped, and so is a CUDA toolkit header named in quotes
(`#include "cuda_runtime.h"`, TOOLKIT_HEADERS, as editors' CUDA templates write it);
`__align__(N)` becomes the `alignas(N)` the grammar
reads. Everything else stays for the compiler: `#define` and `#undef` lines are kept (macros
are expanded where they are used, so an instruction's text is the text the user wrote);
inactive lines and other directives are left blank, so every kept line keeps its line and
column. An included file's lines are placed where it is included; `Source.place` maps a line
of the combined text back to `line L` (the main file) or `name line L` (an included file).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..model.errors import PatternError
from ..model.files import MAX_TEXT_BYTES, Roots, read_text

MAX_INCLUDE_BYTES = 4 * 2**20  # one included file
Fail = Callable[[str], PatternError]  # a message -> the error at the directive's place
# The toolkit's headers that kernels include in quotes as often as in angle brackets.
TOOLKIT_HEADERS = frozenset({
    "cuda.h", "cuda_runtime.h", "cuda_runtime_api.h", "device_launch_parameters.h",
    "cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "cuda_pipeline.h", "cuda_awbarrier.h",
    "cooperative_groups.h", "mma.h", "vector_types.h", "math_constants.h",
    "device_functions.h", "curand_kernel.h"})
MAX_INCLUDE_DEPTH = 40  # files open at once (an include cycle without guards stops here)
MAX_EXPANSION_TOKENS = 100_000  # tokens one `#if` line may expand to
MAX_CONDITION_DEPTH = 100  # parentheses, operators or macros nested in one `#if`
MAX_LINE_CHARS = 65_536  # one physical line of a source or an include, checked before parsing
MAX_SOURCE_TERMS = 1_000_000  # names, numbers and operators in the kept text of all files
_TERM = re.compile(r"\w+|[^\w\s]")

# What nvcc and the CUDA headers define, as far as the subset can use it: the device pass of
# nvcc for compute capability 8.0, and the constants of <cmath>, <cfloat>, <climits>,
# <cstdint>. The compiler parses this text too, for the macros used in code.
PREDEFINED = """\
#define __CUDACC__ 1
#define __NVCC__ 1
#define __CUDA_ARCH__ 800
#define __cplusplus 201703L
#define CUDART_VERSION 12000
#define NULL nullptr
#define INFINITY __int_as_float(0x7f800000)
#define HUGE_VALF __int_as_float(0x7f800000)
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#define NAN __int_as_float(0x7fffffff)
#define CUDART_INF_F __int_as_float(0x7f800000)
#define CUDART_NAN_F __int_as_float(0x7fffffff)
#define CUDART_PI_F 3.141592654f
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_E 2.7182818284590452354
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#define FLT_MAX 3.402823466e+38F
#define FLT_MIN 1.175494351e-38F
#define FLT_EPSILON 1.192092896e-07F
#define DBL_MAX 1.7976931348623158e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-016
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN (-128)
#define CHAR_MAX 127
#define SHRT_MIN (-32768)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295U
#define LONG_MIN (-9223372036854775807L - 1)
#define LONG_MAX 9223372036854775807L
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MIN (-9223372036854775807LL - 1)
#define LLONG_MAX 9223372036854775807LL
#define ULLONG_MAX 18446744073709551615ULL
#define INT8_MIN (-128)
#define INT8_MAX 127
#define UINT8_MAX 255
#define INT16_MIN (-32768)
#define INT16_MAX 32767
#define UINT16_MAX 65535
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295U
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT64_MAX 18446744073709551615ULL
#define SIZE_MAX 18446744073709551615UL
"""


@dataclass(frozen=True)
class Span:
    """Lines from `start` of the combined text (up to the next span) are `file`'s lines from
    `first` on."""

    start: int  # 1-based line of the combined text
    file: str | None  # display name of an included file; None for the main file
    first: int  # that file's line at `start`


@dataclass(frozen=True)
class Source:
    """The combined text tree-sitter parses, and where each of its lines came from."""

    text: str
    spans: tuple[Span, ...]

    def where(self, line: int) -> tuple[str | None, int]:
        """A line of the combined text -> (included file's name or None, that file's line)."""
        starts = [s.start for s in self.spans]
        k = bisect_right(starts, line) - 1
        if k < 0:
            return None, line
        span = self.spans[k]
        return span.file, span.first + line - span.start

    def place(self, line: int) -> str:
        """`line L` for the main file, `name line L` for an included file."""
        file, own = self.where(line)
        return f"line {own}" if file is None else f"{file} line {own}"

    def relocate(self, err: PatternError) -> PatternError:
        """An error at a combined-text `line L` -> the same at the file's line; the lines its
        message refers to ('loaded by ... (line L)', 'set at line L') likewise."""
        found = re.fullmatch(r"line (\d+)", err.place)
        place = err.place if found is None else self.place(int(found.group(1)))
        message = _LINE_REF.sub(lambda m: m.group(1) + self.place(int(m.group(2))), err.message)
        if (place, message) == (err.place, err.message):
            return err
        return PatternError(place, message, err.column)


_LINE_REF = re.compile(r"(\(|\bat )line (\d+)\b")  # how the interpreter's messages cite a line


# ---------------------------------------------------------------- #if expressions

_TOKEN = re.compile(r"\s*(?:(?P<num>0[xX][0-9a-fA-F']+|0[bB][01']+|\d[\d']*)[uUlL]*"
                    r"|(?P<chr>'(?:\\.|[^\\'])')"
                    r"|(?P<id>[A-Za-z_]\w*)"
                    r"|(?P<op><<|>>|<=|>=|==|!=|&&|\|\||[-+*/%<>&|^!~?:(),]))")
_HAS_INCLUDE = re.compile(r"__has_include\s*\(\s*(<[^>]*>|\"[^\"]*\")\s*\)")
_HAS_FEATURE = re.compile(r"__has_\w+\s*\([^()]*\)")  # __has_builtin(x) and the like: 0
_BINARY = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
           ("<<", ">>"), ("+", "-"), ("*", "/", "%")]  # lowest precedence first
_LEVEL = {op: level for level, ops in enumerate(_BINARY) for op in ops}


def _tokens(text: str, fail: Fail) -> list[str]:
    out: list[str] = []
    i = 0
    text = text.rstrip()
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None or m.end() == i:
            if text[i:].strip() == "":
                break
            raise fail(f"cannot read '{text[i:].strip()[:20]}' in a preprocessor condition")
        out.append(m.group(m.lastgroup or 0))
        i = m.end()
    return out


def _number(tok: str) -> int:
    if tok.startswith("'"):
        body = tok[1:-1]
        return ord(body[-1]) if not body.startswith("\\") else \
            {"n": 10, "t": 9, "0": 0, "\\": 92, "'": 39}.get(body[1], ord(body[1]))
    digits = tok.replace("'", "").rstrip("uUlL")
    low = digits.lower()
    base = 16 if low.startswith("0x") else 2 if low.startswith("0b") else \
        8 if low.startswith("0") and len(low) > 1 else 10
    return int(digits, base)


class _Cond:
    """Recursive-descent evaluation of one `#if` line's tokens (macros already expanded)."""

    def __init__(self, toks: list[str], fail: Fail):
        self.toks, self.i, self.fail = toks, 0, fail
        self.depth = 0

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise self.fail(f"expected '{want or 'a value'}' in a preprocessor condition")
        self.i += 1
        return tok

    def value(self) -> int:
        v = self.ternary()
        if self.peek() is not None:
            raise self.fail(f"unexpected '{self.peek()}' in a preprocessor condition")
        return v

    def ternary(self) -> int:
        c = self.binary()
        if self.peek() != "?":
            return c
        self.take("?")
        self.enter()
        a = self.ternary()
        self.take(":")
        b = self.ternary()
        self.depth -= 1
        return a if c else b

    def enter(self) -> None:
        """One level deeper (the evaluation recurses); refused past MAX_CONDITION_DEPTH."""
        self.depth += 1
        if self.depth > MAX_CONDITION_DEPTH:
            raise self.fail(f"a preprocessor condition nested more than "
                            f"{MAX_CONDITION_DEPTH} levels deep")

    def binary(self, lowest: int = 0) -> int:
        """Precedence climbing over _BINARY's levels (low to high), left to right."""
        left = self.unary()
        while (op := self.peek()) is not None and op in _LEVEL and _LEVEL[op] >= lowest:
            op = self.take()
            left = self.apply(op, left, self.binary(_LEVEL[op] + 1))
        return left

    def apply(self, op: str, a: int, b: int) -> int:
        if op in ("/", "%"):
            if b == 0:
                raise self.fail("division by zero in a preprocessor condition")
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            return q if op == "/" else a - q * b
        if op in ("<<", ">>") and not 0 <= b < 64:
            raise self.fail("shift count outside [0, 64) in a preprocessor condition")
        return int({"||": lambda: bool(a or b), "&&": lambda: bool(a and b),
                    "|": lambda: a | b, "^": lambda: a ^ b, "&": lambda: a & b,
                    "==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b,
                    ">": lambda: a > b, "<=": lambda: a <= b, ">=": lambda: a >= b,
                    "<<": lambda: a << b, ">>": lambda: a >> b, "+": lambda: a + b,
                    "-": lambda: a - b, "*": lambda: a * b}[op]())

    def unary(self) -> int:
        tok = self.take()
        if tok in ("-", "+", "!", "~", "("):
            self.enter()
        if tok in ("-", "+", "!", "~"):
            v = self.unary()
            self.depth -= 1
            return {"-": -v, "+": v, "!": int(not v), "~": ~v}[tok]
        if tok == "(":
            v = self.ternary()
            self.take(")")
            self.depth -= 1
            return v
        if tok[0].isdigit() or tok[0] == "'":
            try:
                return _number(tok)
            except ValueError:
                raise self.fail(f"cannot read the number {tok!r}") from None
        if tok[0].isalpha() or tok[0] == "_":
            return 1 if tok == "true" else 0  # an identifier left after expansion is 0
        raise self.fail(f"unexpected '{tok}' in a preprocessor condition")


# ---------------------------------------------------------------- lines and comments


def _strip_comments(line: str, in_comment: bool) -> tuple[str, bool]:
    """One physical line -> (its code with comments removed, inside /* */ after it)."""
    out: list[str] = []
    i, n = 0, len(line)
    while i < n:
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_comment = end + 2, False
            out.append(" ")
            continue
        c = line[i]
        if c in "\"'":
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            out.append(line[i:j + 1])
            i = j + 1
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_comment, i = True, i + 2
        else:
            out.append(c)
            i += 1
    return "".join(out), in_comment


_ALIGN = re.compile(r"\b__align__(?=\s*\()")


def _alignas(line: str) -> str:
    """`__align__(16)` (which the grammar cannot read) -> `alignas  (16)`, same columns."""
    return _ALIGN.sub("alignas  ", line) if "__align__" in line else line


_DIRECTIVE = re.compile(r"\s*#\s*([A-Za-z_]\w*)?(.*)$", re.S)
_INCLUDE = re.compile(r'\s*(?:"([^"]*)"|<([^>]*)>)\s*$')
_DEFINE = re.compile(r"\s*([A-Za-z_]\w*)(\([^)]*\))?(.*)$", re.S)


@dataclass
class _Frame:
    """One open `#if`: was an arm taken yet, is the current arm active, was #else seen."""

    outer: bool  # the lines around the #if are active
    taken: bool
    active: bool
    seen_else: bool = False


class _Preprocessor:
    def __init__(self, roots: Roots, main: Path | None):
        self.roots = roots
        self.home = main.parent if main is not None else roots.base  # names shown from here
        self.macros: dict[str, tuple[tuple[str, ...] | None, str]] = {}
        self.once: set[str] = set()
        self.lines: list[str] = []
        self.spans: list[Span] = []
        self.size = 0
        self.terms = 0
        self.depth = 0
        self._file(PREDEFINED, "<predefined>", None, emit=False)

    # ------------------------------------------------------------ files

    def _file(self, text: str, name: str | None, path: Path | None, emit: bool = True) -> None:
        """Run one file's lines; `name` is its display name (None: the main file)."""
        self.depth += 1
        raw = text.replace("\ufeff", " ", 1).replace("\r\n", "\n").split("\n")
        stack: list[_Frame] = []
        in_comment = False
        i = 0
        self._span(name, 1, emit)
        for k, line in enumerate(raw):
            if len(line) > MAX_LINE_CHARS:
                raise PatternError(self._place(name, k + 1), f"a line of {len(line):,} "
                                   f"characters; at most {MAX_LINE_CHARS:,} are read")
        while i < len(raw):
            active = not stack or stack[-1].active
            if active and emit:
                self._count_terms(raw[i], name, i + 1)
            code, after = _strip_comments(raw[i], in_comment)
            found = None if in_comment else _DIRECTIVE.match(code)
            if found is None:
                self._emit(_alignas(raw[i]) if active else "", emit)
                in_comment, i = after, i + 1
                continue
            first, logical = i, code  # a directive, with its continuation lines
            while raw[i].endswith("\\") and i + 1 < len(raw):
                i += 1
                more, after = _strip_comments(raw[i], after)
                logical = logical.rstrip("\\") + " " + more
            in_comment, i = after, i + 1
            place = self._place(name, first + 1)
            col = len(raw[first]) - len(raw[first].lstrip()) + 1

            def fail(message: str, place: str = place, col: int = col) -> PatternError:
                return PatternError(place, message, col)

            directive, rest = _DIRECTIVE.match(logical.rstrip("\\")).groups()  # type: ignore[union-attr]
            directive = directive or ""
            if directive == "include" and active:
                target = self._resolve(rest, path, fail)
                for _ in range(first, i):
                    self._emit("", emit)
                if target is not None:
                    self._include(target, fail)
                    self._span(name, i + 1, emit)
                continue
            kept = self._directive(directive, rest, stack, active, path, fail)
            for k in range(first, i):
                self._emit(raw[k] if kept else "", emit)
        if stack:
            raise PatternError(self._place(name, len(raw)), "#if without #endif")
        self.depth -= 1

    def _count_terms(self, line: str, name: str | None, number: int) -> None:
        """Count the terms of a kept line; past MAX_SOURCE_TERMS in all, an error at it."""
        self.terms += len(_TERM.findall(line))
        if self.terms > MAX_SOURCE_TERMS:
            raise PatternError(self._place(name, number), f"the source and its includes "
                               f"hold over {MAX_SOURCE_TERMS:,} terms (names, numbers, "
                               "operators); at most that many are parsed")

    def _include(self, path: Path, fail: Fail) -> None:
        """The lines of an included file, where it is included (once if it says so)."""
        if os.path.realpath(path) in self.once:
            return
        if self.depth >= MAX_INCLUDE_DEPTH:
            raise fail(f"includes nested more than {MAX_INCLUDE_DEPTH} deep (an include "
                       "cycle without an include guard?)")
        try:
            text = read_text(path, "include", MAX_INCLUDE_BYTES, self.roots)
        except PatternError as err:
            raise fail(err.message) from None
        self.size += len(text)
        if self.size > MAX_TEXT_BYTES:
            raise fail(f"the source and its includes are over {MAX_TEXT_BYTES:,} bytes")
        shown = os.path.relpath(path, self.home)
        self._file(text, path.name if shown.startswith("..") else shown, path)

    def _resolve(self, rest: str, path: Path | None, fail: Fail) -> Path | None:
        """`"file"` -> its path (the first of _candidates that exists); `<file>` or a
        toolkit header in quotes -> None: the toolkit's and the standard library's headers
        are not read. A name whose every candidate leaves the roots is refused."""
        found = _INCLUDE.match(rest)
        if found is None:
            raise fail("an #include names a file in quotes or angle brackets")
        quoted = found.group(1)
        if quoted is None or quoted in TOOLKIT_HEADERS:
            return None
        inside = self._candidates(quoted, path)
        for candidate in inside:
            if os.path.lexists(candidate):
                return candidate
        if not inside:
            err = self.roots.refusal(f'the include "{quoted}"', "")
            raise fail(err.message)
        raise fail(f"cannot find the include \"{quoted}\" (looked in the including file's "
                   "folder, the pattern's folder and the include folders)")

    def _candidates(self, quoted: str, path: Path | None) -> list[Path]:
        """Where `#include "quoted"` may be, in order (the including file's folder, the
        pattern's, the include folders), less those outside the roots (never probed)."""
        here = path.parent if path is not None else self.roots.base
        folders = dict.fromkeys((here, self.roots.base, *self.roots.folders[1:]))
        return [folder / quoted for folder in folders if self.roots.allows(folder / quoted)]

    def _span(self, name: str | None, first: int, emit: bool) -> None:
        if emit:
            self.spans.append(Span(len(self.lines) + 1, name, first))

    def _emit(self, line: str, emit: bool) -> None:
        if emit:
            self.lines.append(line)

    @staticmethod
    def _place(name: str | None, line: int) -> str:
        return f"line {line}" if name is None else f"{name} line {line}"

    # ------------------------------------------------------------ directives

    def _directive(self, directive: str, rest: str, stack: list[_Frame], active: bool,
                   path: Path | None, fail: Fail) -> bool:
        """Act on one directive -> True if its lines stay in the text for the compiler."""
        if directive in ("if", "ifdef", "ifndef"):
            if not active:
                stack.append(_Frame(False, True, False))
                return False
            value = self._condition(directive, rest, path, fail)
            stack.append(_Frame(True, value, value))
            return False
        if directive in ("elif", "else", "endif"):
            if not stack:
                raise fail(f"#{directive} without #if")
            top = stack[-1]
            if directive == "endif":
                stack.pop()
            elif top.seen_else:
                raise fail(f"#{directive} after #else")
            elif directive == "else":
                top.seen_else = True
                top.active = top.outer and not top.taken
                top.taken = True
            else:
                top.active = top.outer and not top.taken and \
                    self._condition("if", rest, path, fail)
                top.taken = top.taken or top.active
            return False
        if not active:
            return False
        if directive == "define":
            self._define(rest, fail)
            return True
        if directive == "undef":
            self.macros.pop(rest.strip(), None)
            return True
        if directive == "pragma":
            if rest.split() == ["once"] and path is not None:
                self.once.add(os.path.realpath(path))
                return False
            return True
        if directive == "error":
            raise fail(f"#error{rest.rstrip()}")
        return False  # #line, #warning, an empty `#`

    def _define(self, rest: str, fail: Fail) -> None:
        found = _DEFINE.match(rest)
        if found is None:
            raise fail("#define needs a name")
        name, params, body = found.groups()
        self.macros[name] = (None if params is None else
                             tuple(p.strip() for p in params[1:-1].split(",") if p.strip()),
                             body.strip())

    def _condition(self, directive: str, rest: str, path: Path | None, fail: Fail) -> bool:
        if directive != "if":
            name = rest.strip()
            if not re.fullmatch(r"[A-Za-z_]\w*", name):
                raise fail(f"#{directive} needs one name")
            return (name in self.macros) == (directive == "ifdef")
        rest = _HAS_INCLUDE.sub(lambda m: self._has_include(m.group(1), path), rest)
        rest = _HAS_FEATURE.sub("0", rest)
        toks = self._expand(_tokens(rest, fail), fail)
        if not toks:
            raise fail("#if needs a condition")
        return _Cond(toks, fail).value() != 0

    def _has_include(self, header: str, path: Path | None) -> str:
        """`__has_include(<h>)` -> 1 (a toolkit or system header, there in a real build);
        `__has_include("h")` -> whether the file is where #include would look (0 outside
        the roots, where nothing is probed)."""
        if header.startswith("<") or header[1:-1] in TOOLKIT_HEADERS:
            return "1"
        return "1" if any(os.path.isfile(c) for c in self._candidates(header[1:-1], path)) \
            else "0"

    def _expand(self, toks: list[str], fail: Fail,
                hidden: frozenset[str] = frozenset()) -> list[str]:
        """`defined` resolved, then macros expanded (a macro is not expanded inside itself);
        at most MAX_EXPANSION_TOKENS tokens."""
        out: list[str] = []
        i = 0
        while i < len(toks):
            tok = toks[i]
            i += 1
            if tok == "defined" and not hidden:
                paren = i < len(toks) and toks[i] == "("
                if paren and (i + 2 >= len(toks) or toks[i + 2] != ")"):
                    raise fail("defined( needs a name and ')'")
                if not paren and i >= len(toks):
                    raise fail("defined needs a name")
                name = toks[i + 1] if paren else toks[i]
                i += 3 if paren else 1
                out.append("1" if name in self.macros else "0")
            elif tok in self.macros and tok not in hidden:
                if len(hidden) >= MAX_CONDITION_DEPTH:
                    raise fail(f"macros nested more than {MAX_CONDITION_DEPTH} levels deep in a "
                               "preprocessor condition")
                params, body = self.macros[tok]
                args: list[list[str]] = []
                if params is not None:
                    if i >= len(toks) or toks[i] != "(":
                        out.append(tok)
                        continue
                    args, i = self._arguments(toks, i, fail)
                    if len(args) != len(params) and not (params == () and args == [[]]):
                        raise fail(f"macro {tok} takes {len(params)} arguments")
                body_toks = []
                for t in _tokens(body, fail):
                    body_toks.extend(args[params.index(t)] if params and t in params else [t])
                out.extend(self._expand(body_toks, fail, hidden | {tok}))
            else:
                out.append(tok)
            if len(out) > MAX_EXPANSION_TOKENS:
                raise fail(f"macros expand to more than {MAX_EXPANSION_TOKENS:,} tokens")
        return out

    @staticmethod
    def _arguments(toks: list[str], i: int, fail: Fail) -> tuple[list[list[str]], int]:
        args: list[list[str]] = []
        cur: list[str] = []
        depth = 0
        i += 1
        while i < len(toks):
            t = toks[i]
            i += 1
            if t == "(":
                depth += 1
            elif t == ")":
                if depth == 0:
                    args.append(cur)
                    return args, i
                depth -= 1
            elif t == "," and depth == 0:
                args.append(cur)
                cur = []
                continue
            cur.append(t)
        raise fail("a macro call without ')'")


def preprocess(text: str, path: str | Path | None, roots: Roots) -> Source:
    """The kernel source `text` (read from `path`, or inline when None) with its includes
    resolved against its own folder, then the pattern's and the include folders, inside
    `roots` -> Source."""
    main = None if path is None else Path(path)
    pre = _Preprocessor(roots, main)
    pre._file(text, None, main)
    return Source("\n".join(pre.lines), tuple(pre.spans))
