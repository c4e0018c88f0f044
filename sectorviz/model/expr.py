"""C integer expressions, parsed by a Pratt parser and evaluated vectorized over lanes.

`parse(text)` -> an immutable tree; `evaluate(tree, scope, mask)` -> int64 values, one per
thread of the scope (or a scalar). Semantics are C's over signed 64-bit values: `/` and `%`
truncate toward zero, comparisons give 0 or 1, `&&`, `||` and `?:` evaluate their right-hand
sides only for lanes that need them (so `n != 0 ? a / n : 0` is safe). Nothing is ever passed
to Python's eval.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Protocol, Union, cast

import numpy as np
from numpy.typing import ArrayLike

from .c_int import c_divmod
from .errors import PatternError

Value = Union[np.ndarray, np.int64]

BUILTIN_VECTORS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
FUNCTIONS = {"min": 2, "max": 2, "abs": 1}


class ExprError(PatternError):
    """An error inside one expression; `place` is filled in by the caller."""

    def __init__(self, message: str, column: int):
        super().__init__("", message, column)


# ---------------------------------------------------------------- tree

@dataclass(frozen=True)
class Num:
    value: int
    col: int


@dataclass(frozen=True)
class Name:
    name: str
    col: int


@dataclass(frozen=True)
class Unary:
    op: str
    operand: "Node"
    col: int


@dataclass(frozen=True)
class Binary:
    op: str
    left: "Node"
    right: "Node"
    col: int


@dataclass(frozen=True)
class Cond:
    test: "Node"
    then: "Node"
    other: "Node"
    col: int


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple["Node", ...]
    col: int


@dataclass(frozen=True)
class Subscript:
    array: str
    index: "Node"
    col: int


Node = Union[Num, Name, Unary, Binary, Cond, Call, Subscript]


# a node's type -> its sub-expressions
_CHILDREN: dict[type, Callable[[Any], tuple["Node", ...]]] = {
    Num: lambda n: (), Name: lambda n: (), Unary: lambda n: (n.operand,),
    Binary: lambda n: (n.left, n.right), Cond: lambda n: (n.test, n.then, n.other),
    Call: lambda n: n.args, Subscript: lambda n: (n.index,)}


def children(node: Node) -> tuple[Node, ...]:
    """A node's sub-expressions, left to right."""
    return _CHILDREN[type(node)](node)


def walk(node: Node) -> list[Node]:
    """Every node of a tree, parents before children (left to right), without recursion."""
    out, stack = [], [node]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(children(node)))
    return out


def plain_names_in(node: Node) -> set[str]:
    """The names a tree reads as values (params, lets, loop variables, built-ins)."""
    return {n.name for n in walk(node) if type(n) is Name}


def names_in(node: Node) -> set[str]:
    """Every plain name and subscripted array name a tree refers to."""
    return plain_names_in(node) | subscripts_in(node)


class TreeNames(NamedTuple):
    """What a loader checks of a tree: its names and levels (the columns only for an error,
    from `first_column`)."""

    levels: int  # levels of the tree (a leaf is 1)
    plain: dict[str, int]  # value name -> the deepest level of a leaf naming it
    arrays: frozenset[str] | set[str]  # subscripted array names

    def depth(self, names: dict[str, int]) -> int:
        """Levels of the tree when a Name listed in `names` adds its own levels (a let read
        inside the tree is evaluated there)."""
        deepest = self.levels
        for name, level in self.plain.items():
            if level + names.get(name, 0) > deepest:
                deepest = level + names.get(name, 0)
        return deepest


NO_ARRAYS: frozenset[str] = frozenset()


def tree_names(node: Node) -> TreeNames:
    """One walk of a tree, without recursion -> its TreeNames."""
    plain: dict[str, int] = {}
    arrays: set[str] = set()  # (a tree without subscripts shares NO_ARRAYS)
    deepest, stack = 0, [(node, 1)]
    while stack:
        node, level = stack.pop()
        kind = type(node)
        if level > deepest:
            deepest = level
        if kind is Name:
            name = node.name  # type: ignore[union-attr]
            if plain.get(name, 0) < level:
                plain[name] = level
        elif kind is not Num:
            if kind is Subscript:
                arrays.add(node.array)  # type: ignore[union-attr]
            below = level + 1
            stack.extend([(child, below) for child in _CHILDREN[kind](node)])
    return TreeNames(deepest, plain, arrays or NO_ARRAYS)


