"""One `__global__` function (tree-sitter nodes) -> a typed program of ir.py nodes.

The compiler gives every expression its static C type, applies C's conversions, folds
constants, inlines `__device__` functions and function-like macros at each use, and turns
every subscript or dereference that reads or writes memory into a load or store site: one
static instruction per (position, operation, array), global and shared apart. Anything it does
not know is a PatternError at `line L`, with the column.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable, Iterator

import numpy as np

from ..model.errors import PatternError
from ..model.kernel import ResolvedArray
from ..model.pattern import suggest
from . import builtins
from . import ctype as C
from . import ir, lanes, templates
from .builtins import GROUP_NAMESPACES, Group
from .conversions import CONVERSIONS, conversion
from .source import (MAX_NESTING, Function, Node, Unit, alias_names, check_syntax,
                     declared_name, error, text)
from .structs import StructCompiler, _Static
from .templates import TypeName

BUILTIN_VECTORS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
SHARED_ALIGN = 16
CONSTANT_ALIGN = 16
OP_ORDER = {"load": 0, "store": 2}  # atomics (atom, red) between
LOCAL_ARRAYS = ("per-thread arrays are registers (no memory traffic); nvcc may spill "
                "dynamically indexed ones to local memory, which is not modelled")
MAX_COMPILED_NODES = 2**19  # syntax nodes compiled, device functions and macros expanded
INLINE_LEVELS = 4  # nesting levels an inlined call costs: its compiler frames are 4 deep
_COMPARE = {"<", "<=", ">", ">=", "==", "!="}


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


class _Widened(Exception):
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


@dataclass
class Program:
    """A compiled kernel: parameter slots with their values, the body, the memory sites."""

    slots: int
    inits: list[tuple[int, object]]
    body: ir.Stmt
    sites: dict[str, list[ir.Site]]
    shared: dict[str, tuple[int, int]]  # __shared__ name -> (offset, bytes)
    constants: dict[str, tuple[int, int]]  # __constant__ name -> (offset, bytes)
    assumptions: tuple[str, ...] = ()  # what the report must say the counts assume
    constant_values: dict[str, np.ndarray] = field(default_factory=dict)

    def run(self, run: ir.Run) -> Iterator:
        for slot, value in self.inits:
            run.slots[slot] = value
        run.budget.charge(self.steps * run.step, "the kernel's code", "kernel")
        yield from self.body.run(run, run.threads.valid)

    @cached_property
    def steps(self) -> int:
        """Interpreter steps of one pass through the body (loops charge their iterations)."""
        return ir.size(self.body)


def pos(node: Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.start_point[1] + 1


def err_point(err: PatternError) -> tuple[int, int] | None:
    """The 0-based (row, column) a `line L` error names, else None."""
    line = err.place.removeprefix("line ")
    return (int(line) - 1, err.column - 1) if line.isdigit() and err.column else None


def relocate(root, inside: Callable[[tuple[int, int]], bool], at: tuple[int, int]) -> None:
    """Every IR node under `root` whose place (1-based) is `inside` macro text is placed
    `at` its use instead; nodes from elsewhere (arguments, inlined bodies) keep theirs."""
    seen, stack = set(), [root]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        fields = getattr(x, "__dataclass_fields__", None)
        if fields is None or id(x) in seen or isinstance(x, ir.Site):
            continue
        seen.add(id(x))
        place = getattr(x, "pos", None)
        if isinstance(place, tuple) and len(place) == 2 and \
                inside((place[0] - 1, place[1] - 1)):
            x.pos = at
        stack.extend(getattr(x, name) for name in fields)


def qualifiers(decl: Node) -> set[str]:
    """A declaration's qualifiers and storage classes: const, __shared__, __constant__, ..."""
    return {text(c) for c in decl.children
            if c.type in ("type_qualifier", "storage_class_specifier")}


@dataclass(frozen=True)
class GroupNamespace:
    """A name standing for `cooperative_groups` in a scope: `namespace g = cooperative_groups;`
    inside a function body."""


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


def literal(node: Node) -> ir.Const:
    """A number literal -> Const of its C type (suffixes, hex, octal, binary)."""
    raw = text(node).replace("'", "")
    t = raw.lower()
    is_hex = t.startswith("0x")
    if not is_hex and ("." in t or "e" in t or t.endswith("f")):
        kind = C.FLOAT if t.endswith("f") else C.DOUBLE
        try:
            return ir.Const(kind.dtype.type(float(t.rstrip("fl"))), kind, pos(node))
        except ValueError:
            raise error(node, f"cannot read the number {raw!r}") from None
    digits = t.rstrip("ul")
    suffix = t[len(digits):]
    try:
        value = int(digits, 16 if is_hex else 2 if digits.startswith("0b") else
                    8 if digits.startswith("0") and len(digits) > 1 else 10)
    except ValueError:
        raise error(node, f"cannot read the number {raw!r}") from None
    unsigned, longs = "u" in suffix, suffix.count("l")
    if unsigned:
        candidates = [C.UINT, C.ULONG]
    elif is_hex or t.startswith("0"):
        candidates = [C.INT, C.UINT, C.LONG, C.ULONG]
    else:
        candidates = [C.INT, C.LONG]
    if longs:
        candidates = [c for c in candidates if c.size == 8]
    for kind in candidates:
        if value < 2 ** (kind.size * 8 - kind.signed):
            return ir.Const(kind.dtype.type(value), kind, pos(node))
    raise error(node, f"the number {raw!r} does not fit 64 bits")


