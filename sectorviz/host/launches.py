"""A kernel's `<<<...>>>` launches in the host code, one per launched instantiation
(`offset<float>`, `offset<double>`; a plain kernel's first launch), and the length of each
array a launch passes, from its `cudaMalloc` before the launch (bytes / element size)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..cuda.source import text
from .constants import HostScope, Term, Unknown, declared, element_size, nodes_of
from .kernels import KernelSignature

MALLOCS = ("cudaMalloc", "cudaMallocManaged", "cudaMallocAsync")


@dataclass(frozen=True)
class Instance:
    """A launched kernel as a pattern names it (`transposeNaive`, `offset<float>`), its
    template bindings (`T` -> `float`) and its launch (a cuda.source.Launch; None for an
    instantiation the file names without launching it)."""

    function: str
    types: tuple[tuple[str, str], ...]
    launch: Any

    def call(self) -> Any:
        """The call_expression of the launch: `name<<<config>>>(args)`."""
        return self.launch.config[0].parent.parent


def instances(unit: Any, kernel: KernelSignature) -> list[Instance]:
    """The launched instantiations of `kernel` in file order (a plain kernel: its first
    launch); a template kernel's instantiation that is named but not launched here keeps
    no launch, and a launch that leaves its template arguments to be deduced is passed
    over."""
    found: dict[str, Instance] = {}
    for launch in unit.launches:
        if launch.name != kernel.name or (launch.targs is not None) != bool(kernel.template):
            continue
        args = () if launch.targs is None else tuple(
            _template_argument(unit, launch, a) for a in launch.targs.named_children
            if a.type != "comment")
        function = f"{kernel.name}<{', '.join(args)}>" if kernel.template else kernel.name
        known = found.get(function)
        if known is None or (known.launch is None and launch.config):
            found[function] = Instance(function, tuple(zip(kernel.template, args)),
                                       launch if launch.config else None)
    return list(found.values())


def _template_argument(unit: Any, launch: Any, node: Any) -> str:
    """A template argument as the pattern names it: a type as written, a value as its
    number where the host code fixes it."""
    if node.type == "type_descriptor" or launch.config == ():
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
