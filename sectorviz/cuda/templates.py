"""Templates and type names: a template function + its arguments -> an instantiation whose
bindings the compiler puts in scope; typedef / using / macro type names -> C types.

Bindings map a template parameter's name to a `TypeName` (a type argument), an `ir.Const`
(a value argument) or a `Callee` (a function passed as a template argument). The compiler keeps them
in its scope stack like any name: `base_type` (through `Compiler.named_type`) finds a TypeName, an
identifier finds the Const. A class template can reuse the same machinery:
`bind(compiler, plist, explicit, deduced, node, what)` takes any template_parameter_list and its
argument nodes, and the dict it returns is pushed as a scope (`compiler.scopes.append(bindings)`)
while the class's members are compiled.

Instantiations are named as Nsight Compute prints them: `"MatrixMulCUDA<32>"`,
`"reduce<float, 256>"` (also with a leading `void` and a trailing parameter list). A bare
template name picks the one instantiation the file's host code launches, or the defaults.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Iterator

import numpy as np

from ..compiled.entries import split_name
from ..host.syntax import Launch, parser
from ..model.errors import PatternError
from . import ctype as C
from . import ir
from .source import Function, Node, Unit, check_syntax, error, text

if TYPE_CHECKING:
    from .compile import Compiler


@dataclass(frozen=True)
class TypeName:
    """A name standing for a type in a scope: a template type parameter or a typedef."""

    type: C.CType
    node: Node | None = field(default=None, compare=False)  # a local typedef: its declaration


@dataclass(frozen=True)
class Callee:
    """A template argument that names a __device__ function (`blockReduce<warpSum>`): a call
    of the parameter calls that function."""

    name: str


def callee(compiler: "Compiler", name: str) -> str:
    """The function a call of `name` calls: the bound function when `name` is a template
    parameter holding one, else `name`."""
    for scope in reversed(compiler.scopes):
        if name in scope:
            return scope[name].name if isinstance(scope[name], Callee) else name
    return name


@dataclass(frozen=True)
class Param:
    """One template parameter: a type (`typename T = float`) or a value (`int N = 4`)."""

    name: str
    node: Node
    type: Node | None  # a value parameter's declared type
    default: Node | None


def parameters(plist: Node) -> list[Param]:
    """template_parameter_list -> its Params; variadic and template template parameters are
    outside the subset."""
    out = []
    for p in plist.named_children:
        kind = p.type
        if kind == "comment":
            continue
        if kind == "type_parameter_declaration":
            names = [c for c in p.named_children if c.type == "type_identifier"]
            if not names:
                raise error(p, "an unnamed template parameter is outside the subset")
            out.append(Param(text(names[0]), p, None, None))
        elif kind == "optional_type_parameter_declaration":
            out.append(Param(text(p.child_by_field_name("name")), p, None,
                             p.child_by_field_name("default_type")))
        elif kind in ("parameter_declaration", "optional_parameter_declaration"):
            decl = p.child_by_field_name("declarator")
            if decl is None or decl.type != "identifier":
                raise error(p, f"template parameter '{text(p)}' is outside the subset")
            out.append(Param(text(decl), p, p.child_by_field_name("type"),
                             p.child_by_field_name("default_value")))
        else:
            raise error(p, f"template parameter '{text(p)}' is outside the subset")
    return out


def arguments(targs: Node | None) -> list[Node]:
    """template_argument_list -> its argument nodes."""
    if targs is None:
        return []
    return [a for a in targs.named_children if a.type != "comment"]


@contextlib.contextmanager
def file_scope(compiler: "Compiler", host: Node | None = None) -> Iterator[None]:
    """Compile in the file's scope (no locals, no enclosing template's bindings), or with the
    `const` / `constexpr` integers of a host function (`host`) whose values are constants."""
    saved, compiler.scopes = compiler.scopes, [{}]
    try:
        if host is not None:
            _host_constants(compiler, host)
        yield
    finally:
        compiler.scopes = saved


def _host_constants(compiler: "Compiler", host: Node) -> None:
    """The constant `const int n = 256;`-style locals of a host function, in source order,
    into the compiler's scope; anything else there is skipped."""
    stack = [host.child_by_field_name("body")]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if node.type != "declaration":
            stack.extend(reversed(node.named_children))
            continue
        quals = {text(c) for c in node.children if c.type == "type_qualifier"}
        if not quals & {"const", "constexpr"}:
            continue
        try:
            base = compiler.base_type(node.child_by_field_name("type"))
            for decl in node.children_by_field_name("declarator"):
                name, t, init = compiler.unwrap(decl, base)
                if init is not None and name is not None:
                    e = compiler.rvalue(init)
                    t = e.type if t is C.AUTO else t
                    value = local_constant(t, compiler.converted(e, t, init), quals)
                    if value is not None:
                        compiler.scopes[-1][name] = value
        except PatternError:
            continue


