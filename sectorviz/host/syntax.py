"""A preprocessed .cu (preprocess.py) parsed with tree-sitter's CUDA grammar -> what the host
code reader needs: functions by name (qualifiers, parameters, template parameter list),
`#define`s in source order, file-scope declarations and the host code's kernel launches.

Positions are 1-based lines and columns of the combined text; `Source.place` names the file
and line they came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import tree_sitter
import tree_sitter_cuda

from ..model.errors import PatternError
from .preprocess import PREDEFINED, Source

Node = tree_sitter.Node
MAX_NESTING = 200  # levels of syntax below a function, a macro's text or a namespace
CONTAINERS = ("linkage_specification", "namespace_definition", "declaration_list",
              "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif")


@lru_cache(maxsize=1)
def parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


def error(node: Node, message: str) -> PatternError:
    """An error at a node: place `line L`, 1-based column."""
    row, col = node.start_point
    return PatternError(f"line {row + 1}", message, col + 1)


def text(node: Node | None) -> str:
    """A node's text with its whitespace runs folded to one space ('' for none)."""
    raw = None if node is None else node.text
    return "" if raw is None else " ".join(raw.decode("utf-8", "replace").split())


def declared_name(decl: Node | None) -> str | None:
    """The identifier a declarator declares (through pointers, arrays, init)."""
    while decl is not None and decl.type not in ("identifier", "field_identifier"):
        if decl.type in ("qualified_identifier", "operator_name", "destructor_name"):
            return None
        decl = decl.child_by_field_name("declarator")
    return None if decl is None else text(decl)


def check_syntax(node: Node) -> None:
    """Raise at the first syntax error inside `node` (tree-sitter marks ERROR / MISSING), or
    where it nests deeper than MAX_NESTING levels; both without recursion."""
    check_depth(node)
    while node.has_error:
        for child in node.children:
            if child.is_missing:
                raise error(child, f"syntax error: missing '{child.type}'")
            if child.type == "ERROR":
                raise error(child, f"syntax error near '{text(child)[:40]}'")
            if child.has_error:
                node = child
                break
        else:
            raise error(node, "syntax error")


def check_depth(node: Node) -> None:
    """Raise at the first node nested more than MAX_NESTING levels below `node`."""
    cursor, depth = node.walk(), 0
    while True:
        if depth > MAX_NESTING and cursor.node is not None:
            raise error(cursor.node, f"nested more than {MAX_NESTING} levels deep; sectorviz "
                                     f"compiles at most {MAX_NESTING}")
        if cursor.goto_first_child():
            depth += 1
            continue
        while depth and not cursor.goto_next_sibling():
            cursor.goto_parent()
            depth -= 1
        if not depth:
            return


def is_explicit_specialization(template: Node | None) -> bool:
    """Whether a template_parameter_list is the empty `template <>` of a specialization."""
    return template is not None and not [c for c in template.named_children
                                         if c.type != "comment"]


def qualifiers(node: Node) -> frozenset[str]:
    """The `__global__`, `__device__`, `__host__` of a function_definition."""
    return frozenset(c.type for c in node.children if c.type in
                     ("__global__", "__device__", "__host__"))


def function_declarator(node: Node) -> Node | None:
    """The function_declarator of a function_definition (None for one it does not hold)."""
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    return decl


@dataclass(frozen=True)
class Macro:
    """`#define NAME value` (params None) or `#define NAME(a, b) value`."""

    name: str
    params: tuple[str, ...] | None
    value: Node  # preproc_arg


@dataclass(frozen=True)
class Function:
    """A function definition: its name, `__global__` / `__device__` / `__host__`, and a
    template's template_parameter_list (None for a plain function)."""

    node: Node  # function_definition
    name: str
    qualifiers: frozenset[str]
    template: Node | None = None

    @property
    def params(self) -> list[Node]:
        decl = self.node.child_by_field_name("declarator")
        while decl is not None and decl.type not in ("function_declarator",
                                                     "abstract_function_declarator"):
            decl = decl.child_by_field_name("declarator") or decl.named_children[0]
        plist = None if decl is None else decl.child_by_field_name("parameters")
        return [] if plist is None else [c for c in plist.named_children
                                         if c.type != "comment"]


@dataclass(frozen=True)
class Launch:
    """A kernel launch in the host code, `name<targs><<<config>>>(...)`, or an explicit
    instantiation, `template __global__ void name<targs>(...);` (no config)."""

    name: str
    targs: Node | None  # template_argument_list
    config: tuple[Node, ...]  # grid, block[, dynamic shared bytes[, stream]]
    host: Node  # the function_definition the launch is in (or the instantiation)


@lru_cache(maxsize=1)
def predefined_macros() -> dict[str, Macro]:
    """The macros nvcc and the standard headers define (preprocess.PREDEFINED)."""
    return Unit(Source(PREDEFINED, ()), predefined=False).macros


BEFORE_ALL = (-1, -1)  # where the predefined macros are defined


