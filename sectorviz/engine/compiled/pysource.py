"""A kernel written in Python (Triton, Numba) read from its file's syntax tree, never run.

The file is parsed with `ast`; what a compile gets is a generated module holding only:
the imports of the compilers' own modules (`triton`, `numba`, `math`, and their parts), the
module-level constants the kernels read (a literal, or `tl.constexpr(literal)`), the kernel
function and the jit functions it calls (transitively), each at its own line of the file, so
the compiler's `.loc` lines are the file's. Decorators must be a jit decorator with literal
arguments, defaults literals, annotations dotted names or strings; a kernel's body may name
only its locals, those constants and functions, the imported modules and a few builtins,
and no attribute starting with `_`. Anything else is refused in one line naming the file
and line. The compile's child checks that each dotted name of a module reaches only those
modules' own functions and modules (pykernel_child.py)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from ...model.errors import PatternError

COMPILER_MODULES = ("triton", "numba", "math")  # modules (and their parts) a kernel may use
# builtins a kernel body may name (Triton runs a called Python function at compile time, so
# getattr, open, eval and the rest are refused)
BODY_BUILTINS = frozenset({"range", "len", "min", "max", "abs", "int", "float", "bool", "print",
                           "isinstance", "list", "tuple", "True", "False", "None"})
JIT_DECORATORS = frozenset({"triton.jit", "jit", "cuda.jit", "numba.cuda.jit"})
CONSTEXPR_CALLS = frozenset({"tl.constexpr", "triton.language.constexpr", "constexpr"})


@dataclass(frozen=True)
class PythonKernel:
    """A kernel's file read: the generated module's text (the taken lines at their own
    line numbers, blank elsewhere), the kernel's parameter names in order, and the dotted
    names its functions use from imported modules, with their lines (checked in the
    child)."""

    module: str
    params: tuple[str, ...]
    dotted: tuple[tuple[int, str], ...]
    calls: tuple[tuple[int, int, str], ...]  # (line, 1-based column, text) of each call


def _refusal(path: Path, line: int, what: str) -> PatternError:
    return PatternError(f"line {line}", what, file=str(path))


def _dotted(node: ast.expr) -> str | None:
    """`triton.language.load` for a chain of names and attributes, else None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _allowed_import(stmt: ast.Import | ast.ImportFrom) -> bool:
    names = [a.name for a in stmt.names] if isinstance(stmt, ast.Import) else \
        [stmt.module or ""] if not stmt.level else [""]
    return all(n.split(".")[0] in COMPILER_MODULES for n in names)


def _import_names(stmt: ast.Import | ast.ImportFrom) -> list[str]:
    return [(a.asname or a.name.split(".")[0]) if isinstance(stmt, ast.Import)
            else (a.asname or a.name) for a in stmt.names]


