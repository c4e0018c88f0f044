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

from ..host import syntax
from ..host.syntax import (
    BEFORE_ALL,
    MAX_NESTING,
    Macro,
    Node,
    check_syntax,
    declared_name,
    error,
    function_declarator,
    is_explicit_specialization,
    qualifiers,
    text,
)
from ..model.errors import PatternError
from ..model.pattern import suggest

__all__ = ["MAX_NESTING", "Node", "check_syntax", "declared_name", "error", "text"]


@dataclass(frozen=True)
class Function(syntax.Function):
    """A function definition (syntax.Function); an instantiation has its `bindings`
    (template parameter name -> templates.TypeName for a type, ir.Const for a value)."""

    bindings: tuple[tuple[str, object], ...] = ()

    @property
    def body(self) -> Node:
        return self.node.child_by_field_name("body")

    def takes(self, nargs: int) -> bool:
        """Whether a call with `nargs` arguments fits the parameters (defaults included)."""
        params = [p for p in self.params if text(p) != "void"]
        required = sum(p.type != "optional_parameter_declaration" for p in params)
        return required <= nargs <= len(params)


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


class Unit(syntax.Unit):
    """A parsed translation unit (syntax.Unit) with what the interpreter needs besides:
    file-scope type aliases, enumerators, structs and their templates and specializations."""

    function_type = Function

    def __init__(self, source, predefined: bool = True):
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
        super().__init__(source, predefined)

    def visit(self, node: Node, template: Node | None) -> None:
        kind = node.type
        if kind in ("struct_specifier", "class_specifier", "declaration"):
            self._struct(node, template)
        elif kind in ("type_definition", "alias_declaration") and template is None:
            self._struct(node, None)
            for name in alias_names(node):
                if name not in self.types:
                    self.types[name] = node
                elif namespaces(self.types[name]) == namespaces(node):
                    self.redeclared.append((name, node))
        if kind in ("enum_specifier", "declaration", "type_definition"):
            self._enumerators(node)

    def _enumerators(self, node: Node) -> None:
        """The enumerators of a file-scope `enum { A = 1, B }` (also inside a typedef)."""
        spec = node if node.type == "enum_specifier" else node.child_by_field_name("type")
        body = None if spec is None or spec.type != "enum_specifier" else \
            spec.child_by_field_name("body")
        if body is None:
            return
        for k, item in enumerate(c for c in body.named_children if c.type == "enumerator"):
            self.enumerators.setdefault(text(item.child_by_field_name("name")), (spec, k))

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
        decl = function_declarator(node)
        named = decl.child_by_field_name("declarator") if decl is not None else None
        if named is not None and named.type == "template_function":  # f<args>(...)
            name = text(named.child_by_field_name("name"))
            self.function_specializations.setdefault(name, []).append(
                (named.child_by_field_name("arguments"), Function(node, name, qualifiers(node))))
            return
        name = declared_name(node.child_by_field_name("declarator"))
        if name and is_explicit_specialization(template):
            self.unnamed_specializations.setdefault(name, node)
        super()._function(node, template)

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
