"""One `__global__` function (tree-sitter nodes) -> a typed program of ir.py nodes.

The compiler gives every expression its static C type, applies C's conversions, folds
constants, inlines `__device__` functions and function-like macros at each use, and turns
every subscript or dereference that reads or writes memory into a load or store site: one
static instruction per (position, operation, array), global and shared apart. Anything it does
not know is a PatternError at `line L`, with the column.

`Compiler` is this module's entry (the kernel, its parameters, slots and sites); its parts
are mixins, one module each: declarators (types), statements (control flow), declarations
(locals, per-thread arrays, __shared__), names (scopes, macros, constants), memory (loads and
stores), operators (expressions and conversions), calls (built-ins and inlined device
functions), structs (members, methods, constructors); symbols holds what scopes name, and
common_loads makes a statement's identical loads one instruction.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterator

import numpy as np

from ..model.errors import PatternError
from ..model.kernel import ResolvedArray
from ..model.pattern import suggest
from . import ctype as C
from . import ir
from .calls import CallCompiler
from .common_loads import sites_in
from .declarations import DeclarationCompiler
from .declarators import TypeCompiler
from .memory import MemoryCompiler
from .names import NameCompiler
from .operators import OperatorCompiler
from .source import MAX_NESTING, Function, Node, Unit, declared_name, error
from .statements import StatementCompiler
from .structs import StructCompiler
from .symbols import Frame, Var, Widened, qualifiers

OP_ORDER = {"load": 0, "store": 2}  # atomics (atom, red) between
MAX_COMPILED_NODES = 2**19  # syntax nodes compiled, device functions and macros expanded


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


class Compiler(StatementCompiler, DeclarationCompiler, TypeCompiler, NameCompiler,
               MemoryCompiler, OperatorCompiler, CallCompiler, StructCompiler):
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
        self.dropped_loads: list[ir.Load] = []  # loads made one with an identical load

    def kernel(self, fn: Function, pattern_arrays: list[str]) -> Program:
        """The compiled kernel. A pointer variable set to point into another array than its
        first value's widens its type to both; compiling starts over until none widens."""
        self.check_file_typedefs()
        given = ("unit", "arrays", "params")
        start = {k: v if k in given else copy.deepcopy(v) for k, v in vars(self).items()}
        while True:
            try:
                return self._kernel_once(fn, pattern_arrays)
            except Widened:
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
            if name not in seen and name not in self.unit_constants() and \
                    name not in self.unit_device_variables():
                raise error(fn.node, f"the pattern's array {name!r} is not a pointer parameter "
                                     f"of '{fn.name}'" + suggest(name, seen))
        self.grow(fn.body, fn.node)
        body = self.block(fn.body, scope=False)
        return Program(self.slots, inits, body, self._ordered_sites(body), self.shared,
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
        for name, (elem, _) in {**self.unit_constants(), **self.unit_device_variables()}.items():
            found.setdefault(name, (C.name_of(elem), elem.size))
        return found

    def unit_device_variables(self) -> dict[str, tuple[C.CType, int]]:
        """File-scope `__device__` variables of numeric (array) types, global memory the
        pattern places like a pointer parameter's array -> (element type, elements)."""
        return self.file_arrays(lambda decl: any(c.type == "__device__" for c in decl.children))

    def unit_constants(self) -> dict[str, tuple[C.CType, int]]:
        """File-scope `__constant__` variables of numeric (array) types -> (element type,
        elements); others are refused where they are used."""
        return self.file_arrays(lambda decl: "__constant__" in qualifiers(decl))

    def file_arrays(self, chosen) -> dict[str, tuple[C.CType, int]]:
        """File-scope variables whose declaration `chosen` says yes to, of numeric (array)
        types -> (element type, elements)."""
        found = {}
        for name, decl in self.unit.globals.items():
            if not chosen(decl):
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
        if isinstance(value, float) and not t.floating:
            raise error(node, f"params.{name} = {value} is not an integer, but the parameter "
                              f"is {t.name}")
        low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1)) if t.signed else (0, 2 ** bits)
        if not t.floating and not low <= value < high:
            raise error(node, f"params.{name} = {value} does not fit {t.name}")
        return t.dtype.type(value)

    def _ordered_sites(self, body: ir.Stmt) -> dict[str, list[ir.Site]]:
        """The sites in instruction order, less those only loads made one with an
        identical load used."""
        if self.dropped_loads:
            used = sites_in(body)
            for space, sites in self.sites.items():
                self.sites[space] = [s for s in sites if id(s) in used]
        for sites in self.sites.values():
            # within a line, loads run before the atomics and stores they feed
            sites.sort(key=lambda s: (s.line, OP_ORDER.get(s.op, 1), s.column, s.array))
            for i, s in enumerate(sites):
                s.index = i
        return self.sites

    def slot(self) -> int:
        self.slots += 1
        return self.slots - 1
