"""A whole .cu file -> the parts the interpreter needs: functions, macros, file constants,
type aliases and the host code's kernel launches.

The file is preprocessed first (preprocess.py: includes and conditionals), then parsed with
tree-sitter's CUDA grammar. Everything else in the file (host code, main, other kernels,
namespaces) is skipped; only what the chosen kernel reaches is ever compiled, so a construct
outside the subset elsewhere in the file is never an error. Positions are 1-based lines and
columns of the combined text; `Unit.source.place` names the file and line they came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import tree_sitter
import tree_sitter_cuda

from ..model.errors import PatternError
from ..model.pattern import suggest
from .preprocess import PREDEFINED, Source

Node = tree_sitter.Node


@lru_cache(maxsize=1)
def parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


def error(node: Node, message: str) -> PatternError:
    """An error at a node: place `line L`, 1-based column."""
    row, col = node.start_point
    return PatternError(f"line {row + 1}", message, col + 1)


def text(node: Node) -> str:
    return " ".join(node.text.decode("utf-8", "replace").split())


MAX_NESTING = 200  # levels of syntax below a function, a macro's text or a namespace


def check_syntax(node: Node) -> None:
    """Raise at the first syntax error inside `node` (tree-sitter marks ERROR / MISSING), or
    where it nests deeper than MAX_NESTING levels; both without recursion, so that the
    compiler, which recurses, only sees what it can compile."""
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
        if depth > MAX_NESTING:
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


@dataclass(frozen=True)
class Macro:
    """`#define NAME value` (params None) or `#define NAME(a, b) value`."""

    name: str
    params: tuple[str, ...] | None
    value: Node  # preproc_arg


@dataclass(frozen=True)
class Function:
    """A function definition; a template's `template` is its template_parameter_list, and an
    instantiation has its `bindings` (template parameter name -> templates.TypeName for a type,
    ir.Const for a value)."""

    node: Node  # function_definition
    name: str
    qualifiers: frozenset[str]  # __global__, __device__, __host__
    template: Node | None = None
    bindings: tuple[tuple[str, object], ...] = ()

    @property
    def params(self) -> list[Node]:
        decl = self.node.child_by_field_name("declarator")
        while decl.type not in ("function_declarator", "abstract_function_declarator"):
            decl = decl.child_by_field_name("declarator") or decl.named_children[0]
        plist = decl.child_by_field_name("parameters")
        return [c for c in plist.named_children if c.type != "comment"]

    @property
    def body(self) -> Node:
        return self.node.child_by_field_name("body")

    def takes(self, nargs: int) -> bool:
        """Whether a call with `nargs` arguments fits the parameters (defaults included)."""
        params = [p for p in self.params if text(p) != "void"]
        required = sum(p.type != "optional_parameter_declaration" for p in params)
        return required <= nargs <= len(params)


@dataclass(frozen=True)
class Launch:
    """A kernel launch in the host code, `name<targs><<<config>>>(...)`, or an explicit
    instantiation, `template __global__ void name<targs>(...);` (no config)."""

    name: str
    targs: Node | None  # template_argument_list
    config: tuple[Node, ...]  # grid, block[, dynamic shared bytes[, stream]]
    host: Node  # the function_definition the launch is in (or the instantiation)


@lru_cache(maxsize=1)
def predefined_macros() -> dict[str, "Macro"]:
    """The macros nvcc and the standard headers define (preprocess.PREDEFINED)."""
    unit = Unit(Source(PREDEFINED, ()), predefined=False)
    return unit.macros


BEFORE_ALL = (-1, -1)  # where the predefined macros are defined


def namespace_of(node: Node) -> str:
    """The namespaces a declaration is inside, outermost first: `a::b` ('' for none; an
    anonymous namespace adds no name)."""
    names = []
    while node is not None:
        if node.type == "namespace_definition" and node.child_by_field_name("name"):
            names.append(text(node.child_by_field_name("name")))
        node = node.parent
    return "::".join(reversed(names))


def visible(found: list[Function], caller: str) -> list[Function]:
    """The functions an unqualified call from namespace `caller` finds, as C++ looks names
    up: in the innermost enclosing namespace that declares one (the global namespace and
    anonymous namespaces last); functions of other namespaces are not seen."""
    def depth(f: Function) -> int:
        ns = namespace_of(f.node)
        inside = not ns or caller == ns or caller.startswith(ns + "::")
        return ns.count("::") + bool(ns) if inside else -1
    best = max(depth(f) for f in found)
    return [f for f in found if depth(f) == best] if best >= 0 else found


class Unit:
    """A parsed translation unit: functions by name, macros, file-scope declarations and type
    aliases, and the host code's kernel launches."""

    def __init__(self, source: Source, predefined: bool = True):
        self.tree = parser().parse(source.text.encode("utf-8"))
        self.functions: dict[str, list[Function]] = {}
        self.macros: dict[str, Macro] = dict(predefined_macros()) if predefined else {}
        # name -> [(point, Macro, or None for #undef)] in source order
        self._defs: dict[str, list[tuple[tuple[int, int], Macro | None]]] = {
            name: [(BEFORE_ALL, m)] for name, m in self.macros.items()}
        self.globals: dict[str, Node] = {}  # file-scope `const` / `constexpr` declarations
        self.types: dict[str, Node] = {}  # file-scope typedef / using -> its declaration
        # later file-scope typedefs / usings of a name in the same namespace: (name, node)
        self.redeclared: list[tuple[str, Node]] = []
        self.enumerators: dict[str, tuple[Node, int]] = {}  # name -> (enum_specifier, index)
        self.structs: dict[str, Node] = {}  # struct / class name -> its specifier with a body
        self.struct_templates: dict[str, tuple[Node, Node]] = {}  # -> (specifier, parameters)
        # `template <> struct X<args> {...}`: name -> [(specifier, template_argument_list)]
        self.struct_specializations: dict[str, list[tuple[Node, Node]]] = {}
        self.partial_specializations: dict[str, Node] = {}  # `template <class T> struct X<T*>`
        # `template <> R f<args>(...) {...}`: name -> [(template_argument_list, Function)]
        self.function_specializations: dict[str, list[tuple[Node, Function]]] = {}
        self.unnamed_specializations: dict[str, Node] = {}  # `template <> R f(...)`: args deduced
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
            elif kind in ("linkage_specification", "namespace_definition", "declaration_list",
                          "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif"):
                self._collect(child, template, depth + 1)
            elif kind in ("struct_specifier", "class_specifier"):
                self._struct(child, template)
            elif kind == "declaration":
                self._struct(child, template)
                for decl in child.children_by_field_name("declarator"):
                    name = declared_name(decl)
                    if name:
                        self.globals.setdefault(name, child)
            elif kind in ("type_definition", "alias_declaration") and template is None:
                self._struct(child, None)
                for name in alias_names(child):
                    if name not in self.types:
                        self.types[name] = child
                    elif namespaces(self.types[name]) == namespaces(child):
                        self.redeclared.append((name, child))
            elif kind == "template_instantiation":
                self._instantiation(child)
            if kind in ("enum_specifier", "declaration", "type_definition"):
                self._enumerators(child)

    def _instantiation(self, node: Node) -> None:
        """`template __global__ void k<32>(float *);` names an instantiation, as a launch."""
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type not in ("template_function", "identifier"):
            decl = decl.child_by_field_name("declarator")
        if decl is not None and decl.type == "template_function":
            self.launches.append(Launch(text(decl.child_by_field_name("name")),
                                        decl.child_by_field_name("arguments"), (), node))

    def _enumerators(self, node: Node) -> None:
        """The enumerators of a file-scope `enum { A = 1, B }` (also inside a typedef)."""
        spec = node if node.type == "enum_specifier" else node.child_by_field_name("type")
        body = None if spec is None or spec.type != "enum_specifier" else \
            spec.child_by_field_name("body")
        if body is None:
            return
        for k, item in enumerate(c for c in body.named_children if c.type == "enumerator"):
            self.enumerators.setdefault(text(item.child_by_field_name("name")), (spec, k))

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

    def _struct(self, node: Node, template: Node | None) -> None:
        """Struct and class definitions by name (a typedef's names too), nested ones included;
        a class template's under its name with its parameter list."""
        spec = node if node.type.endswith("_specifier") else node.child_by_field_name("type")
        if spec is None or spec.type not in ("struct_specifier", "class_specifier") or \
                spec.child_by_field_name("body") is None:
            return
        name = spec.child_by_field_name("name")
        if name is not None and name.type == "template_type":
            base = text(name.child_by_field_name("name"))
            if is_explicit_specialization(template):
                self.struct_specializations.setdefault(base, []).append(
                    (spec, name.child_by_field_name("arguments")))
            else:
                self.partial_specializations.setdefault(base, spec)
            return
        names = [text(name)] if name is not None else []
        if node.type == "type_definition":
            names += [text(d) for d in node.children_by_field_name("declarator")
                      if d.type == "type_identifier"]
        for n in names:
            if template is None:
                self.structs.setdefault(n, spec)
            else:
                self.struct_templates.setdefault(n, (spec, template))
        for field in spec.child_by_field_name("body").named_children:
            if field.type == "field_declaration" and template is None:
                self._struct(field, None)

    def _function(self, node: Node, template: Node | None) -> None:
        quals = frozenset(c.type for c in node.children if c.type in
                          ("__global__", "__device__", "__host__"))
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        named = decl.child_by_field_name("declarator") if decl is not None else None
        if named is not None and named.type == "template_function":  # f<args>(...)
            name = text(named.child_by_field_name("name"))
            self.function_specializations.setdefault(name, []).append(
                (named.child_by_field_name("arguments"), Function(node, name, quals)))
            return
        name = declared_name(node.child_by_field_name("declarator"))
        if name and is_explicit_specialization(template):
            self.unnamed_specializations.setdefault(name, node)
        elif name:
            self.functions.setdefault(name, []).append(Function(node, name, quals, template))

    def _directives(self) -> None:
        """Every `#define` and `#undef` of the text (in functions too), in source order."""
        cursor = self.tree.walk()
        while True:
            node = cursor.node
            if node.type in ("preproc_def", "preproc_function_def"):
                self._macro(node)
            elif node.type == "preproc_call" and text(
                    node.child_by_field_name("directive")) == "#undef":
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
        name = text(node.child_by_field_name("name"))
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

    def in_source(self, macro: Macro) -> bool:
        """Whether `macro` is defined in this unit's source (not predefined)."""
        return any(m is macro and at != BEFORE_ALL for at, m in self._defs.get(macro.name, ()))

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
        check_syntax(found[0].node)
        return found[0]

    def device_function(self, name: str, call: Node, nargs: int | None = None,
                        namespace: str = "") -> Function | None:
        """A `__device__` function callable from a kernel, or None if `name` is not one;
        overloads are told apart by how many arguments they take (`nargs`) and, for a
        qualified call `ns::f`, by the namespace they are declared in (`ns`)."""
        if name in self.unnamed_specializations:
            raise error(self.unnamed_specializations[name], f"a specialization of {name!r} "
                        f"that does not name its template arguments ({name}<...>) is outside "
                        "the subset")
        found = [f for f in self.functions.get(name, []) if "__device__" in f.qualifiers]
        if len(found) > 1 and nargs is not None:
            found = [f for f in found if f.takes(nargs)]
        if len(found) > 1 and namespace:
            found = [f for f in found if f"::{namespace_of(f.node)}".endswith(f"::{namespace}")]
        elif len(found) > 1:
            found = visible(found, namespace_of(call))
        if not found:
            return None
        if len(found) > 1:
            raise error(call, f"overloaded device function {name!r} with {nargs} arguments "
                              "is outside the subset")
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