def first_column(node: Node, name: str) -> int:
    """The 1-based column of the first place a tree names `name`, as a value or an array."""
    return min(n.col for n in walk(node)
               if (type(n) is Name and n.name == name)  # type: ignore[union-attr]
               or (type(n) is Subscript and n.array == name))  # type: ignore[union-attr]


def subscripts_in(node: Node) -> set[str]:
    """The names of the arrays a tree reads with `name[expr]`."""
    return {n.array for n in walk(node) if type(n) is Subscript}  # type: ignore[union-attr]


# ---------------------------------------------------------------- tokens

_OPERATORS = ("<<", ">>", "<=", ">=", "==", "!=", "&&", "||", *"-+*/%<>&^|!~?:(),[]")
_TOKEN = re.compile(  # (the white space before a token, the token); any other character alone
    r"(\s*)(0[xX][0-9a-fA-F]+[uUlL]*|[0-9]+[uUlL]*"
    r"|[A-Za-z_][A-Za-z_0-9]*(?:\s*\.\s*[xyz]\b)?"
    r"|" + "|".join(re.escape(op) for op in _OPERATORS) + r"|\S)")
_KINDS = {**dict.fromkeys("0123456789", "num"),  # a token's first character -> its kind
          **dict.fromkeys("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_", "name")}
_OPERATOR_SET = frozenset(_OPERATORS)

_INT64_MAX = 2**63 - 1
_UINT64_MAX = 2**64 - 1


class _Tok(NamedTuple):
    kind: str
    text: str
    col: int  # 1-based


_SPACE = re.compile(r"\s+")
_new_tok = tuple.__new__


def _tokens(text: str) -> list[_Tok]:
    """Text -> tokens, refused past MAX_CHARS characters or MAX_TOKENS tokens. One findall
    (strings, not match objects); a token's kind is its first character's."""
    if len(text) > MAX_CHARS:
        raise ExprError(f"expression is {len(text):,} characters long; at most {MAX_CHARS:,}", 1)
    out: list[_Tok] = []
    col = 1
    for space, word in _TOKEN.findall(text):
        col += len(space)
        kind = _KINDS.get(word[0]) or ("op" if word in _OPERATOR_SET else "")
        if not kind:
            raise ExprError(f"unexpected character {word!r}", col)
        if len(out) == MAX_TOKENS:
            raise ExprError(f"expression has more than {MAX_TOKENS:,} tokens", col)
        if kind == "name" and "." in word:  # `threadIdx . x` -> `threadIdx.x`
            out.append(_Tok(kind, _SPACE.sub("", word), col))
        else:
            out.append(_new_tok(_Tok, (kind, word, col)))  # NamedTuple's __new__, in C
        col += len(word)
    out.append(_Tok("end", "", len(text) + 1))
    return out


def _literal(tok: _Tok) -> int:
    """A decimal or hex literal (C suffixes allowed) -> int64 (a uint64 wraps, as in C);
    the digits are counted before they are converted."""
    if len(tok.text) < 19 and tok.text.isdigit() and (tok.text[0] != "0" or tok.text == "0"):
        return int(tok.text)  # the common case: a short decimal without suffix or octal 0
    digits = tok.text.rstrip("uUlL")
    if len(digits) > 1 and digits[0] == "0" and digits[1:2].isdigit():
        raise ExprError("octal literals are not supported; drop the leading 0", tok.col)
    hex_ = digits[:2].lower() == "0x"
    significant = digits[2:].lstrip("0") if hex_ else digits
    if len(significant) > (16 if hex_ else 20):
        shown = tok.text if len(tok.text) <= 24 else f"{tok.text[:12]}… ({len(digits)} digits)"
        raise ExprError(f"literal {shown} does not fit in 64 bits", tok.col)
    value = int(digits, 16) if hex_ else int(digits, 10)
    if value > _UINT64_MAX:
        raise ExprError(f"literal {tok.text} does not fit in 64 bits", tok.col)
    return value - 2**64 if value > _INT64_MAX else value


# ---------------------------------------------------------------- parser

_BINARY = {  # operator -> binding power (C precedence, higher binds tighter)
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, "<=": 7, ">": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9,
    "*": 10, "/": 10, "%": 10,
}
_TERNARY_POWER = 0.5
_MAX_DEPTH = 200  # levels of a tree (a leaf is 1), checked while parsing
MAX_CHARS = 65536  # characters of one expression, checked before tokenizing
MAX_TOKENS = 16384


