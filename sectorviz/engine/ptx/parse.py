"""nvcc's PTX text -> a Module: the `.file` table, module-scope variables and each entry's
parameters, register and variable declarations, labels and instructions, every instruction
with the `.loc` (file, line, column, and the place it was inlined at) in force for it.
Registers may be declared with or without `%`, in the body or in the nested `{ }` blocks of
inline asm, where a name is the block's own register until its `}`.

Sizes are in bytes, alignments in bytes. Anything this reader cannot take is one
PatternError naming the PTX line and its text.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field, replace
from typing import Iterator, cast

from ...model.errors import PatternError
from ...model.sectors import WARP_SIZE

TYPE_BYTES = {"pred": 1, "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2,
              "bf16": 2, "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4,
              "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16, "e4m3x2": 2, "e5m2x2": 2}
SPACES = ("global", "shared", "local", "const", "param")


@dataclass(frozen=True)
class Loc:
    """A source position: `.file` number, line and column (0: none), and where it was
    inlined into (another Loc), as `.loc` gives them."""

    file: int
    line: int
    column: int
    inlined_at: "Loc | None" = None

    def chain(self) -> list["Loc"]:
        """This position and the ones it was inlined at, innermost first."""
        out: list[Loc] = []
        at: Loc | None = self
        while at is not None:
            out.append(at)
            at = at.inlined_at
        return out


@dataclass(frozen=True)
class Operand:
    """One operand: kind "reg" (name), "imm" (value: int, or bits for a float literal with
    `ftype`), "addr" (base register or symbol name, byte offset), "vec" (operands), "sym"
    (a variable or label name), "sink" (`_`)."""

    kind: str
    name: str = ""
    value: int = 0
    offset: int = 0
    parts: tuple["Operand", ...] = ()
    ftype: str = ""  # "f32" / "f64" for 0f / 0d literals
    negated: bool = False  # `!%p` as a source predicate


@dataclass(frozen=True)
class Instruction:
    """One PTX instruction: guard predicate (name, negated) or None, opcode split at dots
    (`ld.global.nc.f32` -> ("ld", "global", "nc", "f32")), operands, the `.loc` in force,
    its text and the PTX line it starts on."""

    guard: tuple[str, bool] | None
    opcode: tuple[str, ...]
    operands: tuple[Operand, ...]
    loc: Loc | None
    text: str
    ptx_line: int
    problem: str | None = None  # why the reader could not take it (refused where it runs)

    @property
    def op(self) -> str:
        return self.opcode[0]

    def has(self, *mods: str) -> bool:
        return any(m in self.opcode[1:] for m in mods)


@dataclass(frozen=True)
class Variable:
    """A `.global`, `.shared`, `.local`, `.const` or `.param` variable: bytes, alignment,
    element type, and initial bytes if it has an initializer (little-endian)."""

    name: str
    space: str
    type: str
    align: int
    size: int  # bytes; 0 for an unsized `extern .shared` array
    init: bytes | None = None
    extern: bool = False


@dataclass
class Entry:
    """A kernel entry or a `.func` body: its parameters (in order; a function's return
    parameters apart), registers (name -> type), variables declared in its body,
    instructions and labels (name -> instruction index)."""

    name: str
    params: list[Variable] = field(default_factory=list)
    returns: list[Variable] = field(default_factory=list)  # a .func's return parameters
    registers: dict[str, str] = field(default_factory=dict)
    register_ranges: dict[str, tuple[str, int]] = field(default_factory=dict)
    variables: list[Variable] = field(default_factory=list)
    instructions: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    ptx_line: int = 0
    cluster: tuple[int, int, int] | None = None  # blocks per cluster (.reqnctapercluster)

    def register_type(self, name: str) -> str | None:
        """A register's declared type: `%r12` from `.reg .b32 %r<29>`, or a plain name."""
        if name in self.registers:
            return self.registers[name]
        m = re.fullmatch(r"(%?[A-Za-z_$][\w$]*?)(\d+)", name)
        if m and m.group(1) in self.register_ranges:
            t, count = self.register_ranges[m.group(1)]
            if int(m.group(2)) < count:
                return t
        return None


@dataclass
class Module:
    """A PTX module: `.file` number -> path, module-scope variables, entries by name, the
    `.func` bodies by name, and the `.target` architecture ("sm_90", "sm_90a"; "" where the
    PTX names none)."""

    files: dict[int, str] = field(default_factory=dict)
    variables: list[Variable] = field(default_factory=list)
    entries: dict[str, Entry] = field(default_factory=dict)
    functions: dict[str, Entry] = field(default_factory=dict)
    target: str = ""


