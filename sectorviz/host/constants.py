"""The host code's integer values at a kernel launch, read as the compiler sees them and
written as pattern expressions (nothing is run).

A name is an object-like `#define`, a declaration of the host function before the launch
(`const int`, `constexpr`, or a plain variable the function does not change before it), or a
file-scope `const` / `constexpr`. A name whose value is a constant becomes a pattern param
(`nx` with 1024); one whose value uses other names is written out in parentheses. Integer
literals, arithmetic, comparisons, `?:`, integer casts and `sizeof` of scalar and vector
types are read; anything else is Unknown, whose message says which value and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from ..model import PatternError
from .ctypes import is_integer, type_bytes
from .syntax import declared_name, text

MAX_DEPTH = 64  # names and brackets followed inside one value
MAX_TEXT = 2000  # characters of one value written out
BINARY: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": lambda a, b: _c_quotient(a, b), "%": lambda a, b: a - b * _c_quotient(a, b),
    "<<": lambda a, b: a << _shift(b), ">>": lambda a, b: a >> _shift(b),
    "&": lambda a, b: a & b, "|": lambda a, b: a | b, "^": lambda a, b: a ^ b,
    "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b),
    "&&": lambda a, b: int(bool(a and b)), "||": lambda a, b: int(bool(a or b)),
}
UNARY: dict[str, Callable[[int], int]] = {
    "-": lambda a: -a, "+": lambda a: a, "~": lambda a: ~a, "!": lambda a: int(not a)}
CONSTANT = re.compile(r"\b(const|constexpr)\b")


class Unknown(Exception):
    """A value the host code does not fix before the launch; str() says which and why."""


class RunTime(Unknown):
    """A value the program computes when it runs (`atoi(argv[1])`, `a.size(0)`)."""


@dataclass(frozen=True)
class Term:
    """A host value as a pattern expression: its text, its value, whether the text needs no
    brackets around it, and whether it uses no param (a constant)."""

    text: str
    value: int
    atomic: bool = True
    constant: bool = True

    def bracketed(self) -> str:
        return self.text if self.atomic else f"({self.text})"


def _c_quotient(a: int, b: int) -> int:
    if b == 0:
        raise Unknown("a division by zero")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _shift(b: int) -> int:
    if not 0 <= b < 64:
        raise Unknown(f"a shift by {b}")
    return b


def integer_literal(words: str) -> int:
    """A C integer literal (decimal, hex, octal, binary, ' separators, suffixes) -> int;
    Unknown for a floating literal."""
    digits = words.replace("'", "").rstrip("uUlLzZ")
    try:
        if len(digits) > 1 and digits[0] == "0" and digits[1:].isdigit():
            return int(digits, 8)
        return int(digits, 0)
    except ValueError:
        raise Unknown(f"{words} is not an integer") from None


def element_size(type_name: str) -> int:
    """The bytes of a scalar or vector type named as C writes it (`float`, `unsigned int`,
    `float4`, `size_t`); Unknown for any other type."""
    size = type_bytes(type_name.split("::")[-1])
    if size is None:
        raise Unknown(f"the size of '{type_name}' is not known here")
    return size


class HostScope:
    """The names in scope at `at` (a node inside the host function `host` of a parsed
    syntax.Unit) and the params the terms read so far use; `types` binds the template
    parameters of the launched instantiation (`T` -> `float`)."""

    def __init__(self, unit: Any, host: Any, at: Any, types: dict[str, str] | None = None,
                 reserved: frozenset[str] = frozenset(), given: dict[str, Term] | None = None,
                 stand_ins: dict[str, int] | None = None):
        """`given`: the values of the host function's parameters where the one call that
        makes this instantiation passes known ones (launches.given_by); `stand_ins`: a value
        for each name the program computes when it runs (`M` of `const int M = a.size(0)`),
        which is a param of that value wherever it is read."""
        self.unit, self.host, self.at = unit, host, at
        self.types = types or {}
        self.given = given or {}
        self.stand_ins = stand_ins or {}
        self.reserved = reserved
        self.params: dict[str, int] = {}
        self._depth = 0
        self._locals = self._declarations_before_launch()

    def claim(self, name: str, value: int) -> bool:
        """Make `name` a param of `value`; False where the name is taken by another value or
        is not free for a param."""
        if name in self.reserved or self.params.get(name, value) != value:
            return False
        self.params[name] = value
        return True

    def term(self, node: Any) -> Term:
        """The integer value of the expression `node` as a pattern expression; Unknown
        naming what cannot be known."""
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise Unknown(f"'{_short(text(node))}' nests too deeply")
            found = self._term(node)
        finally:
            self._depth -= 1
        if len(found.text) > MAX_TEXT:
            raise Unknown(f"'{_short(text(node))}' is too long to write out")
        return found

    def _term(self, node: Any) -> Term:
        kind = node.type
        if kind == "number_literal":
            return Term(str(integer_literal(text(node))), integer_literal(text(node)))
        if kind in ("identifier", "type_identifier"):
            return self.named(text(node))
        if kind == "type_descriptor" and node.named_child_count == 1:
            return self.term(node.named_children[0])  # `BM` in `k<BM>`, read as a type
        if kind == "parameter_declaration" and node.child_by_field_name("declarator") is None:
            return self.term(node.child_by_field_name("type"))  # `dim3 g(n)` read as a type
        if kind == "parenthesized_expression":
            inner = self.term(node.named_children[-1])
            return Term(inner.bracketed(), inner.value, True, inner.constant)
        if kind == "binary_expression":
            return self._binary(node)
        if kind == "unary_expression":
            return self._unary(node)
        if kind == "conditional_expression":
            return self._conditional(node)
        if kind == "sizeof_expression":
            size = self.size_of(node)
            return Term(str(size), size)
        if kind == "cast_expression":
            self._integer_type(text(node.child_by_field_name("type")))
            return self.term(node.child_by_field_name("value"))
        if kind == "call_expression":
            return self._call(node)
        raise Unknown(f"'{_short(text(node))}' is not an integer expression read here")

    def _binary(self, node: Any) -> Term:
        op = text(node.child_by_field_name("operator"))
        if op not in BINARY:
            raise Unknown(f"'{_short(text(node))}' uses {op}")
        left = self.term(node.child_by_field_name("left"))
        right = self.term(node.child_by_field_name("right"))
        return Term(f"{left.text} {op} {right.text}", BINARY[op](left.value, right.value),
                    False, left.constant and right.constant)

    def _unary(self, node: Any) -> Term:
        op = text(node.child_by_field_name("operator"))
        if op not in UNARY:
            raise Unknown(f"'{_short(text(node))}' uses {op}")
        inner = self.term(node.child_by_field_name("argument"))
        return Term(f"{op}{inner.bracketed()}", UNARY[op](inner.value), True, inner.constant)

    def _conditional(self, node: Any) -> Term:
        test, yes, no = (self.term(node.child_by_field_name(f))
                         for f in ("condition", "consequence", "alternative"))
        return Term(f"{test.text} ? {yes.text} : {no.text}", yes.value if test.value
                    else no.value, False, test.constant and yes.constant and no.constant)

    def _call(self, node: Any) -> Term:
        """`static_cast<int>(x)` and the like pass their value through; other calls run."""
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments").named_children
        if fn.type == "template_function" and len(args) == 1 and text(
                fn.child_by_field_name("name")) in ("static_cast", "reinterpret_cast"):
            self._integer_type(text(fn.child_by_field_name("arguments")).strip("<>"))
            return self.term(args[0])
        raise RunTime(f"'{_short(text(node))}' is computed when the program runs")

    def _integer_type(self, type_name: str) -> None:
        if not is_integer(type_name):
            raise Unknown(f"a cast to '{type_name}' is not an integer cast")

    def size_of(self, node: Any) -> int:
        """The bytes a sizeof_expression counts: of a type, or of a name read as one."""
        kind = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        if kind is None and value is not None and value.type == "parenthesized_expression":
            kind = value.named_children[-1]
        if kind is None:
            raise Unknown(f"'{_short(text(node))}' is the size of an expression")
        name = text(kind)
        return element_size(self.types.get(name, name))

    def named(self, name: str) -> Term:
        """The value of `name` at the launch: a param when it is a constant, else its value
        written out in brackets."""
        if name in self.stand_ins and self.claim(name, self.stand_ins[name]):
            return Term(name, self.stand_ins[name], True, False)
        value = self.given[name] if name in self.given and name not in self._locals else \
            self.term(self.definition(name))
        if value.constant and self.claim(name, value.value):
            return Term(name, value.value, True, False)
        return Term(value.bracketed(), value.value, True, value.constant)

    def definition(self, name: str) -> Any:
        """The expression `name` stands for at the launch; Unknown saying why it is not
        known."""
        macro = self.unit.macro(name, self.at.start_point)
        if macro is not None:
            if macro.params is not None:
                raise Unknown(f"'{name}' is a function-like macro")
            try:
                return self.unit.fragment(macro.value)
            except PatternError:
                raise Unknown(f"#define {name} is not an expression") from None
        kind, value = self.binding(name)
        if kind == "dim3":
            raise Unknown(f"'{name}' is a dim3, not an integer")
        return value

    def binding(self, name: str) -> tuple[str, Any]:
        """(the declared type, the value node) of the variable `name` at the launch."""
        if name in self._locals:
            kind, declarator, value = self._locals[name]
            changed = self._changed(name, declarator)
            if changed is not None:
                raise Unknown(f"'{name}' changes before the launch (line {changed})")
            if value is None:
                raise Unknown(f"'{name}' is declared without a value")
            return kind, value
        if name in self._host_parameters():
            raise Unknown(f"'{name}' is a parameter of the host function, given when it "
                          "is called")
        decl = self.unit.globals.get(name)
        if decl is not None:
            head = text(decl)[:decl.child_by_field_name("type").end_byte - decl.start_byte]
            if not CONSTANT.search(head):
                raise Unknown(f"'{name}' is a file-scope variable, not a constant")
            for d in decl.children_by_field_name("declarator"):
                if declared(d) == name and _initializer(d) is not None:
                    return text(decl.child_by_field_name("type")), _initializer(d)
        raise Unknown(f"'{name}' is not a constant the host code sets before the launch")

    def dims(self, node: Any) -> list[Term]:
        """The components of a launch's grid or block: a dim3 variable, `dim3(...)`, a
        braced list or one integer."""
        if node.type == "identifier":
            try:
                kind, value = self.binding(text(node))
            except Unknown:
                kind, value = "", None
            if kind == "dim3" and value is not None:
                return self.dims(value)
        if node.type == "call_expression" and text(
                node.child_by_field_name("function")) == "dim3":
            node = node.child_by_field_name("arguments")
        if node.type in ("argument_list", "initializer_list", "parameter_list"):
            found = [self.term(c) for c in node.named_children if c.type != "comment"]
            while len(found) > 1 and found[-1].text == "1":
                found.pop()
            return found
        return [self.term(node)]

    def _declarations_before_launch(self) -> dict[str, tuple[str, Any, Any]]:
        """name -> (type, declarator, value) of the host function's declarations before the
        launch, the last one of a name winning."""
        found: dict[str, tuple[str, Any, Any]] = {}
        for decl in nodes_of(self.host, "declaration"):
            if decl.start_byte >= self.at.start_byte:
                continue
            kind = text(decl.child_by_field_name("type"))
            for d in decl.children_by_field_name("declarator"):
                name = declared(d)
                if name is not None and not _is_pointer(d):
                    found[name] = (kind, d, _initializer(d))
                elif name is not None:
                    found.pop(name, None)
        return found

    def _changed(self, name: str, declarator: Any) -> int | None:
        """The line where the host function changes `name` (assigns it, a field of it,
        steps it or takes its address) between its declaration and the launch, or None."""
        for node in nodes_of(self.host, "assignment_expression", "update_expression",
                           "pointer_expression"):
            if not declarator.end_byte <= node.start_byte < self.at.start_byte:
                continue
            if node.type == "pointer_expression" and text(node).replace(" ", "")[:1] != "&":
                continue
            target = node.child_by_field_name("left") or node.child_by_field_name("argument")
            while target is not None and target.type == "field_expression":
                target = target.child_by_field_name("argument")
            if target is not None and text(target) == name:
                return int(node.start_point[0]) + 1
        return None

    def _host_parameters(self) -> set[str]:
        return {name for name in parameter_names(self.host) if name}


def parameter_names(function: Any) -> list[str | None]:
    """The names of a function_definition's parameters, in order (None for an unnamed
    one)."""
    decl = function.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    if decl is None or decl.child_by_field_name("parameters") is None:
        return []
    return [declared(p.child_by_field_name("declarator"))
            for p in decl.child_by_field_name("parameters").named_children
            if p.type != "comment"]


def declared(declarator: Any) -> str | None:
    return None if declarator is None else declared_name(declarator)


def _initializer(declarator: Any) -> Any:
    """What a declarator is set to: `= v`, `(a, b)`, `{a, b}`; None without one."""
    return declarator.child_by_field_name("value") or (
        declarator.child_by_field_name("parameters")
        if declarator.type == "function_declarator" else None)


def _is_pointer(declarator: Any) -> bool:
    while declarator is not None:
        if declarator.type in ("pointer_declarator", "array_declarator",
                               "reference_declarator"):
            return True
        declarator = declarator.child_by_field_name("declarator")
    return False


def nodes_of(root: Any, *kinds: str) -> list[Any]:
    """The nodes of `kinds` under `root`, in source order."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.type in kinds:
            found.append(node)
        stack.extend(reversed(node.named_children))
    return found


def _short(words: str) -> str:
    words = " ".join(words.split())
    return words if len(words) <= 60 else words[:57] + "..."
