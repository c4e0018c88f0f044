"""Statements and control flow: blocks, if, loops, switch, return -> ir statements."""

from __future__ import annotations

from . import ctype as C
from . import ir, lanes
from .builtins import Group
from .dispatch import STATEMENTS
from .source import Node, error, text
from .symbols import Var, is_group_type, pos


class StatementCompiler:
    """Compiler mixin: statements compiled in their scopes."""

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
        handler = STATEMENTS.get(node.type)
        if handler is None:
            raise error(node, f"'{node.type.replace('_', ' ')}' is outside the subset")
        return handler(self, node)

    @STATEMENTS("compound_statement")
    def compound(self, node: Node) -> ir.Block:
        return self.block(node)

    @STATEMENTS("expression_statement")
    def expression_statement(self, node: Node) -> ir.Stmt | None:
        """`e;`: its effects, each load once; a cooperative-groups tile declaration (which the
        grammar reads as an expression) declares the tile instead."""
        expr = node.named_children[0] if node.named_children else None
        if expr is None or self.group_declaration(expr):
            return None
        return ir.Eval(self.one_load_each(self.effect(expr)))

    @STATEMENTS("if_statement")
    def if_statement(self, node: Node) -> ir.Stmt:
        if any(c.type == "constexpr" for c in node.children):
            return self.if_constexpr(node)
        cond = self.condition(node.child_by_field_name("condition"))
        then = self.scoped(node.child_by_field_name("consequence"))
        alt = node.child_by_field_name("alternative")
        other = None if alt is None else self.scoped(alt.named_children[-1])
        return ir.If(cond, then, other)

    @STATEMENTS("type_definition", "alias_declaration")
    def local_type(self, node: Node) -> None:
        self.type_alias(node)

    @STATEMENTS("namespace_alias_definition")
    def local_namespace(self, node: Node) -> None:
        self.namespace_alias(node)

    @STATEMENTS("comment", "static_assert_declaration", "preproc_def", "preproc_function_def")
    def nothing(self, node: Node) -> None:
        """Statements that run nothing (macros were collected by the Unit, in source order)."""

    @STATEMENTS("preproc_call")
    def directive(self, node: Node) -> None:
        """`#pragma` and `#undef` inside a function run nothing; other directives are refused."""
        if text(node.child_by_field_name("directive")) not in ("#pragma", "#undef"):
            raise error(node, f"'{node.type.replace('_', ' ')}' is outside the subset")

    @STATEMENTS("break_statement", "continue_statement")
    def leave(self, node: Node) -> ir.Leave:
        kind = node.type
        if not self.loop_depth and not (kind == "break_statement" and self.switches):
            raise error(node, f"'{text(node)}' outside a loop")
        return ir.Leave("brk" if kind == "break_statement" else "cont")

    @STATEMENTS("switch_statement")
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

    @STATEMENTS("for_statement", "while_statement", "do_statement")
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

    @STATEMENTS("return_statement")
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
