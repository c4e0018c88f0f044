"""Expressions: literals, operators, assignments and casts with C's conversions, folded when
constant.
"""

from __future__ import annotations

import numpy as np

from . import ctype as C
from . import ir, lanes
from .dispatch import EXPRESSIONS
from .source import Node, error, text
from .symbols import Var, Widened, pos

_COMPARE = {"<", "<=", ">", ">=", "==", "!="}
PACKED = (C.NAMED["half2"], C.NAMED["__nv_bfloat162"])  # the vector types with operators


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


class OperatorCompiler:
    """Compiler mixin: values of operators and casts."""

    def fold(self, e: ir.Expr) -> ir.Expr:
        return ir.Const(ir.constant_value(e), e.type, e.pos) if e.const else e

    def expr(self, node: Node):
        """Any expression node -> Var, ir.Memory, Group or an ir.Expr."""
        kind = node.type
        handler = EXPRESSIONS.get(kind)
        if handler is None:
            raise error(node, f"'{text(node)[:40]}' ({kind.replace('_', ' ')}) is outside "
                              "the subset")
        self.deeper(node)
        try:
            return handler(self, node)
        finally:
            self.depth -= 1

    @EXPRESSIONS("number_literal")
    def x_number_literal(self, node):
        return literal(node)

    @EXPRESSIONS("null")
    def x_null(self, node):
        """`nullptr` (and NULL): a pointer into no array."""
        return ir.Const(np.int64(0), C.Pointer(C.VOID, "global", ""), pos(node))

    @EXPRESSIONS("true")
    def x_true(self, node):
        return ir.Const(np.uint8(1), C.BOOL, pos(node))

    @EXPRESSIONS("false")
    def x_false(self, node):
        return ir.Const(np.uint8(0), C.BOOL, pos(node))

    @EXPRESSIONS("char_literal")
    def x_char_literal(self, node):
        chars = node.named_children
        body = text(chars[0]) if chars else ""
        if len(body) != 1:
            raise error(node, f"character literal {text(node)} is outside the subset")
        return ir.Const(C.CHAR.dtype.type(ord(body)), C.CHAR, pos(node))

    @EXPRESSIONS("parenthesized_expression")
    def x_parenthesized_expression(self, node):
        return self.expr(node.named_children[0])

    @EXPRESSIONS("binary_expression")
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
        if op in ("+", "-", "*", "/") and ta == tb and ta in PACKED:
            return self.componentwise([a, b], node, lambda x, y: self.binary(op, x, y, node))
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

    def componentwise(self, args: list[ir.Expr], node: Node, fn) -> ir.Expr:
        """`fn` of numbers, or of half2 / __nv_bfloat162 values component by component (each
        value read once, into a temporary) -> its expression; CUDA's operators and
        arithmetic intrinsics of those types work this way."""
        t = args[0].type
        if t in (C.HALF, C.BF16) and all(isinstance(a.type, C.Num) for a in args):
            return self.fold(fn(*[self.cast(a, t) for a in args]))
        if any(a.type != t for a in args) or t not in PACKED:
            raise error(node, "arithmetic of " + ", ".join(C.name_of(a.type) for a in args)
                        + " is outside the subset (half, __nv_bfloat16, half2 or "
                          "__nv_bfloat162 alike)")
        p = pos(node)
        temps = [Var(self.slot(), t, "(temporary)") for _ in args]
        parts = [self.cast(fn(*[ir.Field(ir.Read(v.slot, t, p, v.name), i, t.base, p)
                                for v in temps]), t.base) for i in range(t.n)]
        out: ir.Expr = ir.Vector(parts, t, p)
        for v, a in reversed(list(zip(temps, args))):
            out = ir.Comma(ir.Assign(v.slot, a, t, p), out, t, p)
        return out

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

    @EXPRESSIONS("unary_expression")
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

    @EXPRESSIONS("update_expression")
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
            raise Widened
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

    @EXPRESSIONS("assignment_expression")
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

    @EXPRESSIONS("conditional_expression")
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

    @EXPRESSIONS("comma_expression")
    def x_comma_expression(self, node):
        first = self.effect(node.child_by_field_name("left"))
        then = self.rvalue(node.child_by_field_name("right"))
        return ir.Comma(first, then, then.type, pos(node))

    @EXPRESSIONS("cast_expression")
    def x_cast_expression(self, node):
        t = self.type_descriptor(node.child_by_field_name("type"))
        return self.explicit_cast(self.rvalue(node.child_by_field_name("value")), t, node)

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

    @EXPRESSIONS("sizeof_expression")
    def x_sizeof_expression(self, node):
        tnode = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        t = self.type_descriptor(tnode) if tnode is not None else \
            self.operand_type(value)
        return ir.Const(np.uint64(t.size), C.ULONG, pos(node))