class _Parser:
    def __init__(self, text: str):
        self.toks = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def expect(self, text: str) -> _Tok:
        tok = self.take()
        if tok.text != text:
            found = "the end" if tok.kind == "end" else repr(tok.text)
            raise ExprError(f"expected {text!r} but found {found}", tok.col)
        return tok

    def level(self, height: int, tok: _Tok) -> int:
        """`height` levels, refused past _MAX_DEPTH as soon as the parser builds them."""
        if height > _MAX_DEPTH:
            raise ExprError(f"expression nested more than {_MAX_DEPTH} levels deep", tok.col)
        return height

    def expression(self, min_power: float = 0) -> tuple[Node, int]:
        """The expression binding tighter than `min_power` -> (tree, its levels)."""
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise ExprError("expression nested too deeply", self.peek().col)
        left, height = self.prefix()
        toks = self.toks
        while True:
            tok = toks[self.i]
            if tok.text == "?" and _TERNARY_POWER >= min_power:
                self.take()
                then, then_height = self.expression(0)
                self.expect(":")
                other, other_height = self.expression(_TERNARY_POWER)
                left = Cond(left, then, other, tok.col)
                height = self.level(max(height, then_height, other_height) + 1, tok)
                continue
            power = _BINARY.get(tok.text) if tok.kind == "op" else None
            if power is None or power <= min_power:
                break
            self.i += 1
            right, right_height = self.expression(power)
            left = Binary(tok.text, left, right, tok.col)
            height = self.level((height if height > right_height else right_height) + 1, tok)
        self.depth -= 1
        return left, height

    def prefix(self) -> tuple[Node, int]:
        tok = self.toks[self.i]
        self.i += 1
        kind = tok.kind
        if kind == "name":
            return self.name(tok)
        if kind == "num":
            return Num(_literal(tok), tok.col), 1
        if tok.text in ("-", "+", "!", "~"):
            operand, height = self.expression(11)
            return Unary(tok.text, operand, tok.col), self.level(height + 1, tok)
        if tok.text == "(":
            inner = self.expression(0)
            self.expect(")")
            return inner
        found = "the end of the expression" if tok.kind == "end" else repr(tok.text)
        raise ExprError(f"expected a value but found {found}", tok.col)

    def name(self, tok: _Tok) -> tuple[Node, int]:
        nxt = self.toks[self.i].text
        if nxt not in ("(", "["):
            return Name(tok.text, tok.col), 1
        if nxt == "(":
            if tok.text not in FUNCTIONS:
                raise ExprError(f"unknown function {tok.text!r} (known: min, max, abs)", tok.col)
            self.take()
            args = [self.expression(0)]
            while self.peek().text == ",":
                self.take()
                args.append(self.expression(0))
            self.expect(")")
            if len(args) != FUNCTIONS[tok.text]:
                raise ExprError(
                    f"{tok.text} takes {FUNCTIONS[tok.text]} argument(s), got {len(args)}", tok.col)
            height = self.level(max(h for _, h in args) + 1, tok)
            return Call(tok.text, tuple(a for a, _ in args), tok.col), height
        self.take()
        index, height = self.expression(0)
        self.expect("]")
        return Subscript(tok.text, index, tok.col), self.level(height + 1, tok)


def parse(text: str | int) -> Node:
    """Parse one C integer expression; raises ExprError with a 1-based column."""
    if not isinstance(text, (str, int)) or isinstance(text, bool):
        raise ExprError(f"expected an expression (text or integer), got {type(text).__name__}", 1)
    if isinstance(text, int) and not -2**63 <= text <= _UINT64_MAX:
        raise ExprError("integer does not fit in 64 bits", 1)  # before str(): no huge strings
    return parse_text(str(text))


def parse_text(text: str) -> Node:
    """Parse one expression's text (ExprError with a 1-based column)."""
    if not text.strip():
        raise ExprError("empty expression", 1)
    parser = _Parser(text)
    tree, _ = parser.expression(0)
    tok = parser.peek()
    if tok.kind != "end":
        raise ExprError(f"unexpected {tok.text!r} after a complete expression", tok.col)
    return tree


# ---------------------------------------------------------------- evaluation

class ArrayValues(Protocol):
    """A readable array's element values: its length, and the values at integer indices."""

    def __len__(self) -> int: ...

    def __getitem__(self, index: np.ndarray) -> np.ndarray: ...


class Scope(Protocol):
    """What names mean while evaluating: scalars or per-thread int64 arrays."""

    shape: tuple[int, ...]

    def lookup(self, name: str, mask: np.ndarray, col: int) -> Value: ...

    def array_values(self, name: str, col: int) -> ArrayValues: ...


