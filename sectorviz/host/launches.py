"""A kernel's `<<<...>>>` launches in the host code, one per launched instantiation
(`offset<float>`, `offset<double>`; a plain kernel's first launch), and the length of each
array a launch passes, from its `cudaMalloc` before the launch (bytes / element size)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .constants import (
    HostScope,
    Term,
    Unknown,
    declared,
    element_size,
    nodes_of,
    parameter_names,
)
from .kernels import KernelSignature, template_parameters
from .syntax import text

MALLOCS = ("cudaMalloc", "cudaMallocManaged", "cudaMallocAsync")


@dataclass(frozen=True)
class Instance:
    """A launched kernel as a pattern names it (`transposeNaive`, `offset<float>`), its
    template bindings (`T` -> `float`) and its launch (a syntax.Launch; None for an
    instantiation the file names without launching it)."""

    function: str
    types: tuple[tuple[str, str], ...]
    launch: Any
    host_call: Any = None  # the call of the host template that makes it (`runTest<float>(...)`)

    def call(self) -> Any:
        """The call_expression of the launch: `name<<<config>>>(args)`."""
        return self.launch.config[0].parent.parent


def instances(unit: Any, kernel: KernelSignature) -> list[Instance]:
    """The launched instantiations of `kernel` in file order (a plain kernel: its first
    launch); a template kernel's instantiation that is named but not launched here keeps
    no launch. A launch that leaves its template arguments to be deduced (`offset<<<...>>>(
    d_a, i)` inside `template <typename T> void runTest(...)`, d_a a `T *`) gives one
    instantiation per explicit call of its host template (`runTest<double>(...)`: offset<
    double>); where they cannot be deduced so, it is passed over."""
    found: dict[str, Instance] = {}
    for launch in unit.launches:
        if launch.name != kernel.name or (kernel.template and launch.targs is None
                                          and not launch.config):
            continue
        for function, types, call in _launched_as(unit, launch, kernel):
            known = found.get(function)
            if known is None or (known.launch is None and launch.config):
                found[function] = Instance(function, types, launch if launch.config else None,
                                           call)
    return list(found.values())


def shared_bytes(unit: Any, kernel: KernelSignature) -> list[tuple[str, int | None]]:
    """(the instantiation as a pattern names it, the dynamic shared memory bytes its third
    <<<>>> argument gives, None where that is no constant of the host code) of each launch of
    `kernel` that gives one, in file order (`reverse<<<2, THREADS, THREADS * sizeof(float)
    >>>` with `#define THREADS 32` -> ('reverse', 128))."""
    found: list[tuple[str, int | None]] = []
    for launch in unit.launches:
        if launch.name != kernel.name or len(launch.config) < 3:
            continue
        for function, types, _ in _launched_as(unit, launch, kernel):
            try:
                value: int | None = HostScope(unit, launch.host, launch.config[2],
                                              dict(types)).term(launch.config[2]).value
            except Unknown:
                value = None
            found.append((function, value))
    return found


def _launched_as(unit: Any, launch: Any, kernel: KernelSignature
                 ) -> list[tuple[str, tuple[tuple[str, str], ...], Any]]:
    """(the pattern's name of the instantiation, its template bindings, with those of its
    host template where it lies in one, and the call of that host template or None) of each
    instantiation `launch` makes."""
    if not kernel.template:
        return [] if launch.targs is not None else [(kernel.name, (), None)]
    if launch.targs is not None:
        args = tuple(_template_argument(unit, launch, a) for a in launch.targs.named_children
                     if a.type != "comment")
        return [(f"{kernel.name}<{', '.join(args)}>", tuple(zip(kernel.template, args)), None)]
    deduced = _deduced(launch, kernel)
    if deduced is None:
        return []
    made = []
    for host, call in _host_instantiations(unit, launch.host):
        bound = {name: host.get(kind, kind) for name, kind in deduced.items()}
        if any(kind in _template_names(launch.host) for kind in bound.values()):
            continue
        chosen = [bound[name] for name in kernel.template]
        made.append((f"{kernel.name}<{', '.join(chosen)}>", tuple(host.items()) + tuple(
            (n, k) for n, k in bound.items() if n not in host), call))
    return made


def _deduced(launch: Any, kernel: KernelSignature) -> dict[str, str] | None:
    """The kernel's template parameters as the launch's pointer arguments fix them (a
    parameter `T *a` given `d_a`, declared `float *d_a` or `T *d_a` in the host function:
    T -> float or the host's T); None unless every one is fixed so."""
    call = launch.config[0].parent.parent
    args = [a for a in call.child_by_field_name("arguments").named_children
            if a.type != "comment"]
    bound: dict[str, str] = {}
    for (_, pointer), kind, arg in zip(kernel.params, kernel.types, args):
        name = kind.replace("const", " ").strip()
        if pointer and name in kernel.template and arg.type == "identifier":
            declared_as = _pointer_type(launch.host, text(arg))
            if declared_as is not None:
                bound.setdefault(name, declared_as)
    return bound if set(bound) == set(kernel.template) else None


def _pointer_type(host: Any, name: str) -> str | None:
    """The pointee type of the pointer `name` as the host function declares it (a local or
    a parameter), without const; None where it does not."""
    for decl in nodes_of(host, "declaration", "parameter_declaration"):
        for d in decl.children_by_field_name("declarator"):
            if declared(d) == name and "*" in text(d):
                return " ".join(text(decl.child_by_field_name("type")).replace(
                    "const", " ").split())
    return None


def _template_names(host: Any) -> tuple[str, ...]:
    """The template parameters of the host function `host` (none for a plain one)."""
    parent = host.parent
    if parent is None or parent.type != "template_declaration":
        return ()
    return template_parameters(parent.child_by_field_name("parameters"))


def _host_instantiations(unit: Any, host: Any) -> list[tuple[dict[str, str], Any]]:
    """(the bindings, the call) of each explicit call `runTest<double>(...)` of the host
    template `host` in the file, the first of each binding in file order ([({}, None)] for a
    plain host function)."""
    names = _template_names(host)
    if not names:
        return [({}, None)]
    name = _function_name(host)
    found: dict[tuple[str, ...], tuple[dict[str, str], Any]] = {}
    for call in nodes_of(unit.tree.root_node, "call_expression"):
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "template_function" or \
                text(fn.child_by_field_name("name")).split("::")[-1] != name:
            continue
        args = tuple(" ".join(text(a).split()) for a in
                     fn.child_by_field_name("arguments").named_children if a.type != "comment")
        if len(args) == len(names):
            found.setdefault(args, (dict(zip(names, args)), call))
    return list(found.values())


def given_by(unit: Any, instance: Instance) -> dict[str, Term]:
    """The host template's parameters that the call making `instance` passes as values
    known in its caller (`runTest<float>(deviceId, nMB)` in main, `int nMB = 4`: nMB -> 4);
    none for an instance no such call makes."""
    call = instance.host_call
    if call is None:
        return {}
    caller = call.parent
    while caller is not None and caller.type != "function_definition":
        caller = caller.parent
    if caller is None:
        return {}
    args = [a for a in call.child_by_field_name("arguments").named_children
            if a.type != "comment"]
    given = {}
    for name, arg in zip(parameter_names(instance.launch.host), args):
        try:
            if name:  # its value: the caller's names mean nothing in the host template
                value = HostScope(unit, caller, call, dict(instance.types)).term(arg).value
                given[name] = Term(str(value), value)
        except Unknown:
            continue
    return given


def _template_argument(unit: Any, launch: Any, node: Any) -> str:
    """A template argument as the pattern names it: a value as its number where the host
    code fixes it (`BM` in `k<BM><<<...>>>` after `constexpr int BM = 64;`: 64), else as
    written (a type)."""
    if launch.config == ():
        return " ".join(text(node).split())
    try:
        return str(HostScope(unit, launch.host, node).term(node).value)
    except Unknown:
        return " ".join(text(node).split())


def array_length(scope: HostScope, argument: Any, element_type: str) -> Term:
    """The elements the pointer `argument` of a launch reaches: its cudaMalloc's bytes over
    the element size, less a `p + k` offset; Unknown saying why not."""
    node, offset = _pointer_and_offset(argument)
    if node.type != "identifier":
        raise Unknown(f"'{text(argument)}' is not a pointer variable of the host code")
    name = text(node)
    size = _allocation(scope, name)
    element = element_size(scope.types.get(element_type, element_type))
    length = _elements(scope, _unwrapped(scope, size), element)
    if offset is None:
        return length
    less = scope.term(offset)
    return Term(f"{length.text} - {less.bracketed()}", length.value - less.value, False,
                length.constant and less.constant)


def _pointer_and_offset(node: Any) -> tuple[Any, Any]:
    """`(float *)(p + k)` -> (p, k); `p` -> (p, None)."""
    while node.type in ("parenthesized_expression", "cast_expression"):
        node = node.child_by_field_name("value") or node.named_children[-1]
    if node.type == "binary_expression" and text(node.child_by_field_name("operator")) == "+":
        return node.child_by_field_name("left"), node.child_by_field_name("right")
    return node, None


def _allocation(scope: HostScope, name: str) -> Any:
    """The byte count of the last `cudaMalloc(&name, bytes)` before the launch."""
    found = None
    for call in _calls_before(scope, MALLOCS):
        args = call.child_by_field_name("arguments").named_children
        if len(args) >= 2 and _address_of(args[0]) == name:
            found = args[1]
    if found is None:
        raise Unknown(f"no {MALLOCS[0]}(&{name}, ...) before the launch in "
                      f"{_function_name(scope.host) or 'its function'}")
    return found


def _calls_before(scope: HostScope, names: tuple[str, ...]) -> list[Any]:
    return [c for c in nodes_of(scope.host, "call_expression")
            if c.start_byte < scope.at.start_byte
            and text(c.child_by_field_name("function")).split("::")[-1] in names]


def _address_of(node: Any) -> str | None:
    """The name in `&p`, `(void **)&p`, `reinterpret_cast<void **>(&p)`."""
    for pointer in nodes_of(node, "pointer_expression"):
        if text(pointer).lstrip().startswith("&"):
            return text(pointer.child_by_field_name("argument")).strip("() ")
    return None


def _unwrapped(scope: HostScope, node: Any) -> Any:
    """A byte count with brackets dropped and a name that is not a plain constant replaced
    by its value (`mem_size` -> `nx*ny*sizeof(float)`), so its sizeof can be seen."""
    for _ in range(16):
        if node.type == "parenthesized_expression":
            node = node.named_children[-1]
        elif node.type == "identifier":
            value = scope.definition(text(node))
            if scope.term(value).constant:
                return node
            node = value
        else:
            break
    return node


def _elements(scope: HostScope, size: Any, element: int) -> Term:
    """`count * sizeof(T)` (either side), T of `element` bytes -> count; other byte counts
    -> bytes / element."""
    if size.type == "binary_expression" and text(size.child_by_field_name("operator")) == "*":
        left, right = size.child_by_field_name("left"), size.child_by_field_name("right")
        for by, other in ((right, left), (left, right)):
            if by.type == "sizeof_expression" and scope.size_of(by) == element:
                return scope.term(other)
    bytes_ = scope.term(size)
    if bytes_.value % element:
        raise Unknown(f"{bytes_.value} bytes is not a whole number of {element}-byte "
                      "elements")
    return Term(f"{bytes_.bracketed()} / {element}", bytes_.value // element, False,
                bytes_.constant)


def _function_name(function: Any) -> str | None:
        return declared(function.child_by_field_name("declarator"))