class Compiler(StructCompiler):
    """Compiles one kernel of a Unit for a launch whose arrays and params are resolved."""

    def __init__(self, unit: Unit, arrays: dict[str, ResolvedArray], params: dict[str, int]):
        self.unit = unit
        self.arrays = arrays
        self.params = params
        self.slots = 0
        self.sites: dict[str, list[ir.Site]] = {"global": [], "shared": [], "constant": []}
        self._site_keys: dict[tuple, ir.Site] = {}
        self.shared: dict[str, tuple[int, int]] = {}
        self.constants: dict[str, tuple[int, int]] = {}  # __constant__ name -> (offset, bytes)
        self.constant_values: dict[str, np.ndarray] = {}  # __constant__ initializers
        self.switches = 0
        self.assumptions: list[str] = []
        self._shared_nodes: dict[str, int] = {}
        self.scopes: list[dict] = []
        self.loops: list[tuple[str, int]] = []
        self.frames: list[Frame] = []
        self.loop_depth = 0
        self.macro_env: dict[str, tuple[Node, dict]] = {}
        self._expanding: set[str] = set()
        self.compiled = 0  # syntax nodes taken in, with every inlined body and macro text
        self.depth = 0  # statements and expressions being compiled, one inside the other
        self.widened: dict[int, str] = {}  # pointer variable slot -> arrays it also points into

    # ------------------------------------------------------------ entry

    def kernel(self, fn: Function, pattern_arrays: list[str]) -> Program:
        """The compiled kernel. A pointer variable set to point into another array than its
        first value's widens its type to both; compiling starts over until none widens."""
        given = ("unit", "arrays", "params")
        start = {k: v if k in given else copy.deepcopy(v) for k, v in vars(self).items()}
        while True:
            try:
                return self._kernel_once(fn, pattern_arrays)
            except _Widened:
                widened = self.widened
                self.__dict__.update({k: v if k in given else copy.deepcopy(v)
                                      for k, v in start.items()})
                self.widened = widened

    def widen_known(self, var: Var) -> None:
        """A pointer variable's type with the arrays it was found to point into later."""
        if isinstance(var.type, C.Pointer) and var.slot in self.widened:
            var.type = self.joined(var.type, self.widened[var.slot])

    def joined(self, t: C.Pointer, root: str) -> C.Pointer:
        names = list(self.arrays) + list(self.shared)
        return C.Pointer(t.to, t.space, C.join_roots(t.root, root, names))

    def _kernel_once(self, fn: Function, pattern_arrays: list[str]) -> Program:
        self.scopes = [dict(fn.bindings)]
        inits = []
        seen = set()
        for p in fn.params:
            name, t, _ = self.declarator(p)
            if name is None:
                continue
            seen.add(name)
            slot = self.slot()
            if isinstance(t, C.Pointer):
                t = C.Pointer(t.to, "global", name)
                inits.append((slot, np.int64(self.pointer_param(p, name, t).address0)))
            else:
                inits.append((slot, self.param_value(p, name, t)))
            self.scopes[0][name] = Var(slot, t, name)
            self.widen_known(self.scopes[0][name])
        for name in pattern_arrays:
            if name not in seen and name not in self.unit_constants():
                raise error(fn.node, f"the pattern's array {name!r} is not a pointer parameter "
                                     f"of '{fn.name}'" + suggest(name, seen))
        self.grow(fn.body, fn.node)
        body = self.block(fn.body, scope=False)
        return Program(self.slots, inits, body, self._ordered_sites(), self.shared,
                       self.constants, tuple(self.assumptions), self.constant_values)

    def grow(self, code: Node, use: Node) -> None:
        """Count `code` (a body or macro text compiled at `use`) into the kernel's size; a
        kernel that expands past MAX_COMPILED_NODES is refused at the use that does it."""
        self.compiled += code.descendant_count
        if self.compiled > MAX_COMPILED_NODES:
            raise error(use, f"the kernel grows past {MAX_COMPILED_NODES:,} syntax nodes with "
                             "device functions inlined and macros expanded at each use")

    def deeper(self, node: Node, levels: int = 1) -> None:
        """`levels` deeper into `node` (the caller steps back out); refused past MAX_NESTING
        levels, which count device functions and macros expanded in place: the compiler,
        and the interpreter after it, recurse once per level."""
        if self.depth + levels > MAX_NESTING:
            raise error(node, f"nested more than {MAX_NESTING} levels deep, counting device "
                              "functions and macros expanded in place")
        self.depth += levels

    def pointee_types(self, fn: Function) -> dict[str, tuple[str, int]]:
        """Pointer parameters -> (pointee type name, size in bytes), for arrays with no dtype."""
        self.scopes = [dict(fn.bindings)]
        found = {}
        for p in fn.params:
            name, t, _ = self.declarator(p)
            if name is not None and isinstance(t, C.Pointer) and t.to.size:
                found[name] = (C.name_of(t.to), t.to.size)
        for name, (elem, _) in self.unit_constants().items():
            found.setdefault(name, (C.name_of(elem), elem.size))
        return found

    def unit_constants(self) -> dict[str, tuple[C.CType, int]]:
        """File-scope `__constant__` variables of numeric (array) types -> (element type,
        elements); others are refused where they are used."""
        found = {}
        for name, decl in self.unit.globals.items():
            if "__constant__" not in qualifiers(decl):
                continue
            try:
                t = self.constant_type(name, decl)
            except PatternError:
                continue
            elem = t
            while isinstance(elem, C.Array):
                elem = elem.of
            if isinstance(elem, C.Num) and t.size:
                found[name] = (elem, t.size // elem.size)
        return found

    def constant_type(self, name: str, decl: Node) -> C.CType:
        """The declared type of the file-scope variable `name` of declaration `decl`."""
        base = self.base_type(decl.child_by_field_name("type"))
        d = next(d for d in decl.children_by_field_name("declarator")
                 if declared_name(d) == name)
        return self.unwrap(d, base)[1]

    def pointer_param(self, node: Node, name: str, t: C.Pointer) -> ResolvedArray:
        """The array a pointer parameter points to; its element size must be the pointee's."""
        if name not in self.arrays:
            raise error(node, f"the pointer parameter {name!r} needs an entry in the "
                              "pattern's arrays" + suggest(name, self.arrays))
        arr = self.arrays[name]
        size = t.to.size
        if size and arr.spec.elem_bytes != size:
            raise error(node, f"arrays.{name} has dtype {arr.spec.dtype} "
                              f"({arr.spec.elem_bytes} bytes) but the parameter points to "
                              f"{C.name_of(t.to)} ({size} bytes)")
        return arr

    def param_value(self, node: Node, name: str, t: C.CType):
        if not isinstance(t, C.Num):
            raise error(node, f"parameter type {C.name_of(t)} is outside the subset")
        if name not in self.params:
            if t.floating:
                return ir.Unknown(f"the parameter '{name}', which has no value in params")
            raise error(node, f"the kernel parameter {name!r} needs a value: add it to "
                              f"the pattern's params" + suggest(name, self.params))
        value, bits = self.params[name], t.size * 8
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1)) if t.signed else (0, 2 ** bits)
        if not t.floating and not low <= value < high:
            raise error(node, f"params.{name} = {value} does not fit {t.name}")
        return t.dtype.type(value)

    def _ordered_sites(self) -> dict[str, list[ir.Site]]:
        for sites in self.sites.values():
            # within a line, loads run before the atomics and stores they feed
            sites.sort(key=lambda s: (s.line, OP_ORDER.get(s.op, 1), s.column, s.array))
            for i, s in enumerate(sites):
                s.index = i
        return self.sites

    def slot(self) -> int:
        self.slots += 1
        return self.slots - 1

    # ------------------------------------------------------------ types

    def base_type(self, node: Node) -> C.CType:
        kind = node.type
        if is_group_type(node, self.group_namespace):
            return C.GROUP
        if kind == "sized_type_specifier":
            words = [c.type for c in node.children if c.type in ("unsigned", "signed", "long",
                                                                  "short")]
            inner = node.child_by_field_name("type")
            base = text(inner) if inner is not None else "int"
            longs = words.count("long")
            if base == "char":
                name = "unsigned char" if "unsigned" in words else "char"
            elif base == "int":
                size = "short" if "short" in words else ("long " * longs).strip() or "int"
                name = ("unsigned " if "unsigned" in words else "") + size
            else:
                name = " ".join(words + [base])
        elif kind in ("struct_specifier", "class_specifier"):
            return self.struct_type(node)
        elif kind == "template_type" and text(node.child_by_field_name("name")) in \
                self.unit.struct_templates:
            return self.struct_type(node)
        elif kind == "primitive_type":
            name = text(node)
        elif kind == "type_identifier":
            return self.named_type(text(node), node)
        elif kind == "placeholder_type_specifier":
            return C.AUTO
        elif kind == "qualified_identifier":
            scope = node.child_by_field_name("scope")
            name = text(node.child_by_field_name("name"))
            if self.group_namespace(scope) and name in C.GROUP_TYPES:
                return C.GROUP
            if scope is None or text(scope) in ("std", "cuda::std"):
                return self.named_type(name, node)
        else:
            raise error(node, f"type '{text(node)}' is outside the subset")
        if name not in C.NAMED:
            raise error(node, f"type '{name}' is outside the subset" + suggest(name, C.NAMED))
        return C.NAMED[name]

    def named_type(self, name: str, node: Node) -> C.CType:
        """A type's name -> its type: a template parameter or local typedef in scope, a
        file-scope typedef / using, a macro whose text is a type, or a built-in name."""
        for scope in reversed(self.scopes):
            if isinstance(scope.get(name), TypeName):
                return scope[name].type
        if name in self.unit.structs:
            return self.struct_type(node)
        macro = self.macro(name, node)
        alias = self.unit.types.get(name)
        if alias is not None or (macro is not None and macro.params is None and
                                 name not in self._expanding):
            if name in self._expanding:
                raise error(node, f"the type {name!r} is defined in terms of itself")
            if len(self._expanding) >= MAX_NESTING:
                raise error(node, f"type names and macros nested more than {MAX_NESTING} "
                                  "levels deep")
            if not self._expanding:
                self._macro_point = node.start_point
            self._expanding.add(name)
            try:
                if alias is None:
                    return templates.macro_type(self, macro.value, node)
                with templates.file_scope(self):
                    return templates.alias_type(self, alias, name)
            finally:
                self._expanding.discard(name)
        if name not in C.NAMED:
            raise error(node, f"type '{name}' is outside the subset" + suggest(
                name, [*C.NAMED, *self.unit.types]))
        return C.NAMED[name]

    def group_namespace(self, scope: Node | None) -> bool:
        """Whether a `scope::` names cooperative_groups: `cg`, `cooperative_groups`, or a
        namespace alias of it declared in an enclosing block."""
        if scope is None:
            return False
        name = text(scope).removeprefix("::")
        return name in GROUP_NAMESPACES or any(
            isinstance(s.get(name), GroupNamespace) for s in self.scopes)

    def namespace_alias(self, node: Node) -> None:
        """`namespace g = cooperative_groups;` in a block: `g::` names cooperative groups
        until the block ends; an alias of any other namespace is outside the subset."""
        target = node.named_children[-1]
        if not self.group_namespace(target):
            raise error(node, f"a namespace alias of '{text(target)}' is outside the subset "
                              "(only cooperative_groups)")
        self.scopes[-1][text(node.child_by_field_name("name"))] = GroupNamespace()

    def type_alias(self, node: Node) -> None:
        """A local `typedef` / `using X = ...`: its names become types in the current scope."""
        for name in alias_names(node):
            self.scopes[-1][name] = TypeName(templates.alias_type(self, node, name))

    def declarator(self, node: Node):
        """A declaration-like node (parameter_declaration, declaration + one declarator,
        type_descriptor) -> (name or None, type, init node or None)."""
        t = self.base_type(node.child_by_field_name("type"))
        decl = node.child_by_field_name("declarator")
        return self.unwrap(decl, t)

    def unwrap(self, decl: Node | None, t: C.CType):
        """Declarator -> (name, type, init node): pointers get their array when set."""
        init = None
        sizes: list[Node] = []
        name = None
        while decl is not None:
            kind = decl.type
            if kind == "init_declarator":
                init = decl.child_by_field_name("value")
            elif kind in ("pointer_declarator", "abstract_pointer_declarator"):
                if isinstance(t, C.Pointer):
                    raise error(decl, "pointers to pointers are outside the subset")
                t = C.Pointer(t, "", "")
            elif kind in ("array_declarator", "abstract_array_declarator"):
                sizes.append(decl)
            elif kind in ("identifier", "field_identifier"):
                name = text(decl)
                break
            elif kind == "reference_declarator":  # bound by `reference`
                decl = decl.named_children[-1]
                continue
            else:
                raise error(decl, f"declarator '{text(decl)}' is outside the subset")
            decl = decl.child_by_field_name("declarator")
        for a in sizes:
            size = a.child_by_field_name("size")
            t = C.Array(t, 0 if size is None else self.constant_int(size))
        return name, t, init

    def constant_int(self, node: Node) -> int:
        e = self.rvalue(node)
        if not e.const or not C.is_int(e.type):
            raise error(node, f"'{text(node)}' must be an integer constant")
        return int(ir.constant_value(e))

    # ------------------------------------------------------------ statements

    def block(self, node: Node, scope: bool = True) -> ir.Block:
        if scope:
            self.scopes.append({})
        body = []
        for child in node.named_children:
            stmt = self.statement(child)
            if stmt is not None:
                body.append(stmt)
        if scope:
            self.scopes.pop()
        return ir.Block(body)

    def statement(self, node: Node) -> ir.Stmt | None:
        self.deeper(node)
        try:
            return self._statement(node)
        finally:
            self.depth -= 1

    def _statement(self, node: Node) -> ir.Stmt | None:
        kind = node.type
        if kind == "compound_statement":
            return self.block(node)
        if kind == "declaration":
            return self.declaration(node)
        if kind == "expression_statement":
            expr = node.named_children[0] if node.named_children else None
            if expr is not None and self.group_declaration(expr):
                return None
            return None if expr is None else ir.Eval(self.effect(expr))
        if kind == "if_statement" and any(c.type == "constexpr" for c in node.children):
            return self.if_constexpr(node)
        if kind in ("type_definition", "alias_declaration"):
            self.type_alias(node)
            return None
        if kind == "namespace_alias_definition":
            self.namespace_alias(node)
            return None
        if kind == "static_assert_declaration":
            return None
        if kind == "if_statement":
            cond = self.condition(node.child_by_field_name("condition"))
            then = self.scoped(node.child_by_field_name("consequence"))
            alt = node.child_by_field_name("alternative")
            other = None if alt is None else self.scoped(alt.named_children[-1])
            return ir.If(cond, then, other)
        if kind in ("for_statement", "while_statement", "do_statement"):
            return self.loop(node)
        if kind == "switch_statement":
            return self.switch(node)
        if kind in ("break_statement", "continue_statement"):
            if not self.loop_depth and not (kind == "break_statement" and self.switches):
                raise error(node, f"'{text(node)}' outside a loop")
            return ir.Leave("brk" if kind == "break_statement" else "cont")
        if kind == "return_statement":
            return self.return_(node)
        if kind in ("comment", "static_assert_declaration", "preproc_def",
                    "preproc_function_def") or (
                kind == "preproc_call" and text(node.child_by_field_name("directive")) in (
                "#pragma", "#undef")):
            return None  # macros were collected by the Unit, in source order
        raise error(node, f"'{kind.replace('_', ' ')}' is outside the subset")

    def switch(self, node: Node) -> lanes.Switch:
        """switch: each case's statements run for the lanes that entered at or above it."""
        value = self.condition(node.child_by_field_name("condition"))
        if not C.is_int(value.type):
            raise error(node, "a switch needs an integer")
        value = self.cast(value, C.promote(value.type))
        sections: list[tuple[int | None, ir.Block]] = []
        self.scopes.append({})
        self.switches += 1
        try:
            for case in node.child_by_field_name("body").named_children:
                if case.type == "comment":
                    continue
                if case.type != "case_statement":
                    raise error(case, "a statement before the first case label")
                label = case.child_by_field_name("value")
                body = [self.statement(c) for c in case.named_children
                        if label is None or c.id != label.id]
                sections.append((None if label is None else self.constant_int(label),
                                 ir.Block([b for b in body if b is not None])))
        finally:
            self.switches -= 1
            self.scopes.pop()
        return lanes.Switch(value, sections)

    def group_declaration(self, expr: Node) -> bool:
        """`cg::thread_block_tile<32> t = ...;`, which the grammar reads as (a < 32) > (t = ..):
        declares the tile and says True; False for any other expression."""
        if expr.type != "binary_expression" or \
                expr.child_by_field_name("operator").type != ">":
            return False
        left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
        if left.type != "binary_expression" or not is_group_type(
                left.child_by_field_name("left"), self.group_namespace):
            return False
        if right.type == "assignment_expression":
            name, init = right.child_by_field_name("left"), right.child_by_field_name("right")
        elif right.type == "call_expression" and len(
                right.child_by_field_name("arguments").named_children) == 1:
            name = right.child_by_field_name("function")
            init = right.child_by_field_name("arguments").named_children[0]
        else:
            return False
        if name.type != "identifier":
            return False
        self.scopes[-1][text(name)] = self.group(init)
        return True

    def group(self, init: Node | None) -> Group:
        """The group a cooperative-groups variable is initialized with."""
        g = None if init is None else self.expr(init)
        if not isinstance(g, Group):
            raise error(init, "a group variable needs a group: cg::this_thread_block() or "
                              "cg::tiled_partition")
        return g

    def if_constexpr(self, node: Node) -> ir.Stmt:
        """`if constexpr`: only the branch the constant condition picks is compiled."""
        cond = self.condition(node.child_by_field_name("condition"))
        if not cond.const:
            raise error(node, "the condition of 'if constexpr' must be a constant")
        if ir.constant_value(cond):
            return self.scoped(node.child_by_field_name("consequence"))
        alt = node.child_by_field_name("alternative")
        return ir.Block([]) if alt is None else self.scoped(alt.named_children[-1])

    def scoped(self, node: Node) -> ir.Stmt:
        self.scopes.append({})
        stmt = self.statement(node)
        self.scopes.pop()
        return stmt or ir.Block([])

    def condition(self, node: Node) -> ir.Expr:
        if node.type == "condition_clause":
            value = node.child_by_field_name("value")
            if value is None or node.child_by_field_name("initializer") is not None:
                raise error(node, "a declaration in a condition is outside the subset")
            node = value
        e = self.rvalue(node)
        if not isinstance(e.type, (C.Num, C.Pointer)):
            raise error(node, f"a condition of type {C.name_of(e.type)}")
        return e

    def loop(self, node: Node) -> ir.Loop:
        self.scopes.append({})
        init = cond = update = None
        names = []
        if node.type == "for_statement":
            first = node.child_by_field_name("initializer")
            if first is not None and first.type == "declaration":
                init = self.declaration(first)
                names = list(self.scopes[-1].items())
            elif first is not None:
                init = ir.Eval(self.effect(first))
            c = node.child_by_field_name("condition")
            cond = None if c is None else self.condition(c)
            u = node.child_by_field_name("update")
            update = None if u is None else self.effect(u)
        else:
            cond = self.condition(node.child_by_field_name("condition"))
        outer = len(self.loops)
        self.loops.extend((name, var.slot) for name, var in names if isinstance(var, Var))
        self.loop_depth += 1
        body = self.scoped(node.child_by_field_name("body"))
        self.loop_depth -= 1
        del self.loops[outer:]
        self.scopes.pop()
        return ir.Loop(init, cond, update, body, node.type != "do_statement", pos(node))

    def return_(self, node: Node) -> ir.Leave:
        value = node.named_children[0] if node.named_children else None
        if not self.frames:
            if value is not None:
                raise error(value, "a kernel returns nothing")
            return ir.Leave("ret")
        frame = self.frames[-1]
        if value is None:
            return ir.Leave("ret")
        if frame.ref:
            if text(value) != "*this" or frame.this is None:
                raise error(value, "a function returning a reference with more than "
                                   "`return e;` must return *this")
            return ir.Leave("ret")
        if value.type == "initializer_list":  # `return {};`: value-initialized, `{a, b}`
            if frame.type is C.AUTO:
                raise error(value, "a braced return value needs a declared return type")
            return ir.Leave("ret", self.construct(frame.type, value), frame.result)
        e = self.rvalue(value)
        if frame.type is C.AUTO or isinstance(frame.type, C.Pointer) and not frame.type.root:
            frame.type = e.type
        elif isinstance(frame.type, C.Pointer) and isinstance(e.type, C.Pointer):
            frame.type = self.joined(frame.type, e.type.root)
        return ir.Leave("ret", self.converted(e, frame.type, value), frame.result)

    def declaration(self, node: Node) -> ir.Block:
        quals = {text(c) for c in node.children
                 if c.type in ("type_qualifier", "storage_class_specifier")}
        base = self.base_type(node.child_by_field_name("type"))
        out = []
        for decl in node.children_by_field_name("declarator"):
            name, t, init = self.unwrap(decl, base)
            if "__shared__" in quals:
                self.shared_variable(decl, name, t, "extern" in quals)
                continue
            if "static" in quals or "__constant__" in quals:
                raise error(node, f"'{' '.join(sorted(quals))}' variables are outside the subset")
            if t is C.GROUP:
                self.scopes[-1][name] = self.group(init)
                continue
            if isinstance(t, C.Array):
                out.append(self.local_array(decl, name, t, init))
                continue
            if is_reference(decl):
                out.extend(self.reference(name, init, decl, "const" in quals))
                continue
            value = None
            if init is not None and init.type in ("initializer_list", "argument_list") and \
                    isinstance(t, C.Struct | C.Vec):
                value = self.construct(t, init)
            elif init is not None:
                if init.type == "lambda_expression" and t is C.AUTO:
                    self.scopes[-1][name] = Lambda(init, name, list(self.scopes))
                    continue
                if init.type == "initializer_list":
                    items = [c for c in init.named_children if c.type != "comment"]
                    if len(items) != 1:
                        raise error(init, "a braced initializer of a scalar needs one value")
                    init = items[0]
                found = self.expr(init)
                if isinstance(found, Group):
                    self.scopes[-1][name] = found
                    continue
                value = self.checked(found, init)
                if t is C.AUTO or t == C.Pointer(C.AUTO, "", ""):
                    t = value.type
                if isinstance(t, C.Pointer):
                    t = self.pointer_target(t, value, init)
                value = self.converted(value, t, init)
                constant = templates.local_constant(t, value, quals)
                if constant is not None:
                    self.scopes[-1][name] = constant
                    continue
            elif C.AUTO in (t, getattr(t, "to", None)):
                raise error(decl, "'auto' needs an initializer")
            var = Var(self.slot(), t, name)
            self.widen_known(var)
            self.scopes[-1][name] = var
            out.append(ir.Declare(var.slot, value, name))
            if value is None and self.default_construct(var, decl) is not None:
                out.append(ir.Eval(self.default_construct(var, decl)))
        return ir.Block(out)

    def local_array(self, decl: Node, name: str, t: C.Array,
                    init: Node | None) -> lanes.LocalDeclare:
        """`float acc[4][4] = {0};`: a per-thread (register) array of scalar elements."""
        elem = t
        while isinstance(elem, C.Array):
            elem = elem.of
        if not isinstance(elem, C.Num):
            raise error(decl, f"per-thread arrays of {C.name_of(elem)} are outside the subset")
        values: list[tuple[int, ir.Expr]] | None = None
        if init is not None:
            if init.type != "initializer_list":
                raise error(init, "a per-thread array is initialized with a braced list")
            values = []
            filled = self.fill(init, t, elem, 0, values)
            if t.n == 0:
                inner = t.of.size // elem.size
                t = C.Array(t.of, -(-filled // inner))
        n = t.size // elem.size
        if n <= 0:
            raise error(decl, f"the per-thread array {name!r} needs a size")
        if n > lanes.MAX_LOCAL_ELEMENTS:
            raise error(decl, f"the per-thread array {name!r} has {n} elements; sectorviz "
                              f"models at most {lanes.MAX_LOCAL_ELEMENTS}")
        if LOCAL_ARRAYS not in self.assumptions:
            self.assumptions.append(LOCAL_ARRAYS)
        array = LocalArray(self.slot(), t, elem, name)
        self.scopes[-1][name] = array
        return lanes.LocalDeclare(array.slot, n, elem, name, values)

    def fill(self, init: Node, t: C.Array, elem: C.Num, start: int,
             out: list[tuple[int, ir.Expr]]) -> int:
        """A braced list for array `t` from flat element `start` -> (element, value) pairs
        in `out` (nested braces start a new sub-array); returns the elements it spans."""
        stride = t.of.size // elem.size
        k = start
        for item in init.named_children:
            if item.type == "comment":
                continue
            if item.type == "initializer_list" and isinstance(t.of, C.Array):
                k = start + -(-(k - start) // stride) * stride
                self.fill(item, t.of, elem, k, out)
                k += stride
            elif item.type == "initializer_list":
                raise error(item, "braces around a scalar initializer")
            else:
                out.append((k, self.cast(self.rvalue(item), elem)))
                k += 1
        if t.n and k - start > t.n * stride:
            raise error(init, f"more initializers than the {t.n * stride} elements")
        return k - start

    def reference(self, name: str, init: Node | None, node: Node, const: bool = False
                  ) -> list[ir.Stmt]:
        """`T &name = lvalue`: an alias of a variable, or of the memory location (or array
        element) the initializer designates when the declaration runs; a `const` reference
        to a vector or struct in memory is its copy (see `copied`)."""
        if init is None:
            raise error(node, f"the reference {name!r} needs an initializer")
        target = self.copied(self.expr(init), init, const)
        if isinstance(target, (Var, Group, LocalArray)):
            self.scopes[-1][name] = target
            return []
        slot = self.slot()
        if isinstance(target, ir.Memory):
            p = C.Pointer(target.type, target.space, target.root)
            self.scopes[-1][name] = ir.Memory(ir.Read(slot, p, pos(init), name), target.type,
                                              target.space, target.root, pos(init), ())
            return [ir.Declare(slot, target.addr, name)]
        if isinstance(target, LocalRef) and not isinstance(target.type, C.Array):
            self.scopes[-1][name] = LocalRef(target.array, target.type,
                                             ir.Read(slot, C.LONG, pos(init), name))
            return [ir.Declare(slot, target.index, name)]
        value = self.checked(target, init)
        self.scopes[-1][name] = Var(slot, value.type, name)
        return [ir.Declare(slot, value, name)]

    dynamic_shared: int | None = None  # bytes of `extern __shared__` memory (the launch's)
    _dynamic_at: int | None = None  # its offset in the block's shared memory

    def shared_variable(self, decl: Node, name: str, t: C.CType, extern: bool) -> None:
        """A __shared__ variable at the next 16-byte boundary; every `extern __shared__`
        array starts at the one dynamic region, `dynamic_shared` bytes long."""
        key = decl.start_byte
        if self._shared_nodes.get(name, key) != key:
            raise error(decl, f"two __shared__ variables named {name!r}")
        extern = extern or (isinstance(t, C.Array) and t.n <= 0)
        if extern:
            if self.dynamic_shared is None:
                raise error(decl, "extern __shared__ memory needs its size: add "
                                  "\"dynamic_shared_bytes\" to the pattern's kernel (the "
                                  "launch's third argument)")
            if not isinstance(t, C.Array) or not t.of.size:
                raise error(decl, "extern __shared__ declares an array of unknown size")
            t = C.Array(t.of, self.dynamic_shared // t.of.size)
        if name not in self.shared:
            end = max((a + n for a, n in self.shared.values()), default=0)
            address = -(-end // SHARED_ALIGN) * SHARED_ALIGN
            if extern:
                self._dynamic_at = address = address if self._dynamic_at is None \
                    else self._dynamic_at
            self.shared[name] = (address, self.dynamic_shared if extern else t.size)
            self._shared_nodes[name] = key
        self.scopes[-1][name] = Shared(name, t, self.shared[name][0])

    # ------------------------------------------------------------ expressions

    def effect(self, node: Node) -> ir.Expr:
        """An expression evaluated for its effects (statement, for-update)."""
        return self.value_of(self.expr(node), node)

    def rvalue(self, node: Node) -> ir.Expr:
        return self.checked(self.expr(node), node)

    def checked(self, x, node: Node) -> ir.Expr:
        """What `expr` compiled -> the value it reads; an error if it has none."""
        e = self.value_of(x, node)
        if e.type is C.VOID or e.type is C.GROUP:
            raise error(node, f"'{text(node)}' has no value")
        return e

    def value_of(self, x, node: Node) -> ir.Expr:
        """An lvalue or value -> the expression that reads it (a load for memory)."""
        if isinstance(x, Var):
            return ir.Read(x.slot, x.type, pos(node), x.name)
        if isinstance(x, ir.Memory):
            if isinstance(x.type, C.Array):
                return ir.Convert(x.addr, C.Pointer(x.type.of, x.space, x.root), pos(node))
            x.load_site = self.site(x, "load", node)
            return ir.Load(x, x.type, pos(node))
        if isinstance(x, Group):
            return ir.Const(0, C.GROUP, pos(node))
        if isinstance(x, ir.Part):
            if isinstance(x.type, C.Array):
                raise error(node, f"the address of the local array '{text(node)}' is outside "
                                  "the subset")
            return ir.PartRead(x, x.type, pos(node))
        if isinstance(x, LocalRef):
            if isinstance(x.type, C.Array):
                raise error(node, f"the per-thread array '{x.array.name}' used as a pointer: "
                                  "outside the subset (index it instead)")
            return ir.Load(self.local(x, node), x.type, pos(node))
        if isinstance(x, (LocalArray, Lambda)):
            raise error(node, f"'{x.name}' has no value here")
        return x

    def local(self, ref: LocalRef, node: Node) -> lanes.Local:
        """An element of a per-thread array as an lvalue."""
        n = ref.array.type.size // ref.array.elem.size
        return lanes.Local(ref.array.slot, ref.index, n, ref.type, ref.array.name, pos(node))

    def site(self, mem: ir.Memory, op: str, node: Node) -> ir.Site | tuple:
        if isinstance(mem.type, C.Struct) or (isinstance(mem.type, C.Vec) and mem.type.n == 3):
            return self.struct_sites(mem, op, node)
        if isinstance(mem.type, (C.Opaque, C.Pointer)):
            raise error(node, f"a {op} of type {C.name_of(mem.type)} is outside the subset")
        line, col = pos(node)
        key = (line, col, op, mem.space, mem.root)
        if key not in self._site_keys:
            site = ir.Site(line, col, op, mem.root, mem.type.size, text(node))
            self._site_keys[key] = site
            self.sites[mem.space].append(site)
        return self._site_keys[key]

    def fold(self, e: ir.Expr) -> ir.Expr:
        return ir.Const(ir.constant_value(e), e.type, e.pos) if e.const else e

    def expr(self, node: Node):
        """Any expression node -> Var, ir.Memory, Group or an ir.Expr."""
        kind = node.type
        method = getattr(self, "x_" + kind, None)
        if method is None:
            raise error(node, f"'{text(node)[:40]}' ({kind.replace('_', ' ')}) is outside "
                              "the subset")
        self.deeper(node)
        try:
            return method(node)
        finally:
            self.depth -= 1

    def x_number_literal(self, node):
        return literal(node)

    def x_null(self, node):
        """`nullptr` (and NULL): a pointer into no array."""
        return ir.Const(np.int64(0), C.Pointer(C.VOID, "global", ""), pos(node))

    def x_true(self, node):
        return ir.Const(np.uint8(1), C.BOOL, pos(node))

    def x_false(self, node):
        return ir.Const(np.uint8(0), C.BOOL, pos(node))

    def x_char_literal(self, node):
        chars = node.named_children
        body = text(chars[0]) if chars else ""
        if len(body) != 1:
            raise error(node, f"character literal {text(node)} is outside the subset")
        return ir.Const(C.CHAR.dtype.type(ord(body)), C.CHAR, pos(node))

    def x_parenthesized_expression(self, node):
        return self.expr(node.named_children[0])

    def x_identifier(self, node):
        name = text(node)
        if name in self.macro_env:
            arg, env = self.macro_env[name]
            saved, self.macro_env = self.macro_env, env
            try:
                return self.expr(arg)
            finally:
                self.macro_env = saved
        for scope in reversed(self.scopes):
            if name in scope:
                sym = scope[name]
                if isinstance(sym, _Static):
                    return self.static_member(sym, node)
                if isinstance(sym, TypeName):
                    raise error(node, f"{name!r} is a type, not a value")
                if isinstance(sym, templates.Callee):
                    raise error(node, f"{name!r} is the function {sym.name!r}: only calls of "
                                      "it are in the subset")
                if isinstance(sym, LocalArray):
                    return LocalRef(sym, sym.type, ir.Const(np.int64(0), C.LONG, pos(node)))
                if isinstance(sym, ir.Memory):  # a reference: a fresh lvalue at each use
                    return replace(sym, pos=pos(node), loops=tuple(self.loops))
                if isinstance(sym, Shared):
                    return ir.Memory(ir.Const(np.int64(sym.address), C.LONG, pos(node)),
                                     sym.type, "shared", sym.name, pos(node), tuple(self.loops))
                return sym
        if name == "warpSize":
            return ir.Builtin(name, C.INT, pos(node))
        macro = self.macro(name, node)
        if macro is not None and macro.params is None and name not in self._expanding:
            return self.expand(macro, {}, node)
        if name in self.unit.enumerators:
            return templates.enumerator(self, name, node)
        if name in self.unit.globals:
            return self.file_constant(name, node)
        if name in self.unit.macros:
            raise error(node, f"unknown name {name!r} (no #define of it is in effect here)")
        known = [n for s in self.scopes for n in s] + list(self.unit.macros)
        raise error(node, f"unknown name {name!r}" + suggest(name, known))

    _macro_point = (0, 0)  # where the outermost macro being expanded is used

    def macro(self, name: str, node: Node):
        """The macro `name` as defined where it is used: at `node`, or inside a macro's
        expansion, where that outermost macro is used (C rescans there)."""
        return self.unit.macro(name, self._macro_point if self._expanding else node.start_point)

    def expand(self, macro, env: dict, node: Node):
        """A macro use -> its text compiled where it is used, parameters bound to arguments.
        What the outermost expansion compiles from macro text (its own or a nested macro's)
        is placed at the use, for errors: the arguments keep their own places."""
        outermost = not self._expanding
        if outermost:
            self._macro_point = node.start_point
            self._macro_text = []
        if self.unit.in_source(macro):
            self._macro_text.append((macro.value.start_point, macro.value.end_point))
        self._expanding.add(macro.name)
        saved, self.macro_env = self.macro_env, env
        try:
            fragment = self.unit.fragment(macro.value)
            self.grow(fragment, node)
            result = self.expr(fragment)
        except PatternError as err:
            if not outermost or not self.in_macro_text(err_point(err)):
                raise
            raise error(node, f"{err.message} (in the expansion of {macro.name})") from None
        finally:
            self.macro_env = saved
            self._expanding.discard(macro.name)
        if outermost:
            relocate(result, self.in_macro_text, pos(node))
        return result

    _macro_text: list = []  # (start, end) points of the macro texts the expansion uses

    def in_macro_text(self, point: tuple[int, int] | None) -> bool:
        """Whether a 0-based (row, column) lies in the text of a macro being expanded."""
        return point is not None and any(a <= point < b for a, b in self._macro_text)

    def constant_array(self, name: str, node: Node) -> ir.Memory:
        """A file-scope `__constant__` array, placed in the constant bank on first use; its
        values are the pattern's array of that name, if it has one."""
        elem, n = self.unit_constants().get(name, (None, 0))
        if elem is None:
            t = self.constant_type(name, self.unit.globals[name])
            raise error(node, f"a __constant__ {C.name_of(t)} is outside the subset (numbers "
                              "and arrays of numbers are in it)")
        spec = self.arrays[name].spec if name in self.arrays else None
        if spec is not None and spec.elem_bytes != elem.size:
            raise error(node, f"arrays.{name} has dtype {spec.dtype} ({spec.elem_bytes} bytes) "
                              f"but the __constant__ array holds {C.name_of(elem)} "
                              f"({elem.size} bytes)")
        if name in self.arrays and self.arrays[name].length < n:
            raise error(node, f"arrays.{name} has {self.arrays[name].length} elements but the "
                              f"__constant__ array holds {n}")
        decl = self.unit.globals[name]
        t, init = self.unwrap([d for d in decl.children_by_field_name("declarator")
                               if declared_name(d) == name][0],
                              self.base_type(decl.child_by_field_name("type")))[1:]
        if name not in self.constants:
            end = max((a + b for a, b in self.constants.values()), default=0)
            self.constants[name] = (-(-end // CONSTANT_ALIGN) * CONSTANT_ALIGN, n * elem.size)
            if init is not None:
                self.constant_values[name] = self.constant_initializer(init, t, elem, n)
        return ir.Memory(ir.Const(np.int64(self.constants[name][0]), C.LONG, pos(node)), t,
                         "constant", name, pos(node), tuple(self.loops))

    def constant_initializer(self, init: Node, t: C.CType, elem: C.Num, n: int) -> np.ndarray:
        """`__constant__ float c[4] = {1, 2};` (or `int k = 3;`) -> its n values (unlisted
        ones 0)."""
        pairs: list[tuple[int, ir.Expr]] = []
        saved, self.scopes = self.scopes, [{}]
        try:
            if isinstance(t, C.Array) and init.type == "initializer_list":
                self.fill(init, t, elem, 0, pairs)
            elif isinstance(t, C.Num) and init.type != "initializer_list":
                pairs.append((0, self.cast(self.rvalue(init), elem)))
            else:
                raise error(init, f"an initializer of a __constant__ {C.name_of(t)} is outside "
                                  "the subset")
        finally:
            self.scopes = saved
        values = np.zeros(n, dtype=elem.dtype)
        for k, e in pairs:
            if not e.const:
                raise error(init, "a __constant__ initializer must be constant")
            values[k] = ir.constant_value(e)
        return values

    def file_constant(self, name: str, node: Node):
        decl = self.unit.globals[name]
        quals = qualifiers(decl)
        if "__constant__" in quals:
            return self.constant_array(name, node)
        if not quals & {"const", "constexpr"}:
            raise error(node, f"{name!r} is a file-scope variable; only const and constexpr "
                              "ones are in the subset")
        check_syntax(decl)
        base = self.base_type(decl.child_by_field_name("type"))
        for d in decl.children_by_field_name("declarator"):
            dname, t, init = self.unwrap(d, base)
            if dname == name and init is not None and isinstance(t, C.Num):
                saved, self.scopes = self.scopes, [{}]
                try:
                    e = self.converted(self.rvalue(init), t, init)
                finally:
                    self.scopes = saved
                if e.const:
                    return ir.Const(ir.constant_value(e), t, pos(node))
        raise error(node, f"{name!r} is not a numeric constant")

    def x_field_expression(self, node):
        arg = node.child_by_field_name("argument")
        fname = text(node.child_by_field_name("field"))
        op = node.child_by_field_name("operator").type
        if arg.type == "identifier" and text(arg) in BUILTIN_VECTORS and not self.shadowed(arg):
            if fname not in ("x", "y", "z"):
                raise error(node, f"{text(arg)} has fields x, y, z")
            return ir.Builtin(f"{text(arg)}.{fname}", C.UINT, pos(node))
        if arg.type == "this":
            return self.member(self.this_object(arg), fname, node)
        base = self.expr(arg)
        if op == "->":
            p = self.value_of(base, arg)
            if not isinstance(p.type, C.Pointer):
                raise error(node, "'->' needs a pointer")
            base = ir.Memory(p, p.type.to, p.type.space, p.type.root, pos(node), tuple(self.loops))
        t = base.type if not isinstance(base, Group) else C.GROUP
        if isinstance(t, C.Struct) or isinstance(base, Var | ir.Part):
            return self.member(base, fname, node)
        if not isinstance(t, C.Vec) or fname not in C.FIELDS[:t.n]:
            raise error(node, f"field '{fname}' of {C.name_of(t)} is outside the subset")
        i = C.FIELDS.index(fname)
        if isinstance(base, ir.Memory):
            addr = ir.Offset(base.addr, ir.Const(np.int64(i), C.LONG), t.base.size,
                             C.Pointer(t.base, base.space, base.root), pos(node))
            return ir.Memory(addr, t.base, base.space, base.root, pos(node), base.loops)
        if isinstance(base, Var):
            return ir.Field(self.value_of(base, arg), i, t.base, pos(node))
        return ir.Field(base, i, t.base, pos(node))

    def shadowed(self, node: Node) -> bool:
        return self.shadowed_name(text(node))

    def shadowed_name(self, name: str) -> bool:
        return any(name in s for s in self.scopes)

    def x_subscript_expression(self, node):
        indices = node.child_by_field_name("indices")
        items = indices.named_children if indices.type == "subscript_argument_list" else [indices]
        if len(items) != 1:
            raise error(indices, "a subscript needs exactly one index")
        found = self.expr(node.child_by_field_name("argument"))
        if isinstance(found, Var | ir.Part) and isinstance(found.type, C.Array):
            return self.element(found, self.rvalue(items[0]), node)
        if isinstance(getattr(found, "type", None), C.Struct):
            return self.operator("[]", found, items, node)
        index = self.rvalue(items[0])
        if isinstance(found, LocalRef) and isinstance(found.type, C.Array):
            if not C.is_int(index.type):
                raise error(items[0], "an array index must be an integer")
            stride = found.type.of.size // found.array.elem.size
            flat = ir.Binary("+", found.index, ir.Binary(
                "*", self.cast(index, C.LONG), ir.Const(np.int64(stride), C.LONG), C.LONG,
                pos(node)), C.LONG, pos(node))
            return LocalRef(found.array, found.type.of, self.fold(flat))
        base = self.checked(found, node.child_by_field_name("argument"))
        return self.deref(self.pointer_plus(base, index, 1, node), node)

    def deref(self, p: ir.Expr, node: Node) -> ir.Memory:
        if not isinstance(p.type, C.Pointer):
            raise error(node, f"'{text(node)}' reads through a {C.name_of(p.type)}, not a pointer")
        if not p.type.root:
            raise error(node, "a pointer that points into no array")
        return ir.Memory(p, p.type.to, p.type.space, p.type.root, pos(node), tuple(self.loops))

    def pointer_plus(self, p: ir.Expr, k: ir.Expr, sign: int, node: Node) -> ir.Expr:
        if isinstance(k.type, C.Pointer) and C.is_int(p.type) and sign > 0:
            p, k = k, p
        if not isinstance(p.type, C.Pointer) or not C.is_int(k.type):
            raise error(node, f"cannot offset {C.name_of(p.type)} by {C.name_of(k.type)}")
        if p.type.to.size == 0:
            raise error(node, f"arithmetic on a {C.name_of(p.type)} is outside the subset")
        return ir.Offset(p, k, sign * p.type.to.size, p.type, pos(node))

    def x_pointer_expression(self, node):
        arg = node.child_by_field_name("argument")
        if arg.type == "this" and node.child_by_field_name("operator").type == "*":
            return self.this_object(arg)
        if node.child_by_field_name("operator").type == "*":
            return self.deref(self.rvalue(arg), node)
        target = self.expr(arg)
        if not isinstance(target, ir.Memory):
            raise error(node, "'&' of a variable is outside the subset")
        return ir.Convert(target.addr, C.Pointer(target.type, target.space, target.root),
                          pos(node))

    def x_binary_expression(self, node):
        op = node.child_by_field_name("operator").type
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op in ("&&", "||"):
            return self.fold(ir.Logic(op, self.condition(left), self.condition(right), C.INT,
                                      pos(node)))
        a = self.expr(left)
        if isinstance(getattr(a, "type", None), C.Struct):
            return self.operator(op, a, [right], node)
        return self.binary(op, self.value_of(a, left), self.rvalue(right), node)

    def binary(self, op: str, a: ir.Expr, b: ir.Expr, node: Node) -> ir.Expr:
        """`a op b` with C's conversions (pointer arithmetic included), folded if constant."""
        ta, tb = a.type, b.type
        if isinstance(ta, C.Pointer) or isinstance(tb, C.Pointer):
            if op == "+":
                return self.pointer_plus(a, b, 1, node)
            if op == "-" and not isinstance(tb, C.Pointer):
                return self.pointer_plus(a, b, -1, node)
            if isinstance(ta, C.Pointer) and isinstance(tb, C.Pointer) and (
                    op == "-" or op in _COMPARE):
                diff = ir.Binary(op, ir.Convert(a, C.LONG, a.pos), ir.Convert(b, C.LONG, b.pos),
                                 C.LONG if op == "-" else C.INT, pos(node))
                if op != "-":
                    return diff
                return ir.Binary("/", diff, ir.Const(np.int64(ta.to.size or 1), C.LONG),
                                 C.LONG, pos(node))
            raise error(node, f"'{op}' of {C.name_of(ta)} and {C.name_of(tb)}")
        if not isinstance(ta, C.Num) or not isinstance(tb, C.Num):
            raise error(node, f"'{op}' of {C.name_of(ta)} and {C.name_of(tb)} is outside "
                              "the subset")
        if op in ("<<", ">>"):
            t = C.promote(ta)
            if t.floating or tb.floating:
                raise error(node, f"'{op}' needs integers")
            return self.fold(ir.Binary(op, self.cast(a, t), self.cast(b, t), t, pos(node)))
        t = C.common(ta, tb)
        if t.floating and op in ("%", "&", "|", "^"):
            raise error(node, f"'{op}' needs integers")
        result = C.INT if op in _COMPARE else t
        return self.fold(ir.Binary(op, self.cast(a, t), self.cast(b, t), result, pos(node)))

    def cast(self, e: ir.Expr, t: C.CType) -> ir.Expr:
        """`e` converted to `t` (no node when it already has that type)."""
        if e.type == t:
            return e
        return self.fold(ir.Convert(e, t, e.pos))

    def converted(self, e: ir.Expr, t: C.CType, node: Node) -> ir.Expr:
        """Assignment conversion of `e` to `t`; pointers must point into the same array."""
        if isinstance(e.type, C.Struct) and isinstance(t, C.Pointer | C.Num):
            e = self.struct_conversion(e, t, node)
        if isinstance(t, C.Num) and isinstance(e.type, C.Num):
            return self.cast(e, t)
        if isinstance(t, C.Pointer) and isinstance(e.type, C.Pointer):
            if not set(C.roots(e.type.root)) <= set(C.roots(t.root)) or e.type.space != t.space:
                raise error(node, f"a pointer into {t.root!r} cannot also point into "
                                  f"{e.type.root!r}: outside the subset")
            if t.to != e.type.to and C.VOID not in (t.to, e.type.to):
                raise error(node, f"{C.name_of(e.type)} to {C.name_of(t)} needs a cast")
            return ir.Convert(e, t, e.pos) if e.type != t else e
        if t == e.type:
            return e
        raise error(node, f"cannot convert {C.name_of(e.type)} to {C.name_of(t)}")

    def pointer_target(self, declared: C.Pointer, value: ir.Expr, node: Node) -> C.Pointer:
        """A pointer variable's full type: the array of its first value."""
        if isinstance(value.type, C.Struct):
            value = self.struct_conversion(value, declared, node)
        if not isinstance(value.type, C.Pointer):
            raise error(node, f"a pointer set from {C.name_of(value.type)}")
        return C.Pointer(declared.to, value.type.space, value.type.root)

    def x_unary_expression(self, node):
        op = node.child_by_field_name("operator").type
        arg_node = node.child_by_field_name("argument")
        if op == "!":
            return self.fold(ir.Unary("!", self.condition(arg_node), C.INT, pos(node)))
        a = self.rvalue(arg_node)
        if not isinstance(a.type, C.Num) or (op == "~" and a.type.floating):
            raise error(node, f"'{op}' of {C.name_of(a.type)}")
        t = C.promote(a.type)
        a = self.cast(a, t)
        return a if op == "+" else self.fold(ir.Unary(op, a, t, pos(node)))

    def lvalue(self, node: Node):
        target = self.expr(node)
        if isinstance(target, LocalRef) and not isinstance(target.type, C.Array):
            return self.local(target, node)
        if not isinstance(target, (Var, ir.Memory, lanes.Local, ir.Part)) or \
                isinstance(target.type, C.Array):
            raise error(node, f"cannot assign to '{text(node)}'")
        return target

    def x_update_expression(self, node):
        arg = node.child_by_field_name("argument")
        op = node.child_by_field_name("operator").type
        postfix = node.children[0].type != op
        target = self.lvalue(arg)
        one = ir.Const(np.int32(1), C.INT, pos(node))
        return self.update(target, op[0], one, node, arg, postfix)

    def update(self, target, op: str, operand: ir.Expr, node: Node, target_node: Node,
               postfix: bool = False) -> ir.Assign:
        """`target op= operand` (and ++/--): old value in a slot, then the store."""
        old = self.slot()
        value = self.binary(op, ir.Read(old, target.type, pos(node), text(target_node)),
                            operand, node)
        return self.assignment(target, value, node, target_node, old, postfix)

    def assignment(self, target, value: ir.Expr, node: Node, target_node: Node,
                   old: int | None = None, postfix: bool = False) -> ir.Assign:
        t = target.type
        if isinstance(target, Var) and isinstance(t, C.Pointer) and not t.root:
            target.type = t = self.pointer_target(t, value, node)
        elif isinstance(target, Var) and isinstance(t, C.Pointer) and \
                isinstance(value.type, C.Pointer) and value.type.space == t.space and \
                not set(C.roots(value.type.root)) <= set(C.roots(t.root)):
            self.widened[target.slot] = self.joined(t, value.type.root).root
            raise _Widened
        value = self.converted(value, t, node)
        if isinstance(target, Var):
            return ir.Assign(target.slot, value, t, pos(node), old, postfix)
        if isinstance(target, ir.Part):
            return ir.Assign(target, value, t, pos(node), old, postfix)
        if isinstance(target, lanes.Local):
            return ir.Assign(target, value, t, pos(node), old, postfix)
        if target.space == "constant":
            raise error(target_node, f"a store to the __constant__ array {target.root!r}")
        if old is not None:
            target.load_site = self.site(target, "load", target_node)
        target.store_site = self.site(target, "store", target_node)
        return ir.Assign(target, value, t, pos(node), old, postfix)

    def x_assignment_expression(self, node):
        op = node.child_by_field_name("operator").type
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op != "=" and isinstance(getattr(self.expr(left), "type", None), C.Struct):
            return self.operator(op, self.expr(left), [right], node)
        value = self.rvalue(right)
        target = self.lvalue(left)
        if op == "=":
            return self.assignment(target, value, node, left)
        return self.update(target, op[:-1], value, node, left)

    def x_conditional_expression(self, node):
        c = self.condition(node.child_by_field_name("condition"))
        a = self.rvalue(node.child_by_field_name("consequence"))
        b = self.rvalue(node.child_by_field_name("alternative"))
        if isinstance(a.type, C.Num) and isinstance(b.type, C.Num):
            t = C.common(a.type, b.type)
            a, b = self.cast(a, t), self.cast(b, t)
        elif isinstance(a.type, C.Pointer) and isinstance(b.type, C.Pointer) and \
                (a.type.to, a.type.space) == (b.type.to, b.type.space):
            a = self.cast(a, self.joined(a.type, b.type.root))
        elif a.type != b.type:
            raise error(node, f"'?:' of {C.name_of(a.type)} and {C.name_of(b.type)} is "
                              "outside the subset")
        return self.fold(ir.Select(c, a, b, a.type, pos(node)))

    def x_comma_expression(self, node):
        first = self.effect(node.child_by_field_name("left"))
        then = self.rvalue(node.child_by_field_name("right"))
        return ir.Comma(first, then, then.type, pos(node))

    def x_cast_expression(self, node):
        t = self.type_descriptor(node.child_by_field_name("type"))
        return self.explicit_cast(self.rvalue(node.child_by_field_name("value")), t, node)

    def type_descriptor(self, node: Node) -> C.CType:
        _, t, _ = self.declarator(node)
        return t

    def explicit_cast(self, e: ir.Expr, t: C.CType, node: Node) -> ir.Expr:
        if t is C.VOID:  # (void)x: evaluated for its effects only
            return ir.Comma(e, ir.Const(0, C.VOID, pos(node)), C.VOID, pos(node))
        if isinstance(t, C.Num) and isinstance(e.type, (C.Num, C.Pointer)):
            return self.cast(e, t)
        if isinstance(t, C.Pointer) and isinstance(e.type, C.Pointer):
            return ir.Convert(e, C.Pointer(t.to, e.type.space, e.type.root), pos(node))
        if t == e.type:
            return e
        raise error(node, f"a cast from {C.name_of(e.type)} to {C.name_of(t)} is outside "
                          "the subset")

    def x_sizeof_expression(self, node):
        tnode = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        t = self.type_descriptor(tnode) if tnode is not None else \
            self.operand_type(value)
        return ir.Const(np.uint64(t.size), C.ULONG, pos(node))

    # ------------------------------------------------------------ calls

    def x_call_expression(self, node):
        fn = node.child_by_field_name("function")
        args = [a for a in node.child_by_field_name("arguments").named_children
                if a.type != "comment"]
        if any(c.type == "kernel_call_syntax" for c in node.children):
            raise error(node, f"a kernel launch inside a kernel ({text(fn)}<<<...>>>, dynamic "
                              "parallelism) is outside the subset")
        cast_to = templates.type_named_by(self, fn)
        if isinstance(cast_to, C.Struct):  # `T(args)` of a struct: its constructor
            return self.construct(cast_to, node.child_by_field_name("arguments"))
        if cast_to is not None:  # `float(x)`, `T(x)`, `(T)(x)`: casts the grammar took for calls
            if len(args) != 1:
                raise error(node, f"a cast to {C.name_of(cast_to)} takes one value")
            return self.explicit_cast(self.rvalue(args[0]), cast_to, node)
        if fn.type == "template_function":
            name = text(fn.child_by_field_name("name"))
            targs = fn.child_by_field_name("arguments").named_children
            if name not in ("reinterpret_cast", "static_cast", "const_cast"):
                return self.template_call(name, targs, args, node)
            if len(targs) != 1 or len(args) != 1:
                raise error(node, f"call of '{text(fn)}' is outside the subset")
            return self.explicit_cast(self.rvalue(args[0]), self.type_descriptor(targs[0]), node)
        if fn.type == "qualified_identifier":
            scope = fn.child_by_field_name("scope")
            if self.group_namespace(scope):
                return builtins.cg_function(self, fn, args, node)
            if self.scope_struct(scope) is not None:
                return self.static_call(self.scope_struct(scope),
                                        text(fn.child_by_field_name("name")), args, node)
            found = self.namespaced_call(fn, args, node)
            if found is not None:
                return found
            raise error(node, f"call of '{text(fn)}' is outside the subset")
        if fn.type == "field_expression":
            arg, method = fn.child_by_field_name("argument"), text(fn.child_by_field_name("field"))
            target = self.this_object(arg) if arg.type == "this" else self.expr(arg)
            if isinstance(target, Group):
                return builtins.group_method(self, target, method, args, node)
            if fn.child_by_field_name("operator").type == "->" and arg.type != "this":
                target = self.deref(self.value_of(target, arg), fn)
            if isinstance(getattr(target, "type", None), C.Struct):
                return self.method_call(target, method, args, node)
            raise error(node, f"call of '{text(fn)}' is outside the subset")
        if fn.type != "identifier":
            raise error(node, f"call of '{text(fn)}' is outside the subset")
        return self.call(text(fn), args, node)

    def x_gnu_asm_expression(self, node):
        raise error(node, "inline PTX (asm) is outside the subset")

    def call(self, name: str, args: list[Node], node: Node):
        name = templates.callee(self, name)
        for scope in reversed(self.scopes):
            if name in scope:
                found = scope[name]
                if not isinstance(found, Lambda):
                    raise error(node, f"'{name}' is not a function")
                return self.inline_lambda(found, args, node)
        macro = self.macro(name, node)
        if macro is not None and macro.params is not None and name not in self._expanding:
            if len(args) != len(macro.params):
                raise error(node, f"macro {name} takes {len(macro.params)} arguments")
            env = {p: (a, self.macro_env) for p, a in zip(macro.params, args)}
            return self.expand(macro, env, node)
        member = self.member_call(name, args, node)
        if member is not None:
            return member
        if name == "memcpy":
            return self.memcpy(args, node)
        if name in self.unit.structs and not self.shadowed_name(name):
            return self.construct(self.struct_type(self.unit.structs[name]),
                                  node.child_by_field_name("arguments"))
        fn = self.unit.device_function(name, node, len(args))
        if fn is not None:
            return self.inline(fn, args, node)
        if name in CONVERSIONS:
            return conversion(self, name, [self.rvalue(a) for a in args], node)
        if name in builtins.CG_FUNCTIONS and self.unit_uses_cg():
            return builtins.cg_function(self, node.child_by_field_name("function"), args, node)
        found = builtins.call(self, name, args, node)
        if found is not None:
            return found
        raise error(node, f"call of unknown function {name!r}" +
                    suggest(name, [*self.unit.functions, *builtins.MATH]))

    def template_call(self, name: str, targs: list[Node], args: list[Node], node: Node):
        """`f<4, T>(x)`: a template __device__ function with explicit arguments, or a class
        template's value (`SharedMemory<T>()`)."""
        if name in self.unit.struct_templates and not self.shadowed_name(name):
            return self.construct(self.struct_type(node.child_by_field_name("function")),
                                  node.child_by_field_name("arguments"))
        fn = self.unit.device_function(name, node, len(args))
        if fn is None and name in builtins.CG_FUNCTIONS and self.unit_uses_cg():
            return builtins.cg_function(self, node.child_by_field_name("function"), args, node)
        if fn is None:
            raise error(node, f"call of '{name}<...>' is outside the subset")
        return self.inline(fn, args, node, targs)

    def namespaced_call(self, fn: Node, args: list[Node], node: Node):
        """`ns::f(x)`, `ns::inner::f<4>(x)`: a __device__ function declared in a namespace
        (the file's namespaces share one set of function names) -> its inlined call, or
        None when no such function is declared."""
        scopes = []
        while fn.type == "qualified_identifier":
            if fn.child_by_field_name("scope") is not None:  # `::f`: the global namespace
                scopes.append(text(fn.child_by_field_name("scope")))
            fn = fn.child_by_field_name("name")
        targs = None
        if fn.type == "template_function":
            targs = fn.child_by_field_name("arguments").named_children
            fn = fn.child_by_field_name("name")
        found = self.unit.device_function(text(fn), node, len(args), "::".join(scopes))
        return None if found is None else self.inline(found, args, node, targs)

    def unit_uses_cg(self) -> bool:
        """Whether the file says `using namespace cooperative_groups;` (cg names unqualified)."""
        return b"using namespace cooperative_groups" in self.unit.tree.root_node.text

    def inline(self, fn: Function, args: list[Node], node: Node,
               targs: list[Node] | None = None, this=None):
        """A __device__ function (a template's instantiation) inlined at a call; a member
        function (`this`: its object) sees the object's members, and one that returns a
        reference with `return e;` alone is the lvalue e."""
        if any(f.body == fn.body for f in self.frames):
            raise error(node, f"recursive call of {fn.name!r} is outside the subset")
        params = [p for p in fn.params if text(p) != "void"]
        if not fn.takes(len(args)):
            raise error(node, f"{fn.name!r} takes {len(params)} arguments, got {len(args)}")
        bound = [self.argument(p, a) for p, a in zip(params, args)]
        typed = [x if isinstance(x, ir.Expr) else ir.Const(
            0, C.GROUP if isinstance(x, Group) else x.type, pos(node)) for x in bound]
        fn = templates.instantiate(self, fn, targs or [], typed, node)
        with templates.file_scope(self):  # default arguments: in the function's own scope
            self.scopes[0].update(fn.bindings)
            bound += [self.rvalue(p.child_by_field_name("default_value"))
                      for p in params[len(args):]]
        scope: dict = dict(fn.bindings)
        self.scopes.append(scope)  # the return type sees the template's bindings
        try:
            tnode = fn.node.child_by_field_name("type")
            decl = fn.node.child_by_field_name("declarator")
            if decl.type == "operator_cast":  # `operator T *()` returns what it converts to
                tnode, decl = decl.child_by_field_name("type"), decl.child_by_field_name(
                    "declarator")
            ret_t = C.VOID if tnode is None else self.base_type(tnode)
            if decl.type in ("pointer_declarator", "abstract_pointer_declarator"):
                ret_t = C.Pointer(ret_t, "", "")
            if this is not None:
                self.bind_members(this, scope, node)
            ref = decl.type == "reference_declarator"
            if ref and self.returns_only(fn):
                return self.accessor(fn, params, bound, scope, ret_t, this, node)
        finally:
            self.scopes.pop()
        return self.inline_body(fn.name, params, bound, fn.body, ret_t, scope, [], node,
                                this, ref)

    def accessor(self, fn: Function, params: list[Node], bound: list, scope: dict,
                 ret_t: C.CType, this, node: Node):
        """`T& f(args) { return e; }`: the lvalue e, with the parameters naming their
        arguments in place (no call runs to set a variable)."""
        for p, x in zip(params, bound):
            pname, t, _ = self.declarator(p)
            scope[pname] = self.converted(x, t, node) if isinstance(x, ir.Expr) else x
        saved = self.scopes, self.macro_env
        self.scopes, self.macro_env = [scope], {}
        self.frames.append(Frame(fn.name, self.slot(), ret_t, this, True, fn.body))
        try:
            return self.expr(fn.body.named_children[0].named_children[0])
        finally:
            self.frames.pop()
            self.scopes, self.macro_env = saved

    def inline_lambda(self, fn: Lambda, args: list[Node], node: Node) -> ir.Call:
        decl = fn.node.child_by_field_name("declarator")
        plist = None if decl is None else decl.child_by_field_name("parameters")
        params = [] if plist is None else [p for p in plist.named_children
                                           if p.type != "comment"]
        if len(params) != len(args):
            raise error(node, f"{fn.name!r} takes {len(params)} arguments, got {len(args)}")
        bound = [self.argument(p, a) for p, a in zip(params, args)]
        trailing = None if decl is None else next(
            (c for c in decl.named_children if c.type == "trailing_return_type"), None)
        ret = C.AUTO if trailing is None else self.type_descriptor(trailing.named_children[0])
        return self.inline_body(fn.name, params, bound, fn.node.child_by_field_name("body"),
                                ret, {}, fn.scopes, node)

    def argument(self, param: Node, arg: Node):
        """A call's argument compiled in the caller's scope: what a reference parameter
        aliases (a variable, memory location, array element or group), or a value."""
        x = self.copied(self.expr(arg), arg, "const" in qualifiers(param))
        if isinstance(x, Group) or is_reference(param.child_by_field_name("declarator")) or \
                isinstance(x, LocalRef) and isinstance(x.type, C.Array):
            return x  # a per-thread array passed as a pointer: the parameter indexes it
        return self.checked(x, arg)

    def copied(self, x, node: Node, const: bool):
        """What a `const T &` binds to: a vector or struct in memory is loaded whole where
        the reference is bound (one load, as for a copy: nvcc reads it with one wide load
        and reads its members from registers); anything else is aliased."""
        if const and isinstance(x, ir.Memory) and isinstance(x.type, (C.Vec, C.Struct)):
            return self.checked(x, node)
        return x

    def inline_body(self, name: str, params: list[Node], bound: list, body_node: Node,
                    ret_t: C.CType, scope: dict, outer: list[dict], node: Node,
                    this=None, ref: bool = False) -> ir.Expr:
        """A function body inlined at a call: parameters bound to the compiled arguments
        (references alias them) in `scope` (with a template's bindings), `outer` the scopes
        it sees besides (a lambda's); a member function's `this` object gets its
        constructor's member initializers, and `*this` when it returns a reference."""
        if any(f.body == body_node for f in self.frames):
            raise error(node, f"recursive call of {name!r} is outside the subset")
        slots, values = [], []
        self.scopes.append(scope)  # parameter types see the template's bindings
        try:
            for p, x in zip(params, bound):
                pname, t, _ = self.declarator(p)
                if isinstance(x, (Group, Var, LocalArray, ir.Part)):
                    if isinstance(x, Group) and t not in (C.GROUP, C.AUTO) or \
                            not isinstance(x, Group) and t is C.GROUP:
                        raise error(p, f"the parameter {pname!r} cannot take '{text(node)}'")
                    scope[pname] = x
                    continue
                if isinstance(x, ir.Memory):
                    slot = self.slot()
                    scope[pname] = ir.Memory(
                        ir.Read(slot, C.Pointer(x.type, x.space, x.root), x.pos, pname),
                        x.type, x.space, x.root, x.pos, ())
                    slots.append(slot)
                    values.append(x.addr)
                    continue
                if isinstance(x, LocalRef):  # an element, or a (sub-)array from its start
                    if isinstance(t, C.Pointer) and isinstance(x.type, C.Array) and \
                            t.to != x.type.of:
                        raise error(p, f"the parameter {pname!r} ({C.name_of(t)}) cannot "
                                       f"point into the per-thread array '{x.array.name}'")
                    slot = self.slot()
                    scope[pname] = LocalRef(x.array, x.type, ir.Read(slot, C.LONG, x.index.pos,
                                                                     pname))
                    slots.append(slot)
                    values.append(x.index)
                    continue
                if t is C.AUTO:
                    t = x.type
                if isinstance(t, C.Pointer):
                    t = self.pointer_target(t, x, p)
                var = Var(self.slot(), t, pname)
                self.widen_known(var)
                scope[pname] = var
                slots.append(var.slot)
                values.append(self.converted(x, t, node))
        finally:
            self.scopes.pop()
        frame = Frame(name, self.slot(), ret_t, this, ref, body_node)
        self.grow(body_node, node)
        self.deeper(node, INLINE_LEVELS)
        saved = self.scopes, self.macro_env, self.loop_depth, self.switches
        self.scopes, self.macro_env, self.loop_depth, self.switches = [*outer, scope], {}, 0, 0
        self.frames.append(frame)
        try:
            body = self.block(body_node, scope=False)
            if this is not None:
                body = ir.Block(self.member_inits(body_node.parent, this) + [body])
        finally:
            self.depth -= INLINE_LEVELS
            self.frames.pop()
            self.scopes, self.macro_env, self.loop_depth, self.switches = saved
        ret = C.VOID if frame.type is C.AUTO else frame.type
        call = ir.Call(name, values, slots, body, frame.result, ret, pos(node))
        if ref:
            return ir.Comma(call, self.value_of(this, node), this.type, pos(node))
        return call

    @staticmethod
    def returns_only(fn: Function) -> bool:
        """The body is `return e;` alone (a reference-returning accessor: the call is the
        lvalue e, its arguments used in place). Other reference-returning functions must
        end with `return *this;`."""
        stmts = [c for c in fn.body.named_children if c.type != "comment"]
        return len(stmts) == 1 and stmts[0].type == "return_statement" and \
            bool(stmts[0].named_children)