class Unit:
    """A parsed translation unit: functions by name, macros, file-scope declarations and the
    host code's kernel launches. `visit` is called on every file-scope node, for what a
    subclass collects besides."""

    function_type: type[Function] = Function

    def __init__(self, source: Source, predefined: bool = True):
        self.tree = parser().parse(source.text.encode("utf-8"))
        self.functions: dict[str, list[Function]] = {}
        self.macros: dict[str, Macro] = dict(predefined_macros()) if predefined else {}
        # name -> [(point, Macro, or None for #undef)] in source order
        self._defs: dict[str, list[tuple[tuple[int, int], Macro | None]]] = {
            name: [(BEFORE_ALL, m)] for name, m in self.macros.items()}
        self.globals: dict[str, Node] = {}  # file-scope declarations by name
        self.launches: list[Launch] = []
        self._collect(self.tree.root_node, None)
        self._directives()

    def _collect(self, node: Node, template: Node | None, depth: int = 0) -> None:
        if depth > MAX_NESTING:
            raise error(node, f"namespaces, templates or #if blocks nested more than "
                              f"{MAX_NESTING} levels deep")
        for child in node.named_children:
            kind = child.type
            if kind == "function_definition":
                self._function(child, template)
                self._launches(child)
            elif kind == "template_declaration":
                self._collect(child, child.child_by_field_name("parameters"), depth + 1)
            elif kind in CONTAINERS:
                self._collect(child, template, depth + 1)
            elif kind == "declaration":
                for decl in child.children_by_field_name("declarator"):
                    name = declared_name(decl)
                    if name:
                        self.globals.setdefault(name, child)
            elif kind == "template_instantiation":
                self._instantiation(child)
            self.visit(child, template)

    def visit(self, node: Node, template: Node | None) -> None:
        """A file-scope node (under `template`, a template_parameter_list, or None): nothing
        more is collected here."""

    def _function(self, node: Node, template: Node | None) -> None:
        """A function definition, by its name (not an explicit specialization's)."""
        name = declared_name(node.child_by_field_name("declarator"))
        if name and not is_explicit_specialization(template):
            self.functions.setdefault(name, []).append(
                self.function_type(node, name, qualifiers(node), template))

    def _instantiation(self, node: Node) -> None:
        """`template __global__ void k<32>(float *);` names an instantiation, as a launch."""
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type not in ("template_function", "identifier"):
            decl = decl.child_by_field_name("declarator")
        if decl is not None and decl.type == "template_function":
            self.launches.append(Launch(text(decl.child_by_field_name("name")),
                                        decl.child_by_field_name("arguments"), (), node))

    def _launches(self, node: Node) -> None:
        """Every `kernel<<<...>>>(...)` call inside a host function."""
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "call_expression":
                config = next((c for c in n.named_children if c.type == "kernel_call_syntax"),
                              None)
                fn = n.child_by_field_name("function")
                if config is not None and fn is not None:
                    targs = None
                    if fn.type == "template_function":
                        targs = fn.child_by_field_name("arguments")
                        fn = fn.child_by_field_name("name")
                    self.launches.append(Launch(text(fn).split("::")[-1], targs, tuple(
                        c for c in config.named_children if c.type != "comment"), node))
            stack.extend(reversed(n.named_children))

    def _directives(self) -> None:
        """Every `#define` and `#undef` of the text (in functions too), in source order."""
        cursor = self.tree.walk()
        while True:
            node = cursor.node
            assert node is not None
            if node.type in ("preproc_def", "preproc_function_def"):
                self._macro(node)
            elif node.type == "preproc_call" and (directive := node.child_by_field_name(
                    "directive")) is not None and text(directive) == "#undef":
                arg = node.child_by_field_name("argument")
                if arg is not None:
                    self._defs.setdefault(text(arg), []).append((node.start_point, None))
            if not (node.type not in ("preproc_def", "preproc_function_def", "preproc_call")
                    and cursor.goto_first_child()):
                while not cursor.goto_next_sibling():
                    if not cursor.goto_parent():
                        return

    def _macro(self, node: Node) -> None:
        value = node.child_by_field_name("value")
        name_node = node.child_by_field_name("name")
        assert name_node is not None
        name = text(name_node)
        params = node.child_by_field_name("parameters")
        macro = None if value is None else Macro(
            name, None if params is None else tuple(text(p) for p in params.named_children),
            value)
        if macro is not None:
            self.macros[name] = macro
        self._defs.setdefault(name, []).append((node.start_point, macro))

    def macro(self, name: str, point: tuple[int, int]) -> Macro | None:
        """The definition of `name` in effect at `point` (0-based row, column): the last
        `#define` before it with no `#undef` in between; None when there is none."""
        found = None
        for at, macro in self._defs.get(name, ()):
            if at > point:
                break
            found = macro
        return found

    def fragment(self, value: Node) -> Node:
        """A macro's text parsed as an expression, placed at the text's own line and column so
        positions inside it are the file's -> its parenthesized_expression node."""
        row, col = value.start_point
        head = "int __m=("
        body = (value.text or b"").decode().replace("\\\n", "  ")
        snippet = "\n" * row + " " * max(col - len(head), 0) + head + body + ");"
        tree = parser().parse(snippet.encode())
        check_syntax(tree.root_node)
        init = tree.root_node.named_children[0].child_by_field_name("declarator")
        assert init is not None
        found = init.child_by_field_name("value")
        assert found is not None
        return found
