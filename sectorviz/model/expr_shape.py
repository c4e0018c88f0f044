"""Expressions parsed once per shape: 100,000 lets of a pattern repeat a few shapes.

The shape of a text is the text with every name replaced by `_` and every short decimal
literal by `0` (`v12 + 1` -> `_ + 0`). Names and those literals are whole tokens whose
neighbours are neither letters nor digits, and a name followed by `(` (a function) is kept as
written, so the shape tokenizes as the text does, token for token, and parses to the same tree
with placeholders. A shape that a second text has is parsed once per process (a bounded
memo); each further text of it gets at once what a loader checks (its TreeNames, from the
shape's slots) and its tree when first read. The first text of a shape, and a shape that does
not parse, go to the parser itself, which names any error as written.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from typing import NamedTuple

from .errors import PatternError
from .expr import (
    NO_ARRAYS,
    Binary,
    Call,
    Cond,
    ExprError,
    Name,
    Node,
    Num,
    Subscript,
    TreeNames,
    Unary,
    children,
    parse,
    parse_text,
    tree_names,
)

_ATOM = re.compile(  # a name (not a function's) or a decimal literal of at most 18 digits
    r"\b([A-Za-z_][A-Za-z_0-9]*(?:\s*\.\s*[xyz])?\b(?!\s*\()|(?:[1-9][0-9]{0,17}|0)\b)")
_DIGITS = frozenset("0123456789")
SHORT_CHARS = 256  # a text this short goes through its shape, and is kept
TEXTS = SHAPES = 4096  # texts and shapes kept per process: a tree of at most SHORT_CHARS
#                        characters each, so a few MB


class Step(NamedTuple):
    """One node of a shape's tree, in post-order: what it is, the field the shape fixes, and
    where its column comes from (a placeholder's own, or after the one before it)."""

    kind: type  # Num, Name, Unary, Binary, Cond, Call or Subscript
    value: int  # a Num's value as the shape writes it
    text: str  # the operator, function, or name / array as the shape writes it
    slot: int  # the placeholder this node holds (a name, array or number), or -1
    anchor: int  # the last placeholder before the node's token, or -1
    delta: int  # column of the token: this far after the anchor's end (from 1 without one)
    arity: int  # sub-expressions it takes from the stack


class Shape(NamedTuple):
    """A parsed shape: its tree as post-order steps, and for each placeholder (in the order of
    the text) what it is and how deep in the tree it sits."""

    steps: tuple[Step, ...]
    levels: int  # levels of the tree (a leaf is 1)
    names: tuple[tuple[int, int], ...]  # (placeholder, its level) of each value name
    arrays: tuple[int, ...]  # the placeholders that are subscripted arrays


class Parsed:
    """One expression text, parsed: `names` (what a loader checks), `tree`, and the `shape` it
    went through (None: parsed whole)."""

    __slots__ = ("names", "shape", "_tree", "_text")

    def __init__(self, names: TreeNames, tree: Node | None = None, shape: Shape | None = None,
                 text: str = ""):
        self.names, self.shape, self._tree, self._text = names, shape, tree, text

    @classmethod
    def of_tree(cls, tree: Node) -> Parsed:
        return cls(tree_names(tree), tree)

    @property
    def tree(self) -> Node:
        """The tree, built from the shape's steps on first use."""
        if self._tree is None:
            assert self.shape is not None
            self._tree = _built(self.shape, self._text)
        return self._tree


def parsed_at(text: str, place: str) -> Parsed:
    """One expression's text -> Parsed, a short text through its shape and a longer one parsed
    whole; PatternError at `place` (e.g. `accesses[1].index`) with a 1-based column."""
    try:
        return _parsed_short(text) if len(text) <= SHORT_CHARS else Parsed.of_tree(parse(text))
    except ExprError as err:
        raise PatternError(place, err.message, err.column) from None


@lru_cache(maxsize=TEXTS)
def _parsed_short(text: str) -> Parsed:
    """A short text through its shape, kept: a pattern repeats its expressions (100,000
    accesses of one index parse once and share one tree)."""
    pieces = _ATOM.split(text)
    atoms = pieces[1::2]
    shape = _shape_again(_placeholders(pieces))
    if shape is None:
        return Parsed.of_tree(parse(text))  # raises the text's own error
    return Parsed(_names(shape, atoms), None, shape, text)


_SEEN: set[str] = set()  # shapes some text had (at most SHAPES, then forgotten)


def _shape_again(key: str) -> Shape | None:
    """The shape's parse from its second text on, None for its first: a text of a shape not
    seen before is parsed whole, so that a file of all-different shapes loads as fast as
    without them. None too for a shape that does not parse."""
    if key in _SEEN:
        return _shape(key)
    if len(_SEEN) >= SHAPES:
        _SEEN.clear()
    _SEEN.add(key)
    return None


def _placeholders(pieces: list[str]) -> str:
    """`_ATOM.split` of a text (overwritten) -> the text's shape."""
    for i in range(1, len(pieces), 2):
        pieces[i] = "0" if pieces[i][0] in _DIGITS else "_"
    return "".join(pieces)


@lru_cache(maxsize=SHAPES)
def _shape(key: str) -> Shape | None:
    """A shape's steps and slots; None when the shape does not parse."""
    try:
        template = parse_text(key)
    except ExprError:
        return None
    starts = [m.start() + 1 for m in _ATOM.finditer(key)]
    slot_of = {col: i for i, col in enumerate(starts)}
    steps: list[Step] = []
    names: list[tuple[int, int]] = []
    arrays: list[int] = []
    deepest, stack = 0, [(template, 1, False)]
    while stack:  # post-order, left to right
        node, level, done = stack.pop()
        below = children(node)
        if below and not done:
            stack.append((node, level, True))
            stack.extend((child, level + 1, False) for child in reversed(below))
            continue
        deepest = max(deepest, level)
        slot = slot_of.get(node.col, -1) if isinstance(node, (Name, Subscript, Num)) else -1
        if slot >= 0 and isinstance(node, Name):
            names.append((slot, level))
        elif slot >= 0 and isinstance(node, Subscript):
            arrays.append(slot)
        anchor = bisect_right(starts, node.col - 1) - 1  # placeholders before the token
        delta = node.col - (starts[anchor] + 1 if anchor >= 0 else 0)
        steps.append(Step(type(node), node.value if isinstance(node, Num) else 0,
                          _fixed_text(node), slot, anchor, delta, len(below)))
    if len({step.slot for step in steps} - {-1}) != len(starts):
        return None  # a placeholder the tree does not hold as a leaf
    return Shape(tuple(steps), deepest, tuple(names), tuple(arrays))


def _fixed_text(node: Node) -> str:
    """The text a node keeps from its shape: operator, function, name or array."""
    if isinstance(node, (Unary, Binary)):
        return node.op
    if isinstance(node, Call):
        return node.func
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Subscript):
        return node.array
    return ""