class PtxError(PatternError):
    """A PTX construct the reader or the engine cannot take, at a PTX line."""


def ptx_error(line: int, text: str, message: str) -> PtxError:
    return PtxError(f"PTX line {line}", f"{message}: {text}")


Piece = tuple[str, int]  # a statement's text and its PTX line

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LOC = re.compile(r"\.loc\s+(\d+)\s+(\d+)\s+(\d+)(.*)")
_INLINED = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")
_FILE = re.compile(r'\.file\s+(\d+)\s+"((?:[^"\\]|\\.)*)"')
_LABEL = re.compile(r"([$%\w.]+)\s*:(?!:)")
_DECL = re.compile(r"((?:\.(?:extern|visible|weak|common)\s+)*)\.(global|shared|local|const|param)"
                   r"\s+(?:\.align\s+(\d+)\s+)?(?:\.ptr\s+\.\w+\s+\.align\s+\d+\s+)?"
                   r"\.(\w+)(?:\s+\.ptr(?:\s+\.(?:global|shared|local|const))?\s+\.align\s+\d+)?"
                   r"\s+([\w$]+)((?:\s*\[\s*\d*\s*\])*)\s*(?:=\s*(.*))?$", re.S)
_REG = re.compile(r"\.reg\s*(?:\.v\d\s*)?\.(\w+)\s+(.*)$", re.S)


LINE_DIRECTIVES = (".loc", ".file", ".section", ".version", ".target", ".address_size",
                   ".maxntid", ".reqntid", ".minnctapersm", ".maxnreg", ".explicitcluster",
                   ".reqnctapercluster", ".maxclusterrank", ".noreturn")
_LINE_DIRECTIVE = re.compile("(?:" + "|".join(re.escape(d) for d in LINE_DIRECTIVES) + r")\b")
_HEADER = re.compile(r"(?:\.(?:visible|weak|extern)\s+)*\.(?:entry|func)\b")


def _strip_comments(text: str) -> str:
    """Comments blanked out, newlines kept (so PTX line numbers stay right)."""
    return _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def _statements(text: str, first_line: int) -> Iterator[Piece]:
    """Text -> (statement text, PTX line) pieces: `;`-ended statements, labels, `.loc` and
    `.file` lines (which end at the line end), and `{` / `}` of scopes."""
    pos, line, n = 0, first_line, len(text)
    while pos < n:
        while pos < n and text[pos] in " \t\r\n":
            line += text[pos] == "\n"
            pos += 1
        if pos >= n:
            return
        c = text[pos]
        if c in "{}":
            yield c, line
            pos += 1
            continue
        head = _HEADER.match(text, pos)
        if head:
            end, depth = pos, 0
            while end < n and not (text[end] in "{;" and depth == 0):
                depth += text[end] == "("
                depth -= text[end] == ")"
                end += 1
            piece = text[pos:end]
            yield " ".join(piece.split()), line
            line += piece.count("\n")
            pos = end + (end < n and text[end] == ";")
            continue
        if _LINE_DIRECTIVE.match(text, pos):
            end = text.find("\n", pos)
            end = n if end < 0 else end
            yield text[pos:end].strip().rstrip(";"), line
            pos = end
            continue
        m = _LABEL.match(text, pos)
        if m and not text.startswith(".", pos):
            yield m.group(0), line
            pos = m.end()
            continue
        end, depth = pos, 0
        while end < n and not (text[end] == ";" and depth == 0):
            depth += text[end] in "{[("
            depth -= text[end] in "}])"
            end += 1
        piece = text[pos:end]
        yield " ".join(piece.split()), line
        line += piece.count("\n")
        pos = end + 1


def parse_module(text: str) -> Module:
    """PTX text -> Module. Debug sections are skipped; `.func` bodies are read as entries
    are (calls.py inlines them where they are called)."""
    text = _strip_comments(text)
    module = Module()
    pieces = list(_statements(text, 1))
    i = 0
    while i < len(pieces):
        s, line = pieces[i]
        if s.startswith(".section"):
            i = _skip_scope(pieces, i + 1)
            continue
        if s.startswith(".file"):
            m = _FILE.match(s)
            if m:
                module.files[int(m.group(1))] = m.group(2).encode().decode("unicode_escape")
            i += 1
            continue
        if re.match(r"(?:\.\w+\s+)*\.(entry|func)\b", s):
            i = _function(module, pieces, i)
            continue
        if s.startswith(".target"):
            module.target = next(iter(re.findall(r"\bsm_\w+", s)), "")
            i += 1
            continue
        if s in ("{", "}") or re.match(r"\.(version|address_size)\b", s):
            i += 1
            continue
        var = _variable(s, line)
        if var is None:
            raise ptx_error(line, s, "not a PTX declaration this reader takes")
        module.variables.append(var)
        i += 1
    return module


