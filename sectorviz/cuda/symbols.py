"""What the compiler's scopes hold besides ir values: variables, __shared__ variables,
per-thread arrays, lambdas, inlined-call frames; and the small syntax helpers all its parts use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import ctype as C
from . import ir
from .source import Node, text


@dataclass
class Var:
    """A local variable or parameter: its slot and (for pointers, updatable) type."""

    slot: int
    type: C.CType
    name: str


@dataclass
class Shared:
    """A __shared__ variable at a fixed offset of the block's shared memory."""

    name: str
    type: C.CType
    address: int


class Widened(Exception):
    """A pointer variable points into more arrays than its type says: compile again."""


@dataclass
class LocalArray:
    """A per-thread array (registers): its slot, type and number of scalar elements."""

    slot: int
    type: C.Array
    elem: C.Num
    name: str


@dataclass
class LocalRef:
    """A per-thread array or sub-array being subscripted: flat element index so far."""

    array: LocalArray
    type: C.CType
    index: ir.Expr


@dataclass
class Lambda:
    """A lambda defined in the kernel, inlined at each call with the scopes it sees."""

    node: Node  # lambda_expression
    name: str
    scopes: list[dict]


@dataclass
class Frame:
    """A __device__ function being inlined: where `return` puts its value."""

    name: str
    result: int
    type: C.CType
    this: object = None  # a member function's object (Var, ir.Part or ir.Memory)
    ref: bool = False  # returns a reference (`return *this;`)
    body: Node | None = None  # the body being inlined (overloads share a name)


@dataclass(frozen=True)
class GroupNamespace:
    """A name standing for `cooperative_groups` in a scope: `namespace g = cooperative_groups;`
    inside a function body."""


def pos(node: Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.start_point[1] + 1


def qualifiers(decl: Node) -> set[str]:
    """A declaration's qualifiers and storage classes: const, __shared__, __constant__, ..."""
    return {text(c) for c in decl.children
            if c.type in ("type_qualifier", "storage_class_specifier")}


def is_group_type(node: Node, namespaces: Callable[[Node | None], bool]) -> bool:
    """`cg::thread_block`, `thread_block_tile<32>`, `cg::thread_block_tile<16, ...>`;
    `namespaces` says whether a scope names cooperative_groups."""
    if node.type == "qualified_identifier":
        return namespaces(node.child_by_field_name("scope")) and \
            is_group_type(node.child_by_field_name("name"), namespaces)
    if node.type == "template_type":
        node = node.child_by_field_name("name")
    return node.type in ("type_identifier", "identifier") and \
        text(node) in C.GROUP_TYPES | {"thread_block_tile"}


def is_reference(decl: Node) -> bool:
    """Whether a declarator declares a reference (`float &x`)."""
    while decl is not None and decl.type != "identifier":
        if decl.type == "reference_declarator":
            return True
        decl = decl.child_by_field_name("declarator")
    return False
