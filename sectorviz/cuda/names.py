"""Names: variables in scope, macros expanded at their use, file-scope constants and
__constant__ arrays.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from ..model.errors import PatternError
from ..model.pattern import suggest
from . import ctype as C
from . import ir, templates
from .dispatch import EXPRESSIONS
from .source import Node, check_syntax, declared_name, error, text
from .structs import _Static
from .symbols import LocalArray, LocalRef, Shared, pos, qualifiers
from .templates import TypeName

CONSTANT_ALIGN = 16


def err_point(err: PatternError) -> tuple[int, int] | None:
    """The 0-based (row, column) a `line L` error names, else None."""
    line = err.place.removeprefix("line ")
    return (int(line) - 1, err.column - 1) if line.isdigit() and err.column else None


def relocate(root, inside: Callable[[tuple[int, int]], bool], at: tuple[int, int]) -> None:
    """Every IR node under `root` whose place (1-based) is `inside` macro text is placed
    `at` its use instead; nodes from elsewhere (arguments, inlined bodies) keep theirs."""
    for x in ir.walk(root, once=True):
        if _placed(x) and inside((x.pos[0] - 1, x.pos[1] - 1)):
            x.pos = at


def _placed(node) -> bool:
    """Whether an IR node has a (line, column) place (some nodes have none)."""
    place = getattr(node, "pos", None)
    return isinstance(place, tuple) and len(place) == 2


class NameCompiler:
    """Compiler mixin: what a name means where it is used."""

    @EXPRESSIONS("identifier")
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

    def device_variable(self, name: str, node: Node) -> ir.Memory:
        """A file-scope `__device__` variable (or array): global memory at the pattern's array
        of that name, which must hold its elements of its element type."""
        elem, n = self.unit_device_variables().get(name, (None, 0))
        t = self.constant_type(name, self.unit.globals[name])
        if elem is None:
            raise error(node, f"a __device__ {C.name_of(t)} is outside the subset (numbers and "
                              "arrays of numbers are in it)")
        if name not in self.arrays:
            raise error(node, f"the __device__ variable {name!r} needs an entry in the "
                              f"pattern's arrays ({n} x {C.name_of(elem)})")
        arr = self.arrays[name]
        if arr.spec.elem_bytes != elem.size or arr.length < n:
            raise error(node, f"arrays.{name} must hold the __device__ variable's {n} "
                              f"{C.name_of(elem)} ({elem.size} bytes each), not {arr.length} "
                              f"of {arr.spec.elem_bytes} bytes")
        return ir.Memory(ir.Const(np.int64(arr.address0), C.LONG, pos(node)), t, "global", name,
                         pos(node), tuple(self.loops))

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
        if any(c.type == "__device__" for c in decl.children) and "const" not in quals:
            return self.device_variable(name, node)
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

    def shadowed(self, node: Node) -> bool:
        return self.shadowed_name(text(node))

    def shadowed_name(self, name: str) -> bool:
        return any(name in s for s in self.scopes)
