"""Calls: which function a call names (lambda, macro, member, device function, built-in) and
device functions inlined at each call.
"""

from __future__ import annotations

from ..model.pattern import suggest
from . import builtins, ir, templates
from . import ctype as C
from .builtins import Group
from .conversions import CONVERSIONS, conversion
from .dispatch import EXPRESSIONS
from .source import Function, Node, error, text
from .symbols import Frame, Lambda, LocalArray, LocalRef, Var, is_reference, pos, qualifiers

INLINE_LEVELS = 4  # nesting levels an inlined call costs: its compiler frames are 4 deep


class CallCompiler:
    """Compiler mixin: calls, with device functions inlined."""

    @EXPRESSIONS("call_expression")
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
            if found is None and text(scope) in ("std", "cuda::std") and len(args) == 1 and \
                    text(fn.child_by_field_name("name")) == "move":
                return self.expr(args[0])  # std::move(x): x itself, as an rvalue reference
            if found is None and text(scope) in builtins.LIBCUDACXX:
                found = builtins.libcudacxx_call(self, fn.child_by_field_name("name"), args,
                                                 node)
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
            if getattr(target, "type", None) == C.BARRIER:
                return builtins.barrier_method(self, method, args, node)
            if getattr(target, "type", None) == C.PIPELINE:
                return builtins.pipeline_method(self, method, args, node)
            raise error(node, f"call of '{text(fn)}' is outside the subset")
        if fn.type != "identifier":
            raise error(node, f"call of '{text(fn)}' is outside the subset")
        return self.call(text(fn), args, node)

    @EXPRESSIONS("gnu_asm_expression")
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