def _value(compiler: "Compiler", param: Param, node: Node) -> ir.Const | Callee:
    """A value argument (an expression, or a name tree-sitter took for a type) -> its Const
    in the parameter's type, or the Callee a function's name gives."""
    named = callee(compiler, text(node))
    if named in compiler.unit.functions and not any(named in s for s in compiler.scopes):
        return Callee(named)
    t = compiler.base_type(param.type)
    if not C.is_int(t):
        raise error(param.node, f"a template parameter of type {C.name_of(t)} is outside the "
                                "subset")
    if node.type == "type_descriptor":
        inner = node.child_by_field_name("type")
        if node.child_by_field_name("declarator") is not None or \
                inner.type != "type_identifier":
            raise error(node, f"template parameter {param.name!r} takes a value, not a type")
        e = compiler.value_of(compiler.x_identifier(inner), inner)
    else:
        e = compiler.rvalue(node)
    if not e.const or not isinstance(e.type, C.Num) or e.type.floating:
        raise error(node, f"template argument '{text(node)}' must be an integer constant")
    return ir.Const(ir.constant_value(compiler.cast(e, t)), t, e.pos)


_TYPE_NODES = {"primitive_type", "type_identifier", "sized_type_specifier",
               "qualified_identifier", "template_type"}


def _type(compiler: "Compiler", param: Param, node: Node) -> TypeName:
    """A type argument (a type_descriptor, or a bare type as a default) -> its TypeName."""
    if node.type == "type_descriptor":
        return TypeName(compiler.type_descriptor(node))
    if node.type in _TYPE_NODES:
        return TypeName(compiler.base_type(node))
    raise error(node, f"template parameter {param.name!r} takes a type, not '{text(node)}'")


def bind(compiler: "Compiler", plist: Node, explicit: list[Node], deduced: dict[str, C.CType],
         node: Node, what: str) -> dict[str, TypeName | ir.Const | Callee]:
    """Template parameters <- explicit argument nodes (compiled in the current scope), then
    types deduced from call arguments, then defaults (which see the earlier parameters)."""
    params = parameters(plist)
    if len(explicit) > len(params):
        raise error(node, f"{what} takes {len(params)} template arguments, got {len(explicit)}")
    values = [(_type if p.type is None else _value)(compiler, p, a)
              for p, a in zip(params, explicit)]
    bindings: dict[str, TypeName | ir.Const | Callee] = {}
    compiler.scopes.append(bindings)
    try:
        for k, p in enumerate(params):
            if k < len(values):
                bindings[p.name] = values[k]
            elif p.name in deduced:
                bindings[p.name] = TypeName(deduced[p.name])
            elif p.default is not None:
                bindings[p.name] = _type(compiler, p, p.default) if p.type is None else \
                    _value(compiler, p, p.default)
            else:
                raise error(node, f"the template argument {p.name!r} of {what} is not given "
                                  "and cannot be deduced")
    finally:
        compiler.scopes.pop()
    return bindings


def deduce(fn: Function, args: list[ir.Expr]) -> dict[str, C.CType]:
    """Type parameters used bare as a parameter's type (`T x`, `const T &x`, `T *p`) <- the
    call's argument types."""
    names = {p.name for p in parameters(fn.template) if p.type is None}
    found: dict[str, C.CType] = {}
    for p, a in zip(fn.params, args):
        tnode = p.child_by_field_name("type")
        if tnode is None or tnode.type != "type_identifier" or text(tnode) not in names:
            continue
        decl, pointer = p.child_by_field_name("declarator"), False
        while decl is not None:
            pointer |= decl.type == "pointer_declarator"
            decl = decl.child_by_field_name("declarator")
        t = a.type.to if pointer and isinstance(a.type, C.Pointer) else a.type
        found.setdefault(text(tnode), t)
    return found


def instantiate(compiler: "Compiler", fn: Function, explicit: list[Node],
                args: list[ir.Expr], node: Node) -> Function:
    """A template device function called as `f<explicit...>(args)` -> its instantiation."""
    if fn.template is None:
        if explicit:
            raise error(node, f"{fn.name!r} is not a template")
        return fn
    bindings = bind(compiler, fn.template, explicit, deduce(fn, args), node, repr(fn.name))
    return instance(compiler, fn, bindings)


