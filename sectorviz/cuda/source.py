"""A whole .cu file -> the parts the interpreter needs: functions, macros, file constants.

Parsed with tree-sitter's CUDA grammar. Everything else in the file (#include, host code,
main, other kernels, namespaces) is skipped; only what the chosen kernel reaches is ever
compiled, so a construct outside the subset elsewhere in the file is never an error.
Positions are 1-based lines and columns of the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import tree_sitter
import tree_sitter_cuda

from ..model.errors import PatternError
from ..model.pattern import suggest

Node = tree_sitter.Node
_ALIGN = re.compile(r"\b__(builtin_)?align__\b")  # CUDA's spelling of alignas, same columns


@lru_cache(maxsize=1)
def parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


def error(node: Node, message: str) -> PatternError:
    """An error at a node: place `line L`, 1-based column."""
    row, col = node.start_point
    return PatternError(f"line {row + 1}", message, col + 1)


def text(node: Node) -> str:
    return " ".join(node.text.decode("utf-8", "replace").split())


def check_syntax(node: Node) -> None:
    """Raise at the first syntax error inside `node` (tree-sitter marks ERROR / MISSING)."""
    if not node.has_error:
        return
    for child in node.children:
        if child.is_missing:
            raise error(child, f"syntax error: missing '{child.type}'")
        if child.type == "ERROR":
            raise error(child, f"syntax error near '{text(child)[:40]}'")
        check_syntax(child)
    raise error(node, "syntax error")


@dataclass(frozen=True)
class Macro:
    """`#define NAME value` (params None) or `#define NAME(a, b) value`."""

    name: str
    params: tuple[str, ...] | None
    value: Node  # preproc_arg


@dataclass(frozen=True)
class Function:
    node: Node  # function_definition
    name: str
    qualifiers: frozenset[str]  # __global__, __device__, __host__
    template: bool

    @property
    def params(self) -> list[Node]:
        decl = self.node.child_by_field_name("declarator")
        while decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator") or decl.named_children[0]
        plist = decl.child_by_field_name("parameters")
        return [c for c in plist.named_children if c.type != "comment"]

    @property
    def body(self) -> Node:
        return self.node.child_by_field_name("body")


class Unit:
    """A parsed translation unit: functions by name, macros, file-scope declarations."""

    def __init__(self, source: str):
        self.source = _ALIGN.sub(lambda m: "alignas" + " " * (len(m.group()) - 7),
                                 source).encode("utf-8")
        self.tree = parser().parse(self.source)
        self.functions: dict[str, list[Function]] = {}
        self.macros: dict[str, Macro] = {}
        self.globals: dict[str, Node] = {}  # file-scope `const` / `constexpr` declarations
        self.structs: dict[str, Node] = {}  # struct / class name -> its specifier with a body
        self._collect(self.tree.root_node, False)

    def _collect(self, node: Node, template: bool) -> None:
        for child in node.named_children:
            kind = child.type
            if kind == "function_definition":
                self._function(child, template)
            elif kind == "template_declaration":
                self._collect(child, True)
            elif kind in ("linkage_specification", "namespace_definition", "declaration_list",
                          "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
                self._collect(child, template)
            elif kind in ("preproc_def", "preproc_function_def"):
                self._macro(child)
            elif kind in ("struct_specifier", "class_specifier", "type_definition") and \
                    not template:
                self._struct(child)
            elif kind == "declaration":
                self._struct(child)
                for decl in child.children_by_field_name("declarator"):
                    name = declared_name(decl)
                    if name:
                        self.globals.setdefault(name, child)

    def _struct(self, node: Node) -> None:
        """Struct and class definitions by name (a typedef's names too), nested ones included."""
        spec = node if node.type.endswith("_specifier") else node.child_by_field_name("type")
        if spec is None or spec.type not in ("struct_specifier", "class_specifier") or \
                spec.child_by_field_name("body") is None:
            return
        name = spec.child_by_field_name("name")
        names = [text(name)] if name is not None else []
        if node.type == "type_definition":
            names += [text(d) for d in node.children_by_field_name("declarator")
                      if d.type == "type_identifier"]
        for n in names:
            self.structs.setdefault(n, spec)
        for field in spec.child_by_field_name("body").named_children:
            if field.type == "field_declaration":
                self._struct(field)

    def _function(self, node: Node, template: bool) -> None:
        quals = frozenset(c.type for c in node.children if c.type in
                          ("__global__", "__device__", "__host__"))
        decl = node.child_by_field_name("declarator")
        name = declared_name(decl) if decl is not None else None
        if name:
            self.functions.setdefault(name, []).append(Function(node, name, quals, template))

    def _macro(self, node: Node) -> None:
        value = node.child_by_field_name("value")
        name = text(node.child_by_field_name("name"))
        params = node.child_by_field_name("parameters")
        if value is None:
            return
        self.macros[name] = Macro(
            name, None if params is None else tuple(text(p) for p in params.named_children),
            value)

    def kernel(self, name: str) -> Function:
        """The `__global__` function `name`; PatternError at `kernel.function` otherwise."""
        kernels = {n: fs for n, fs in self.functions.items()
                   if any("__global__" in f.qualifiers for f in fs)}
        found = [f for f in kernels.get(name, []) if "__global__" in f.qualifiers]
        if not found:
            listing = ", ".join(sorted(kernels)) or "none"
            raise PatternError("kernel.function", f"no __global__ function {name!r} in the "
                                                  f"source (kernels: {listing})"
                               + suggest(name, kernels))
        if len(found) > 1:
            raise error(found[1].node, f"kernel {name!r} is defined more than once")
        fn = found[0]
        if fn.template:
            raise error(fn.node, "template kernels are outside the subset")
        check_syntax(fn.node)
        return fn

    def device_function(self, name: str, call: Node) -> Function | None:
        """A `__device__` function callable from a kernel, or None if `name` is not one."""
        found = [f for f in self.functions.get(name, []) if "__device__" in f.qualifiers]
        if not found:
            return None
        if len(found) > 1:
            raise error(call, f"overloaded device function {name!r} is outside the subset")
        if found[0].template:
            raise error(call, f"template device function {name!r} is outside the subset")
        check_syntax(found[0].node)
        return found[0]

    def fragment(self, value: Node) -> Node:
        """A macro's text parsed as an expression, placed at the text's own line and column so
        positions inside it are the file's -> its parenthesized_expression node."""
        row, col = value.start_point
        head = "int __m=("
        body = value.text.decode().replace("\\\n", "  ")
        snippet = "\n" * row + " " * max(col - len(head), 0) + head + body + ");"
        tree = parser().parse(snippet.encode())
        check_syntax(tree.root_node)
        init = tree.root_node.named_children[0].child_by_field_name("declarator")
        return init.child_by_field_name("value")


def declared_name(decl: Node) -> str | None:
    """The identifier a declarator declares (through pointers, arrays, init)."""
    while decl is not None and decl.type not in ("identifier", "field_identifier"):
        if decl.type in ("qualified_identifier", "operator_name", "destructor_name"):
            return None
        decl = decl.child_by_field_name("declarator")
    return None if decl is None else text(decl)