def _skip_scope(pieces: list[Piece], i: int) -> int:
    """Index past the `{ ... }` scope that starts at pieces[i] (if one does)."""
    if i >= len(pieces) or pieces[i][0] != "{":
        return i
    depth = 0
    while i < len(pieces):
        depth += pieces[i][0] == "{"
        depth -= pieces[i][0] == "}"
        i += 1
        if depth == 0:
            return i
    return i


def _function(module: Module, pieces: list[Piece], i: int) -> int:
    """Read an `.entry` or a `.func` (its return parameters, parameters and body; a
    prototype without a body is only named) starting at pieces[i]."""
    s, line = pieces[i]
    # parse_module only calls this on a piece that names .entry or .func
    kind = cast("re.Match[str]", re.search(r"\.(entry|func)\b", s)).group(1)
    head = s[s.index(kind) + len(kind):].strip()
    m = re.match(r"(?:\(([^)]*)\)\s*)?([\w$]+)\s*(?:\((.*?)\))?", head, re.S)
    if not m or (kind == "entry" and m.group(1)):
        raise ptx_error(line, s, f"an {kind} this reader cannot take")
    entry = Entry(m.group(2), ptx_line=line, cluster=_cluster_shape(s))
    entry.returns = _parameters(m.group(1), line)
    entry.params = _parameters(m.group(3), line)
    i += 1
    if i >= len(pieces) or pieces[i][0] != "{":
        return i  # a prototype
    end = _skip_scope(pieces, i)
    _body(entry, pieces[i + 1:end - 1])
    (module.entries if kind == "entry" else module.functions)[entry.name] = entry
    return end


def _parameters(text: str | None, line: int) -> list[Variable]:
    """`.param .u64 a, .param .b32 b` -> their Variables."""
    out = []
    for p in (x.strip() for x in (text or "").split(",")):
        if p:
            var = _variable(p, line)
            if var is None:
                raise ptx_error(line, p, "a parameter this reader cannot take")
            out.append(var)
    return out


@dataclass
class _Scopes:
    """The `{ }` scopes open in an entry body, outermost (the body itself) first: each maps
    the register and `.param` variable names declared in it to the names the entry keeps
    them under (and whether each is a register). A name declared in a nested scope (inline
    asm's `{.reg.b32 f, C, nZ; ...}`, a call sequence's `{.param .b64 param0; ...}`) is kept
    as `name@k`, k counting the entry's nested scopes from 1, so blocks that redeclare a
    name (with another type) each have their own."""

    open: list[dict[str, tuple[str, bool]]] = field(default_factory=lambda: [{}])
    opened: int = 0

    def enter(self) -> None:
        self.opened += 1
        self.open.append({})

    def leave(self) -> None:
        if len(self.open) > 1:
            self.open.pop()

    def declare(self, name: str, register: bool = True) -> str:
        """A name declared in the innermost scope -> the name the entry keeps it under."""
        kept = name if len(self.open) == 1 else f"{name}@{self.opened}"
        self.open[-1][name] = (kept, register)
        return kept

    def lookup(self, name: str) -> tuple[str, bool] | None:
        """A name -> (what it names where a scope declares it (innermost first), whether
        that is a register)."""
        return next((scope[name] for scope in reversed(self.open) if name in scope), None)


def _cluster_shape(header: str) -> tuple[int, int, int] | None:
    """An entry's `.reqnctapercluster x[, y[, z]]` -> (x, y, z) blocks per cluster."""
    m = re.search(r"\.reqnctapercluster\s+(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?", header)
    if m is None:
        return None
    x, y, z = (int(g) if g else 1 for g in m.groups())
    return x, y, z


def _body(entry: Entry, pieces: list[Piece]) -> None:
    loc: Loc | None = None
    seen: dict[tuple[int, int, int], Loc] = {}  # position -> its last .loc, with its parents
    scopes = _Scopes()
    for s, line in pieces:
        if s == "{":
            scopes.enter()
            continue
        if s == "}":
            scopes.leave()
            continue
        if re.match(r"\.loc\b", s):
            loc = _loc(s, seen) or loc
            continue
        if s.startswith(".reg"):
            _registers(entry, scopes, s, line)
            continue
        if s.startswith(".pragma") or _LINE_DIRECTIVE.match(s):
            continue
        if s.endswith(":") and _LABEL.fullmatch(s):
            entry.labels[s[:-1].strip()] = len(entry.instructions)
            continue
        if re.match(r"(?:\.\w+\s+)*\.(global|shared|local|const|param)\b", s):
            var = _variable(s, line)
            if var is None:
                raise ptx_error(line, s, "a declaration this reader cannot take")
            if var.space == "param":
                var = replace(var, name=scopes.declare(var.name, register=False))
            entry.variables.append(var)
            continue
        try:
            entry.instructions.append(_scoped_registers(_instruction(s, line, loc), scopes))
        except PtxError as err:  # refused where it runs, at its source line
            head = s.split()[0] if not s.startswith("@") else s.split()[1]
            entry.instructions.append(Instruction(None, tuple(head.split(".")), (), loc, s,
                                                  line, err.message.split(":")[0]))