def instance(compiler: "Compiler", fn: Function, bindings: dict) -> Function:
    """Template `fn` with `bindings` -> its explicit specialization for those arguments
    (`template <> R f<args>(...)`) when the unit has one, else `fn` with the bindings."""
    for args, special in compiler.unit.function_specializations.get(fn.name, []):
        with file_scope(compiler):
            theirs = bind(compiler, fn.template, arguments(args), {}, args, repr(fn.name))
        if _key(theirs) == _key(bindings) and \
                special.qualifiers & {"__global__", "__device__"} == \
                fn.qualifiers & {"__global__", "__device__"}:
            return special
    return replace(fn, bindings=tuple(bindings.items()))


# ---------------------------------------------------------------- the kernel's instantiation


def _spec_arguments(name: str, args: str) -> list[Node]:
    """The text between `<` and `>` of the pattern's function name -> argument nodes."""
    tree = parser().parse(f"void __f() {{ {name}<{args}>(); }}".encode())
    try:
        check_syntax(tree.root_node)
    except PatternError:
        raise PatternError("kernel.function", f"cannot read the template arguments "
                                               f"<{args}>") from None
    call = tree.root_node.named_children[0].child_by_field_name("body").named_children[0]
    fn = call.named_children[0].child_by_field_name("function")
    return arguments(fn.child_by_field_name("arguments"))


def _key(bindings: dict) -> tuple:
    return tuple((n, b if not isinstance(b, ir.Const) else (b.type, int(b.value)))
                 for n, b in bindings.items())


def _launch_bindings(compiler: "Compiler", fn: Function, launch: Launch) -> dict | None:
    """The bindings a host launch gives a template kernel; None when they are not constants."""
    try:
        with file_scope(compiler, launch.host):
            return bind(compiler, fn.template, arguments(launch.targs), {}, fn.node,
                        repr(fn.name))
    except PatternError:
        return None


def kernel_instance(compiler: "Compiler", unit: Unit, spec: str) -> Function:
    """The pattern's `kernel.function` -> the __global__ function, instantiated if it is a
    template; PatternError at `kernel.function` when it names none or is ambiguous."""
    name, args = split_name(spec)
    fn = unit.kernel(name)
    if fn.template is None:
        if args is not None:
            raise PatternError("kernel.function", f"{name!r} is not a template kernel")
        return fn
    if args is not None:
        try:
            with file_scope(compiler):
                bindings = bind(compiler, fn.template, _spec_arguments(name, args), {},
                                fn.node, repr(name))
        except PatternError as err:
            raise PatternError("kernel.function", err.message) from None
        return instance(compiler, fn, bindings)
    launched: dict[tuple | str, tuple[str, dict | None]] = {}  # one per instantiation
    for launch in unit.launches:
        if launch.name == name and launch.targs is not None:
            bindings = _launch_bindings(compiler, fn, launch)
            key = text(launch.targs) if bindings is None else _key(bindings)
            launched.setdefault(key, (text(launch.targs), bindings))
    if len(launched) > 1:
        shown = [name + t for t, _ in launched.values()]
        raise PatternError("kernel.function",
                           f"the file launches (or instantiates) {len(launched)} "
                           f"instantiations of {name!r} ("
                           + ", ".join(shown) + f"); name one, e.g. \"{shown[0]}\"")
    if launched:
        targs, bindings = next(iter(launched.values()))
        if bindings is None:
            raise PatternError("kernel.function", f"the launch of {name}{targs} has template "
                                                  "arguments that are not constants; name the "
                                                  f"instantiation, e.g. \"{name}<...>\"")
        return instance(compiler, fn, bindings)
    try:
        with file_scope(compiler):
            bindings = bind(compiler, fn.template, [], {}, fn.node, repr(name))
    except PatternError:
        raise PatternError("kernel.function", f"{name!r} is a template kernel that the file "
                                              f"does not launch; name the instantiation, "
                                              f"e.g. \"{name}<...>\"") from None
    return instance(compiler, fn, bindings)


def launch_shared_bytes(compiler: "Compiler", unit: Unit, fn: Function) -> int | None:
    """The dynamic shared memory bytes (third launch argument) of the host code's launches of
    this kernel (this instantiation), when they all give the same constant; else None."""
    found = set()
    for launch in unit.launches:
        if launch.name != fn.name or len(launch.config) < 3:
            continue
        if fn.template is not None:
            bindings = _launch_bindings(compiler, fn, launch) if launch.targs is not None \
                else None
            if bindings is None or _key(bindings) != _key(dict(fn.bindings)):
                continue
        try:
            with file_scope(compiler, launch.host):
                found.add(compiler.constant_int(launch.config[2]))
        except PatternError:
            return None
    return found.pop() if len(found) == 1 else None