def _constant_value(stmt: ast.stmt) -> tuple[str, ast.expr] | None:
    """`NAME = value` or `NAME: annotation = value` at module level -> (NAME, value)."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id, stmt.value
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and \
            stmt.value is not None:
        return stmt.target.id, stmt.value
    return None


def _literal_constant(value: ast.expr) -> bool:
    """A literal, or `tl.constexpr(literal)`."""
    if isinstance(value, ast.Call) and _dotted(value.func) in CONSTEXPR_CALLS:
        return len(value.args) == 1 and not value.keywords and _is_literal(value.args[0])
    return _is_literal(value)


class _Module:
    """The top level of a kernel's file: its imports, constants and functions by name."""

    def __init__(self, tree: ast.Module, path: Path):
        self.path = path
        self.imports: dict[str, ast.stmt] = {}
        self.foreign: dict[str, int] = {}  # names imported from other modules -> line
        self.constants: dict[str, ast.stmt] = {}
        self.other: dict[str, int] = {}  # names bound otherwise -> line
        self.functions: dict[str, ast.FunctionDef] = {}
        for stmt in tree.body:
            self._add(stmt)

    def _add(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            bucket = self.imports if _allowed_import(stmt) else None
            for name in _import_names(stmt):
                if bucket is None:
                    self.foreign[name] = stmt.lineno
                else:
                    bucket[name] = stmt
        elif isinstance(stmt, ast.FunctionDef):
            self.functions[stmt.name] = stmt
        elif (found := _constant_value(stmt)) is not None:
            name, value = found
            if _literal_constant(value):
                self.constants[name] = stmt
            else:
                self.other[name] = stmt.lineno

    def kernel(self, name: str) -> ast.FunctionDef:
        """The kernel function the pattern names; PatternError at kernel.function."""
        if name not in self.functions:
            found = ", ".join(self.functions) or "none"
            raise PatternError("kernel.function", f"{self.path.name} defines no function "
                                                  f"{name!r} at its top level (functions: "
                                                  f"{found})")
        return self.functions[name]


def _check_decorators(fn: ast.FunctionDef, path: Path) -> None:
    """Each decorator a jit decorator whose arguments are literals."""
    for dec in fn.decorator_list:
        call = dec if isinstance(dec, ast.Call) else None
        name = _dotted(call.func if call else dec)
        literal = call is None or all(_is_literal(a) for a in call.args) and \
            all(k.arg is not None and _is_literal(k.value) for k in call.keywords)
        if name not in JIT_DECORATORS or not literal:
            raise _refusal(path, dec.lineno, f"decorator {ast.unparse(dec)[:60]} is not read: "
                                             "only a jit decorator with literal arguments")
    if not fn.decorator_list:
        raise _refusal(path, fn.lineno, f"{fn.name} has no jit decorator")


def _check_signature(fn: ast.FunctionDef, path: Path) -> None:
    """Literal defaults; annotations dotted names or strings (they are evaluated at def)."""
    args = fn.args
    for default in (*args.defaults, *(d for d in args.kw_defaults if d is not None)):
        if not _is_literal(default):
            raise _refusal(path, default.lineno, f"default {ast.unparse(default)[:60]} is not "
                                                 "a literal")
    every = (*args.posonlyargs, *args.args, *args.kwonlyargs,
             *(a for a in (args.vararg, args.kwarg) if a is not None))
    for note in (*(a.annotation for a in every), fn.returns):
        if note is not None and _dotted(note) is None and not (
                isinstance(note, ast.Constant) and isinstance(note.value, str)):
            raise _refusal(path, note.lineno, f"annotation {ast.unparse(note)[:60]} is not a "
                                              "name")


def _locals(fn: ast.FunctionDef) -> set[str]:
    """Names a function binds: parameters, assignments, loop and with targets."""
    args = fn.args
    found = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
    found |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda, ast.Global, ast.Nonlocal)) and \
                node is not fn:
            raise _refusal_node(node)
    return found


def _refusal_node(node: ast.AST) -> PatternError:
    return PatternError(f"line {getattr(node, 'lineno', 0)}",
                        f"{type(node).__name__.lower()} inside a kernel is not read")