def _scoped_registers(ins: Instruction, scopes: _Scopes) -> Instruction:
    """Operands, address bases and the guard that name a register or a `.param` variable an
    open scope declares -> that one (a name declared without `%`, as inline asm's
    `.reg .f16 low;`, reads as a register, not as a variable's address)."""
    def fix(op: Operand) -> Operand:
        found = scopes.lookup(op.name) if op.kind in ("sym", "reg", "addr") else None
        if found is not None:
            kept, register = found
            kind = "addr" if op.kind == "addr" else "reg" if register else op.kind
            return replace(op, kind=kind, name=kept)
        if op.kind == "vec":
            return replace(op, parts=tuple(fix(p) for p in op.parts))
        return op
    guard = ins.guard
    if guard is not None:
        found = scopes.lookup(guard[0])
        guard = (found[0] if found else guard[0], guard[1])
    return replace(ins, guard=guard, operands=tuple(fix(op) for op in ins.operands))


def _loc(s: str, seen: dict[tuple[int, int, int], Loc]) -> Loc | None:
    """A `.loc` line -> Loc. Its `inlined_at` names one position; where an earlier `.loc`
    gave that position (itself inlined somewhere), the chain continues through it."""
    m = _LOC.match(s)
    if not m:
        return None
    at = _INLINED.search(m.group(4))
    inlined = None
    if at:
        file, line, column = (int(x) for x in at.groups())
        inlined = seen.get((file, line, column)) or Loc(file, line, column)
    here = Loc(int(m.group(1)), int(m.group(2)), int(m.group(3)), inlined)
    seen[(here.file, here.line, here.column)] = here
    return here


def _registers(entry: Entry, scopes: _Scopes, s: str, line: int) -> None:
    """A `.reg` declaration: `%r<29>` (in the body's own scope) as a numbered range, each
    other name as one register of the innermost scope."""
    m = _REG.match(s)
    if not m:
        raise ptx_error(line, s, "a register declaration this reader cannot take")
    t = m.group(1)
    for name in (x.strip() for x in m.group(2).split(",")):
        r = re.fullmatch(r"(%?[\w$]+)<(\d+)>", name)
        if r and len(scopes.open) == 1:
            entry.register_ranges[r.group(1)] = (t, int(r.group(2)))
        elif r:
            for k in range(int(r.group(2))):
                entry.registers[scopes.declare(f"{r.group(1)}{k}")] = t
        elif name:
            entry.registers[scopes.declare(name)] = t


def _variable(s: str, line: int) -> Variable | None:
    m = _DECL.match(s.strip())
    if not m:
        return None
    prefix, space, align, t, name, dims, init = m.groups()
    if t not in TYPE_BYTES:
        raise ptx_error(line, s, f"a variable of type .{t} is outside what sectorviz reads")
    elem = TYPE_BYTES[t]
    size, unsized = elem, False
    for d in re.findall(r"\[\s*(\d*)\s*\]", dims or ""):
        if d == "":
            unsized = True
        else:
            size *= int(d)
    data = _initializer(init, t, size) if init else None
    return Variable(name, space, t, int(align) if align else elem, 0 if unsized else size, data,
                    "extern" in (prefix or ""))


def _initializer(init: str, t: str, size: int) -> bytes | None:
    """`{1, 2, 3}` or a scalar -> `size` little-endian bytes (the rest zero); None for an
    initializer of other forms (`generic(x)` addresses): its bytes are unknown."""
    elem = TYPE_BYTES[t]
    items = [x.strip() for x in init.strip().strip("{}").replace("{", "").replace("}", "")
             .split(",") if x.strip()]
    out = bytearray(size)
    for k, item in enumerate(items):
        if (k + 1) * elem > size:
            break
        op = _immediate(item)
        if op is None:
            return None
        bits = op.value
        if op.ftype == "" and t in ("f32", "f64"):
            bits = int.from_bytes(struct.pack("<f" if t == "f32" else "<d", float(op.value)),
                                  "little")
        out[k * elem:(k + 1) * elem] = (bits & ((1 << (8 * elem)) - 1)).to_bytes(elem, "little")
    return bytes(out)