def _where_live(mask: np.ndarray, values: ArrayLike) -> bool:
    return bool(np.any(np.broadcast_to(mask, np.broadcast(mask, values).shape) & values))


def _c_divide(a: Value, b: Value, mask: np.ndarray, col: int, op: str) -> Value:
    zero = np.equal(b, 0)
    if _where_live(mask, zero):
        raise ExprError(f"division by zero in '{op}'", col)
    quotient, remainder = c_divmod(a, b)
    return remainder if op == "%" else quotient


def _shift(a: Value, b: Value, mask: np.ndarray, col: int, op: str) -> Value:
    bad = (np.asarray(b) < 0) | (np.asarray(b) > 63)
    if _where_live(mask, bad):
        raise ExprError(f"shift count outside [0, 63] in '{op}'", col)
    b = np.clip(b, 0, 63)
    return np.left_shift(a, b) if op == "<<" else np.right_shift(a, b)


_ARITH = {
    "+": np.add, "-": np.subtract, "*": np.multiply,
    "&": np.bitwise_and, "|": np.bitwise_or, "^": np.bitwise_xor,
    "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
    "==": np.equal, "!=": np.not_equal,
}


def _as_int(value: ArrayLike) -> Value:
    array = np.asarray(value)
    return array.astype(np.int64) if array.dtype != np.int64 else array


def evaluate(node: Node, scope: Scope, mask: np.ndarray) -> Value:
    """Evaluate a tree for the lanes where `mask` is true; other lanes get unspecified values."""
    with np.errstate(over="ignore"):
        return _as_int(_eval(node, scope, mask))


def evaluate_truth(node: Node, scope: Scope, mask: np.ndarray) -> np.ndarray:
    """Lanes where the expression is nonzero, as bools (conditions skip the int conversion)."""
    with np.errstate(over="ignore"):
        value = np.asarray(_eval(node, scope, mask))
    return value if value.dtype == bool else value != 0


def _eval(node: Node, scope: Scope, mask: np.ndarray) -> Value:
    if isinstance(node, Num):
        return cast(Value, np.int64(node.value))
    if isinstance(node, Name):
        return scope.lookup(node.name, mask, node.col)
    if isinstance(node, Unary):
        v = _as_int(_eval(node.operand, scope, mask))
        unary: dict[str, Callable[[Value], Value]] = {
            "-": np.negative, "+": lambda x: x, "!": lambda x: (x == 0), "~": np.invert}
        return unary[node.op](v)
    if isinstance(node, Binary):
        return _binary(node, scope, mask)
    if isinstance(node, Cond):
        test = _as_int(_eval(node.test, scope, mask)) != 0
        then = _eval(node.then, scope, mask & test)
        other = _eval(node.other, scope, mask & ~test)
        return np.where(test, then, other)
    if isinstance(node, Call):
        args = [_as_int(_eval(a, scope, mask)) for a in node.args]
        calls: dict[str, Callable[..., Value]] = {"min": np.minimum, "max": np.maximum,
                                                 "abs": np.abs}
        return calls[node.func](*args)
    if isinstance(node, Subscript):
        return _subscript(node, scope, mask)
    raise TypeError(f"not an expression node: {node!r}")


def _binary(node: Binary, scope: Scope, mask: np.ndarray) -> Value:
    left = _as_int(_eval(node.left, scope, mask))
    if node.op in ("&&", "||"):
        truth = left != 0
        need = mask & (truth if node.op == "&&" else ~truth)
        right = _as_int(_eval(node.right, scope, need)) != 0
        return cast(Value, (truth & right) if node.op == "&&" else (truth | right))
    right = _as_int(_eval(node.right, scope, mask))
    if node.op in ("/", "%"):
        return _c_divide(left, right, mask, node.col, node.op)
    if node.op in ("<<", ">>"):
        return _shift(left, right, mask, node.col, node.op)
    return cast(Value, _ARITH[node.op](left, right))


def _subscript(node: Subscript, scope: Scope, mask: np.ndarray) -> Value:
    values = scope.array_values(node.array, node.col)
    index = _as_int(_eval(node.index, scope, mask))
    outside = (index < 0) | (index >= len(values))
    if _where_live(mask, outside):
        live = np.broadcast_to(mask, np.broadcast(mask, index).shape) & outside
        bad = np.broadcast_to(index, live.shape)[live][0]
        raise ExprError(
            f"index {int(bad)} outside [0, {len(values)}) of array {node.array!r}", node.col)
    return cast(Value, values[np.clip(index, 0, max(len(values) - 1, 0))])