class _Taker:
    """The functions, constants and imports a kernel needs, found from its syntax tree."""

    def __init__(self, module: _Module):
        self.module = module
        self.functions: dict[str, ast.FunctionDef] = {}
        self.constants: set[str] = set()
        self.imports: set[str] = set()
        self.dotted: list[tuple[int, str]] = []

    def take(self, fn: ast.FunctionDef) -> None:
        if fn.name in self.functions:
            return
        path = self.module.path
        self.functions[fn.name] = fn
        _check_decorators(fn, path)
        _check_signature(fn, path)
        try:
            own = _locals(fn)
        except PatternError as err:
            raise PatternError(err.place, err.message, file=str(path)) from None
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
                raise _refusal(path, node.lineno, f"attribute {node.attr!r} is not read "
                                                  "(names starting with _)")
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                    node.id not in own:
                self._global(node, fn)

    def _global(self, node: ast.Name, fn: ast.FunctionDef) -> None:
        """A name a function reads from the module: taken, or refused in one line."""
        name, module, path = node.id, self.module, self.module.path
        if name in module.functions:
            self.take(module.functions[name])
        elif name in module.constants:
            self.constants.add(name)
        elif name in module.imports:
            self.imports.add(name)
            self.dotted.extend(self._chains(fn, name))
        elif name in module.foreign:
            raise _refusal(path, node.lineno, f"{name} comes from a module other than "
                                              f"{', '.join(COMPILER_MODULES)} (line "
                                              f"{module.foreign[name]})")
        elif name in module.other:
            raise _refusal(path, node.lineno, f"{name} is not a literal constant (line "
                                              f"{module.other[name]})")
        elif name not in BODY_BUILTINS:
            raise _refusal(path, node.lineno, f"{name} is not defined by a literal, a jit "
                                              "function or an import of the compiler")

    @staticmethod
    def _chains(fn: ast.FunctionDef, name: str) -> list[tuple[int, str]]:
        """Every longest dotted chain in `fn` that starts at the imported `name`."""
        found = []
        for node in ast.walk(fn):
            if isinstance(node, (ast.Attribute, ast.Name)):
                chain = _dotted(node)
                if chain is not None and chain.split(".")[0] == name:
                    found.append((node.lineno, chain))
        return found


def read_python_kernel(path: Path, text: str, function: str) -> PythonKernel:
    """A kernel's file text -> the module a compile gets (see the module's docstring);
    PatternError naming the file and line for anything it would have to run."""
    try:
        tree = ast.parse(text, filename=path.name)
    except SyntaxError as err:
        raise PatternError(f"line {err.lineno}" if err.lineno else "kernel",
                           f"not Python: {err.msg}", file=str(path)) from None
    except (ValueError, RecursionError, MemoryError) as err:  # a NUL byte, deep nesting
        raise PatternError("kernel", f"not Python that can be read: {type(err).__name__}",
                           file=str(path)) from None
    module = _Module(tree, path)
    taker = _Taker(module)
    kernel = module.kernel(function)
    taker.take(kernel)
    kept: list[ast.stmt] = [module.imports[n] for n in taker.imports if n in module.imports]
    kept += [module.constants[n] for n in taker.constants]
    kept += list(taker.functions.values())
    params = tuple(a.arg for a in (*kernel.args.posonlyargs, *kernel.args.args))
    _check_alone(path, kept, tree.body)
    return PythonKernel(_at_own_lines(text, kept), params, tuple(sorted(set(taker.dotted))),
                        _calls(text, list(taker.functions.values())))


def _calls(text: str, functions: list[ast.FunctionDef]) -> tuple[tuple[int, int, str], ...]:
    """(line, 1-based column, source text) of every call in `functions`, the outermost
    where several start at one place (what a `.loc` line and column point at)."""
    found: dict[tuple[int, int], str] = {}
    for fn in functions:
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and node.lineno == node.end_lineno:
                found.setdefault((node.lineno, node.col_offset + 1),
                                 ast.get_source_segment(text, node) or "")
    return tuple((line, column, call) for (line, column), call in sorted(found.items()))


def _span(stmt: ast.stmt) -> tuple[int, int]:
    """(first, last) line of a statement, its decorators included."""
    first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
    return first, stmt.end_lineno or stmt.lineno


def _check_alone(path: Path, kept: list[ast.stmt], body: list[ast.stmt]) -> None:
    """No statement left out shares a line with a kept one (`X = 1; import os`)."""
    lines = {n for stmt in kept for n in range(_span(stmt)[0], _span(stmt)[1] + 1)}
    for stmt in body:
        first, last = _span(stmt)
        if stmt not in kept and lines & set(range(first, last + 1)):
            raise _refusal(path, first, "a statement that is not read shares a line with "
                                        "one that is")


def _at_own_lines(text: str, kept: list[ast.stmt]) -> str:
    """The source lines of `kept` statements (decorators included) at their own line
    numbers, every other line blank."""
    lines = text.splitlines()
    out = [""] * len(lines)
    for stmt in kept:
        first, last = _span(stmt)
        out[first - 1:last] = lines[first - 1:last]
    return "\n".join(out) + "\n"