def _name(atom: str) -> str:
    """A name atom as the tokenizer writes it (`threadIdx . x` -> `threadIdx.x`)."""
    return "".join(atom.split()) if "." in atom else atom


def _names(shape: Shape, atoms: list[str]) -> TreeNames:
    """TreeNames of the text: the shape's levels, the atoms' names."""
    plain: dict[str, int] = {}
    for slot, level in shape.names:
        name = atoms[slot]
        if "." in name:
            name = _name(name)
        if plain.get(name, 0) < level:
            plain[name] = level
    arrays = {_name(atoms[slot]) for slot in shape.arrays} if shape.arrays else NO_ARRAYS
    return TreeNames(shape.levels, plain, arrays)


def _built(shape: Shape, text: str) -> Node:
    """The tree of `text`: the shape's steps with the text's atoms and columns put back."""
    pieces = _ATOM.split(text)
    atoms = pieces[1::2]
    starts, ends = [], []
    col = 1
    for i in range(1, len(pieces), 2):
        col += len(pieces[i - 1])
        starts.append(col)
        col += len(pieces[i])
        ends.append(col)
    stack: list[Node] = []
    for kind, value, fixed, slot, anchor, delta, arity in shape.steps:
        col = starts[slot] if slot >= 0 else ends[anchor] + delta if anchor >= 0 else delta
        below = stack[len(stack) - arity:]
        del stack[len(stack) - arity:]
        if slot >= 0 and kind is Num:
            value = int(atoms[slot])
        elif slot >= 0:
            fixed = _name(atoms[slot])
        stack.append(_node(kind, value, fixed, below, col))
    return stack[0]


def _node(kind: type, value: int, word: str, below: list[Node], col: int) -> Node:
    """One node of a kind from its fields and sub-expressions."""
    if kind is Num:
        return Num(value, col)
    if kind is Name:
        return Name(word, col)
    if kind is Binary:
        return Binary(word, below[0], below[1], col)
    if kind is Unary:
        return Unary(word, below[0], col)
    if kind is Subscript:
        return Subscript(word, below[0], col)
    if kind is Cond:
        return Cond(below[0], below[1], below[2], col)
    return Call(word, tuple(below), col)