def alias_names(node: Node) -> list[str]:
    """The names a `typedef` (type_definition) or `using X = ...` (alias_declaration) gives."""
    return [text(name) for name in alias_name_nodes(node)]


def alias_name_nodes(node: Node) -> list[Node]:
    """The identifiers a `typedef` or `using X = ...` declares, where they are written."""
    if node.type == "alias_declaration":
        return [node.child_by_field_name("name")]
    names = []
    for decl in node.children_by_field_name("declarator"):
        while decl is not None and decl.type != "type_identifier":
            decl = decl.child_by_field_name("declarator")
        if decl is not None:
            names.append(decl)
    return names


def namespaces(node: Node) -> tuple[str, ...]:
    """The names of the namespaces around a node, outermost first ('' for an unnamed one)."""
    names = []
    parent = node.parent
    while parent is not None:
        if parent.type == "namespace_definition":
            name = parent.child_by_field_name("name")
            names.append("" if name is None else text(name))
        parent = parent.parent
    return tuple(reversed(names))


def is_explicit_specialization(template: Node | None) -> bool:
    """Whether a template_parameter_list is the empty `template <>` of a specialization."""
    return template is not None and not [c for c in template.named_children
                                         if c.type != "comment"]


def declared_name(decl: Node) -> str | None:
    """The identifier a declarator declares (through pointers, arrays, init)."""
    while decl is not None and decl.type not in ("identifier", "field_identifier"):
        if decl.type in ("qualified_identifier", "operator_name", "destructor_name"):
            return None
        decl = decl.child_by_field_name("declarator")
    return None if decl is None else text(decl)
