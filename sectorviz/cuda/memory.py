"""Memory accesses: subscripts, dereferences and fields -> lvalues, and the load and store
sites they make.
"""

from __future__ import annotations

import numpy as np

from ..model.expr import BUILTIN_VECTORS
from . import ctype as C
from . import ir, lanes
from .builtins import Group
from .common_loads import MERGED_LOADS, merge_loads
from .dispatch import EXPRESSIONS
from .source import Node, error, text
from .symbols import Lambda, LocalArray, LocalRef, Var, pos


class MemoryCompiler:
    """Compiler mixin: lvalues in memory and the sites that load and store them."""

    def one_load_each(self, e: ir.Expr) -> ir.Expr:
        """A statement's expression with its identical loads made one load instruction
        (common_loads states when); none are in a file that declares anything volatile."""
        if b"volatile" in self.unit.tree.root_node.text:
            return e
        dropped = merge_loads(e, self.slot)
        if dropped and MERGED_LOADS not in self.assumptions:
            self.assumptions.append(MERGED_LOADS)
        self.dropped_loads.extend(dropped)
        return e

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

    @EXPRESSIONS("field_expression")
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

    @EXPRESSIONS("subscript_expression")
    def x_subscript_expression(self, node):
        indices = node.child_by_field_name("indices")
        items = ([c for c in indices.named_children if c.type != "comment"]
                 if indices.type == "subscript_argument_list" else [indices])
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

    @EXPRESSIONS("pointer_expression")
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

    def lvalue(self, node: Node):
        target = self.expr(node)
        if isinstance(target, LocalRef) and not isinstance(target.type, C.Array):
            return self.local(target, node)
        if not isinstance(target, (Var, ir.Memory, lanes.Local, ir.Part)) or \
                isinstance(target.type, C.Array):
            raise error(node, f"cannot assign to '{text(node)}'")
        return target