PREDEFINED_CONSTANTS = {"WARP_SZ": WARP_SIZE}  # PTX's predefined identifiers -> their values
_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)U?$")
_FLOAT = re.compile(r"0([fFdD])([0-9a-fA-F]+)$")


def _immediate(s: str) -> Operand | None:
    m = _FLOAT.match(s)
    if m:
        return Operand("imm", value=int(m.group(2), 16),
                       ftype="f32" if m.group(1) in "fF" else "f64")
    if _INT.match(s):
        text = s.rstrip("U")
        neg = text.startswith("-")
        text = text.lstrip("+-")
        value = int(text, 16) if text[:2].lower() == "0x" else int(text, 8) if (
            len(text) > 1 and text[0] == "0") else int(text)
        return Operand("imm", value=-value if neg else value)
    if re.fullmatch(r"[-+]?\d+\.\d*(e[-+]?\d+)?", s):
        return None
    return None


def _split(s: str) -> list[str]:
    """Operands text -> operand texts, split at the commas outside brackets and braces."""
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for c in s:
        if c in "[{(":
            depth += 1
        elif c in "]})":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _operand(s: str, line: int, text: str) -> Operand:
    s = s.strip()
    if s == "_":
        return Operand("sink")
    if s.startswith("{"):
        return Operand("vec", parts=tuple(_operand(p, line, text) for p in _split(s[1:-1])))
    if s.startswith("["):
        inner = s[1:-1].replace(" ", "")
        m = re.fullmatch(r"([%$\w.]+)?(?:\+?(-?(?:0[xX][0-9a-fA-F]+|\d+)))?", inner)
        if not m or not (m.group(1) or m.group(2)):
            raise ptx_error(line, text, "an address this reader cannot take")
        base, off = m.group(1) or "", m.group(2)
        imm = _immediate(base) if base else None
        if imm is not None and off is None:
            return Operand("addr", "", offset=imm.value)
        return Operand("addr", base, offset=int(off, 0) if off else 0)
    if "|" in s:  # d|p: a value and a predicate
        return Operand("vec", parts=tuple(_operand(p, line, text) for p in s.split("|")))
    if s.startswith("!"):
        return Operand("reg", s[1:], negated=True)
    imm = _immediate(s)
    if imm is not None:
        return imm
    if s in PREDEFINED_CONSTANTS:
        return Operand("imm", value=PREDEFINED_CONSTANTS[s])
    if s.startswith("%"):
        return Operand("reg", s)
    if re.fullmatch(r"[A-Za-z_$][\w$]*(\+\d+)?", s):
        name, _, off = s.partition("+")
        return Operand("sym", name, offset=int(off) if off else 0)
    raise ptx_error(line, text, f"an operand this reader cannot take ({s})")


def _call_operands(ops: str, line: int, text: str) -> list[Operand]:
    """`call[.uni] (ret), callee, (args)[, prototype]` -> [callee (a symbol, or a register
    for a call through a pointer), its return parameters, its arguments] (each a vector of
    the caller's `.param` variables)."""
    pieces = _split(ops)
    returns = pieces.pop(0) if pieces and pieces[0].startswith("(") else "()"
    if not pieces:
        raise ptx_error(line, text, "a call without a callee")
    callee = pieces.pop(0)
    args = pieces[0] if pieces and pieces[0].startswith("(") else "()"
    return [Operand("reg" if callee.startswith("%") else "sym", callee),
            *(Operand("vec", parts=tuple(Operand("sym", p) for p in _split(group[1:-1])))
              for group in (returns, args))]


def _instruction(s: str, line: int, loc: Loc | None) -> Instruction:
    guard = None
    m = re.match(r"@(!?)(%?[\w$]+)\s+", s)
    rest = s
    if m:
        guard = (m.group(2), m.group(1) == "!")
        rest = s[m.end():]
    head, _, ops = rest.partition(" ")
    opcode = tuple(head.split("."))
    if opcode[0] == "call":
        operands = _call_operands(ops, line, s)
    elif "|" in ops and opcode[0] in ("setp", "set"):
        first, _, after = ops.partition(",")
        operands = [_operand("{" + first.replace("|", ",") + "}", line, s)] + \
            [_operand(p, line, s) for p in _split(after)]
    else:
        operands = [_operand(p, line, s) for p in _split(ops)]
    return Instruction(guard, opcode, tuple(operands), loc, s, line)