# ---------------------------------------------------------------- type names


def type_named_by(compiler: "Compiler", node: Node) -> C.CType | None:
    """An expression node that names a type (`sizeof(T)`, `T(x)`, `(T)(x)`, `float(x)` parse
    as expressions) -> that type; None when it names none."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "primitive_type":
        return compiler.base_type(node)
    if node.type != "identifier":
        return None
    name = text(node)
    for scope in reversed(compiler.scopes):
        if name in scope:
            return scope[name].type if isinstance(scope[name], TypeName) else None
    if name in compiler.unit.types:
        return compiler.named_type(name, node)
    macro = compiler.macro(name, node)
    if macro is not None and macro.params is None:
        try:
            return macro_type(compiler, macro.value, node)
        except PatternError:
            return None
    if name in C.NAMED and name not in compiler.unit.macros and \
            name not in compiler.unit.functions:
        return C.NAMED[name]
    return None


def alias_type(compiler: "Compiler", node: Node, name: str) -> C.CType:
    """A `typedef` or `using` declaration -> the type it gives `name`."""
    if node.type == "alias_declaration":
        return compiler.type_descriptor(node.child_by_field_name("type"))
    t = compiler.base_type(node.child_by_field_name("type"))
    for decl in node.children_by_field_name("declarator"):
        sizes, inner = [], t
        while decl is not None and decl.type != "type_identifier":
            if decl.type == "pointer_declarator":
                inner = C.Pointer(inner, "", "")
            elif decl.type == "array_declarator":
                sizes.append(decl.child_by_field_name("size"))
            elif decl.type != "parenthesized_declarator":
                raise error(decl, f"typedef '{text(decl)}' is outside the subset")
            decl = decl.child_by_field_name("declarator")
        if decl is not None and text(decl) == name:
            for size in sizes:
                inner = C.Array(inner, 0 if size is None else compiler.constant_int(size))
            return inner
    raise error(node, f"no type {name!r} in '{text(node)[:40]}'")


def macro_type(compiler: "Compiler", value: Node, node: Node) -> C.CType:
    """`#define real float`: a macro whose text is a type, used where a type is."""
    body = value.text.decode("utf-8", "replace").replace("\\\n", " ")
    tree = parser().parse(f"{body} __x;".encode())
    decl = tree.root_node.named_children[0] if tree.root_node.named_children else None
    if tree.root_node.has_error or decl is None or decl.type != "declaration":
        raise error(node, f"the macro '{text(node)}' is not a type")
    try:
        name, t, _ = compiler.declarator(decl)
    except PatternError as err:  # placed in the macro's own text, which this parse is not
        message = err.message if err.message.startswith("the macro ") else \
            f"the macro '{text(node)}': {err.message}"
        raise error(node, message) from None
    if name != "__x":
        raise error(node, f"the macro '{text(node)}' is not a type")
    return t


def enumerator(compiler: "Compiler", name: str, node: Node) -> ir.Const:
    """A file-scope enumerator -> its constant: its `= value`, or the previous one's plus 1,
    of the enum's underlying type (int without one)."""
    spec, index = compiler.unit.enumerators[name]
    base = spec.child_by_field_name("base")
    items = [c for c in spec.child_by_field_name("body").named_children
             if c.type == "enumerator"]
    with file_scope(compiler):
        t = C.INT if base is None else compiler.base_type(base)
        if not C.is_int(t):
            raise error(base, f"an enum of {C.name_of(t)} is outside the subset")
        value = -1
        for item in items[:index + 1]:
            given = item.child_by_field_name("value")
            value = value + 1 if given is None else compiler.constant_int(given)
    return ir.Const(t.dtype.type(value), t, (node.start_point[0] + 1, node.start_point[1] + 1))


def local_constant(t: C.CType, value: ir.Expr, quals: set[str]) -> ir.Const | None:
    """A local `const` / `constexpr` integer with a constant initializer -> its Const (usable
    as an array size or template argument), else None."""
    if not quals & {"const", "constexpr"} or not C.is_int(t) or not value.const:
        return None
    return ir.Const(np.asarray(ir.constant_value(value)).astype(t.dtype)[()], t, value.pos)
