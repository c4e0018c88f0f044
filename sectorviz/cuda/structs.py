"""Structs and classes for the compiler: C layout, members, member functions, operators.

A struct's layout follows C: each member at the next multiple of its alignment (`alignas`
raises it), the struct aligned to its most aligned member (or its own `alignas`), its size
rounded up to that alignment (tail padding). Sizes and offsets are bytes.

Memory: `p[i].x` is one access of the member's width at its offset. A whole struct read or
written (`Particle q = p[i];`, `p[i] = q;`) is one access per chunk of min(alignment, 16)
bytes that holds a member, as nvcc copies it: a 12-byte struct of floats is three 4-byte
accesses, an `alignas(16)` one of 16 bytes is one 16-byte access. Every chunk is counted,
whether or not its members are used later (nvcc drops loads of unused members; read the
member, `p[i].x`, to model that).

A local struct's value is a tuple of its members' values (arrays and vectors: tuples of
elements); member functions and operators are inlined like `__device__` functions, with the
object's members in scope and reference parameters bound to their arguments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model.pattern import suggest
from . import builtins, ir, templates
from . import ctype as C
from .dispatch import EXPRESSIONS
from .source import Function, Node, error, text
from .symbols import LocalRef, Var


@dataclass
class StructDef:
    """A laid-out struct: its type, member functions by name, `static` members' nodes."""

    type: C.Struct
    methods: dict[str, list[Node]] = field(default_factory=dict)  # function_definition nodes
    statics: dict[str, Node] = field(default_factory=dict)  # static member -> its value node
    bindings: tuple[tuple[str, object], ...] = ()  # a class template's arguments by name
    own: str = ""  # the name the struct's code calls itself by (a template's without <...>)


def _round(n: int, align: int) -> int:
    return -(-n // align) * align


def method_name(fn: Node) -> str | None:
    """A member function definition's name: `f`, `operator[]`, the struct's name for a
    constructor, `operator_cast` for a conversion operator (`operator T *()`); None for a
    destructor."""
    decl = fn.child_by_field_name("declarator")
    if decl is not None and decl.type == "operator_cast":
        return "operator_cast"
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator") or (
            decl.named_children[0] if decl.named_children else None)
    if decl is None:
        return None
    name = decl.child_by_field_name("declarator")
    return None if name.type == "destructor_name" else "".join(text(name).split())


class StructCompiler:
    """The Compiler's struct half (a mixin: it uses the Compiler's expr, rvalue, inline...)."""

    # ------------------------------------------------------------ layout

    def struct_type(self, node: Node) -> C.Struct:
        """A struct_specifier / class_specifier / type_identifier -> its laid-out type."""
        return self.struct_def(node).type

    def struct_def(self, node: Node) -> StructDef:
        """A struct's layout, laid out on first use: from its specifier, its name, or a class
        template's name with arguments (`Packed<float>`: the arguments bound in its code)."""
        defs = self.__dict__.setdefault("_struct_defs", {})
        spec, name, bindings = node, None, {}
        if node.type in ("template_type", "template_function"):
            own = text(node.child_by_field_name("name"))
            spec, plist = self.unit.struct_templates[own]
            bindings = templates.bind(self, plist, templates.arguments(
                node.child_by_field_name("arguments")), {}, node, repr(own))
            name = f"{own}<{', '.join(map(_label, bindings.values()))}>"
            spec, bindings = self.specialization(own, plist, spec, bindings, node)
        elif node.type in ("type_identifier", "identifier", "namespace_identifier") or \
                node.child_by_field_name("body") is None:
            name_node = node if node.child_count == 0 else node.child_by_field_name("name")
            name = own = text(name_node)
            if name in self.unit.struct_templates:
                raise error(node, f"the class template '{name}' needs its arguments: "
                                  f"{name}<...>")
            if name not in self.unit.structs:
                raise error(node, f"type '{name}' is outside the subset" +
                            suggest(name, [*C.NAMED, *self.unit.structs]))
            spec = self.unit.structs[name]
        else:
            own = text(spec.child_by_field_name("name")) if spec.child_by_field_name("name") \
                else ""
        key = (spec.start_byte, tuple((k, _key(v)) for k, v in bindings.items()))
        if key not in defs:
            if key in self.__dict__.setdefault("_laying_out", set()):
                raise error(node, "a struct that contains itself")
            self._laying_out.add(key)
            try:
                defs[key] = self._layout(spec, name, tuple(bindings.items()), own)
            finally:
                self._laying_out.discard(key)
        return defs[key]

    def specialization(self, own: str, plist: Node, spec: Node, bindings: dict,
                       node: Node) -> tuple[Node, dict]:
        """Class template `own` with `bindings` -> (specifier, bindings) of the explicit
        specialization for those arguments (`template <> struct own<args> {...}`: no
        bindings), else of the primary template; a partial specialization is refused."""
        if own in self.unit.partial_specializations:
            raise error(self.unit.partial_specializations[own], "a partial specialization of "
                        f"the class template '{own}' is outside the subset")
        for special, args in self.unit.struct_specializations.get(own, []):
            with templates.file_scope(self):
                theirs = templates.bind(self, plist, templates.arguments(args), {}, args,
                                        repr(own))
            if [_key(v) for v in theirs.values()] == [_key(v) for v in bindings.values()]:
                return special, {}
        return spec, bindings

    def _layout(self, spec: Node, name: str | None, bindings: tuple, own: str) -> StructDef:
        """Members at C's offsets; member types and sizes see the template's arguments and
        the struct's static members."""
        name_node = spec.child_by_field_name("name")
        name = name or (text(name_node) if name_node is not None else "(anonymous struct)")
        if any(c.type == "base_class_clause" for c in spec.children):
            raise error(spec, f"base classes of '{name}' are outside the subset")
        members, methods, statics = [], {}, {}
        offset, align = 0, self._alignas(spec)
        saved, self.scopes = self.scopes, [dict(bindings)]
        try:
            for item in spec.child_by_field_name("body").named_children:
                if item.type == "function_definition":
                    fname = method_name(item)
                    if fname is not None:
                        methods.setdefault(fname, []).append(item)
                    continue
                if item.type != "field_declaration" or item.child_by_field_name("type") is None:
                    continue
                if "static" in {text(c) for c in item.children
                                if c.type == "storage_class_specifier"}:
                    for decl in item.children_by_field_name("declarator"):
                        statics[text(decl)] = item.child_by_field_name("default_value") or decl
                        self.scopes[0][text(decl)] = _Static(name, statics, text(decl),
                                                             bindings)
                    continue
                if any(c.type == "bitfield_clause" for c in item.children):
                    raise error(item, "bit fields are outside the subset")
                base = self.base_type(item.child_by_field_name("type"))
                for decl in item.children_by_field_name("declarator"):
                    mname, t, _ = self.unwrap(decl, base)
                    if isinstance(t, C.Opaque) or (isinstance(t, C.Array) and t.n <= 0):
                        raise error(decl, f"member '{mname}' of type {C.name_of(t)} is outside "
                                          "the subset")
                    a = max(C.alignof(t), max((self._alignas(q) for q in item.children
                                               if q.type == "type_qualifier"), default=1))
                    offset = _round(offset, a)
                    members.append(C.Member(mname, t, offset))
                    offset += t.size
                    align = max(align, a)
        finally:
            self.scopes = saved
        size = max(1, _round(offset, align))
        return StructDef(C.Struct(name, tuple(members), size, align), methods, statics,
                         bindings, own)

    def _alignas(self, node: Node) -> int:
        """The largest `alignas(n)` / `alignas(type)` among a node's children (1 if none)."""
        out = 1
        for q in node.children:
            if q.type != "alignas_qualifier":
                continue
            arg = q.named_children[0]
            n = C.alignof(self.type_descriptor(arg)) if arg.type == "type_descriptor" else \
                self.constant_int(arg)
            if n <= 0 or n & (n - 1):
                raise error(q, f"alignas({n}): an alignment is a power of two")
            out = max(out, n)
        return out

    def operand_type(self, node: Node) -> C.CType:
        """The type `sizeof`/`alignof` measure: `(T)` naming a type, else the expression's
        type (never evaluated: no access, no decay)."""
        named = templates.type_named_by(self, node)
        if named is not None:
            return named
        inner = node
        while inner.type == "parenthesized_expression" and inner.named_child_count == 1:
            inner = inner.named_children[0]
        if inner.type == "identifier" and not self.shadowed(inner) and (
                text(inner) in self.unit.structs or text(inner) in self.unit.struct_templates):
            return self.struct_type(inner)
        if inner.type == "template_function" and \
                text(inner.child_by_field_name("name")) in self.unit.struct_templates:
            return self.struct_type(inner)  # `sizeof(Packed<float>)`
        return self.expr(node).type

    @EXPRESSIONS("alignof_expression")
    def x_alignof_expression(self, node):
        tnode = node.child_by_field_name("type")
        t = self.type_descriptor(tnode) if tnode is not None else \
            self.operand_type(node.child_by_field_name("value"))
        return ir.Const(np.uint64(C.alignof(t)), C.ULONG, ir_pos(node))

    # ------------------------------------------------------------ members

    def member(self, obj, name: str, node: Node):
        """Member `name` of a struct or vector lvalue / value `obj` (Var, Local, Memory, or an
        expression): an lvalue of the same kind, or a value."""
        t = obj.type
        if isinstance(t, C.Vec) and name in C.FIELDS[:t.n]:
            i = C.FIELDS.index(name)
            mt, offset = t.base, i * t.base.size
        elif isinstance(t, C.Struct) and t.member(name) is not None:
            i = t.members.index(t.member(name))
            mt, offset = t.member(name).type, t.member(name).offset
        elif isinstance(t, C.Struct) and name in self.struct_def_of(t).statics:
            d = self.struct_def_of(t)
            return self.static_member(_Static(t.name, d.statics, name, d.bindings), node)
        else:
            known = [m.name for m in t.members] if isinstance(t, C.Struct) else []
            raise error(node, f"field '{name}' of {C.name_of(t)} is outside the subset" +
                        suggest(name, known))
        where = ir_pos(node)
        if isinstance(obj, ir.Memory):
            addr = ir.Offset(obj.addr, ir.Const(np.int64(offset), C.LONG), 1,
                             C.Pointer(mt, obj.space, obj.root), where)
            return ir.Memory(addr, mt, obj.space, obj.root, where, obj.loops)
        if isinstance(obj, ir.Part):
            return ir.Part(obj.slot, obj.path + (i,), mt, text(node), where, obj.whole)
        if self.is_var(obj):
            return ir.Part(obj.slot, (i,), mt, text(node), where, obj.type)
        return ir.Field(obj, i, mt, where)

    def element(self, obj, index: ir.Expr, node: Node) -> ir.Part:
        """Element `index` of a local array (a local struct's array member)."""
        t = obj.type
        if not C.is_int(index.type):
            raise error(node, "an array index must be an integer")
        step = int(ir.constant_value(index)) if index.const else (index, t.n)
        if isinstance(step, int) and not 0 <= step < t.n:
            raise error(node, f"index {step} outside [0, {t.n})")
        path, whole = (obj.path, obj.whole) if isinstance(obj, ir.Part) else ((), obj.type)
        return ir.Part(obj.slot, path + (step,), t.of, text(node), ir_pos(node), whole)

    def struct_def_of(self, t: C.Struct) -> StructDef:
        return next(d for d in self.__dict__["_struct_defs"].values() if d.type == t)

    def static_member(self, member: "_Static", node: Node) -> ir.Const:
        """A `static const` / `static constexpr` member: its constant value, computed where
        its struct's other static members are in scope."""
        value = member.statics[member.name]
        where = f"{member.struct}::{member.name}"
        if value.type == "field_identifier":
            raise error(node, f"static member '{where}' has no value in the struct")
        decl = value.parent
        base = self.base_type(decl.child_by_field_name("type"))
        saved, self.scopes = self.scopes, [dict(member.bindings) | _statics_scope(
            member.struct, member.statics, member.bindings)]
        try:
            e = self.rvalue(value)
            e = e if base is C.AUTO else self.converted(e, base, value)
        finally:
            self.scopes = saved
        if not e.const:
            raise error(node, f"'{where}' is not a constant")
        return ir.Const(ir.constant_value(e), e.type, ir_pos(node))

    @EXPRESSIONS("qualified_identifier")
    def x_qualified_identifier(self, node):
        """`T::size`: a static member of a struct (named, aliased or a template's); a
    `cuda::pipeline_role` enumerator."""
        t = self.scope_struct(node.child_by_field_name("scope"))
        name = text(node.child_by_field_name("name"))
        if t is not None and name in self.struct_def_of(t).statics:
            d = self.struct_def_of(t)
            return self.static_member(_Static(t.name, d.statics, name, d.bindings), node)
        role = builtins.pipeline_role(node)
        if role is not None:
            return role
        raise error(node, f"'{text(node)}' is outside the subset")

    def scope_struct(self, scope: Node | None) -> C.Struct | None:
        """The struct a `T::` scope names (a struct, a typedef of one, `Packed<float>`, a
        template's type parameter), else None."""
        if scope is None:
            return None
        if scope.type == "template_type":
            t = self.base_type(scope)
        elif text(scope) in self.unit.structs or text(scope) in self.unit.types or any(
                isinstance(s.get(text(scope)), templates.TypeName) for s in self.scopes):
            t = self.named_type(text(scope), scope)
        else:
            return None
        return t if isinstance(t, C.Struct) else None

    def method(self, t: C.Struct, fn: Node, label: str) -> Function:
        """A member function of `t` as a Function whose code sees the template's arguments
        and the struct's own name."""
        d = self.struct_def_of(t)
        own = ((d.own, templates.TypeName(t)),) if d.own else ()
        statics = tuple(_statics_scope(t.name, d.statics, d.bindings).items())
        return Function(fn, label, frozenset(), None, d.bindings + own + statics)

    def this_object(self, node: Node):
        frame = next((f for f in reversed(self.frames) if f.this is not None), None)
        if frame is None:
            raise error(node, "'this' outside a member function")
        return frame.this

    # ------------------------------------------------------------ copies

    def struct_sites(self, mem: ir.Memory, op: str, node: Node) -> tuple:
        """A whole-struct load or store (or of a 3-component vector type, aligned to its
        component: float3) -> ((byte offset, site), ...): one access per chunk of
        min(alignment, 16) bytes holding a member, named by the member when it is one."""
        t = mem.type
        unit = min(C.alignof(t), 16)
        leaves = _leaves(t, 0, "")
        out = []
        for start in range(0, t.size, unit):
            inside = [(o, n, name) for o, n, name in leaves if o < start + unit and o + n > start]
            if not inside:
                continue
            exact = [name for o, n, name in _leaves(t, 0, "", whole=True)
                     if o == start and n == unit]
            suffix = "" if unit == t.size else exact[0] if exact else \
                f" (bytes {start}-{start + unit - 1})"
            out.append((start, self.chunk_site(mem, op, node, start, unit, suffix)))
        return tuple(out)

    def chunk_site(self, mem: ir.Memory, op: str, node: Node, offset: int, width: int,
                   suffix: str) -> ir.Site:
        line, col = ir_pos(node)
        key = (line, col, op, mem.space, mem.root, offset)
        if key not in self._site_keys:
            site = ir.Site(line, col, op, mem.root, width, text(node) + suffix)
            self._site_keys[key] = site
            self.sites[mem.space].append(site)
        return self._site_keys[key]

    # ------------------------------------------------------------ construction

    def construct(self, t: C.CType, init: Node) -> ir.Expr:
        """A struct or vector value from `{a, b}` (members in order, the rest zero) or a
        constructor's `(args)` / `{args}`."""
        args = [a for a in init.named_children if a.type != "comment"]
        if isinstance(t, C.Struct):
            ctor = self.struct_def_of(t).methods.get(self.ctor_name(t))
            if ctor and (init.type == "argument_list" or any(
                    _arity(f) == len(args) for f in ctor)):
                return self.constructor_call(t, args, init)
            if init.type == "argument_list" and args:
                raise error(init, f"'{t.name}' has no constructor for {len(args)} arguments")
        if _parts(t) is None:
            if len(args) > 1:
                raise error(init, f"{C.name_of(t)} takes one value")
            return self.zero(t, init) if not args else self.converted(
                self.rvalue(args[0]), t, args[0])
        rest = list(args)
        value = self.fill_members(t, rest, init)
        if rest:
            raise error(rest[0], f"too many values for {C.name_of(t)}")
        return value

    def fill_members(self, t: C.CType, rest: list[Node], init: Node) -> ir.Expr:
        """`t` from the front of an initializer list's values (taken off `rest`): a nested
        `{...}` fills one member, else members take values in order (brace elision); what
        is left over is zero."""
        parts = _parts(t)
        if parts is None:
            return self.zero(t, init) if not rest else self.converted(
                self.rvalue(rest[0]), t, rest.pop(0))
        values = []
        for pt in parts:
            if rest and rest[0].type == "initializer_list":
                values.append(self.construct(pt, rest.pop(0)))
            else:
                values.append(self.fill_members(pt, rest, init))
        return ir.Vector(values, t, ir_pos(init))

    @EXPRESSIONS("compound_literal_expression")
    def x_compound_literal_expression(self, node):
        """`T{a, b}`: a struct or vector value."""
        t = self.type_descriptor(node) if node.child_by_field_name("declarator") else \
            self.base_type(node.child_by_field_name("type"))
        if not isinstance(t, C.Struct | C.Vec):
            raise error(node, f"'{text(node)[:40]}' is outside the subset")
        return self.construct(t, node.child_by_field_name("value"))

    def zero(self, t: C.CType, node: Node) -> ir.Expr:
        parts = _parts(t)
        if parts is None:
            return ir.Const(t.dtype.type(0), t, ir_pos(node)) if isinstance(t, C.Num) else \
                ir.Const(np.int64(0), t, ir_pos(node))
        return ir.Vector([self.zero(p, node) for p in parts], t, ir_pos(node))

    def constructor_call(self, t: C.Struct, args: list[Node], node: Node) -> ir.Expr:
        """`T(args)`: a temporary built by the constructor that takes len(args) arguments."""
        fn = self.pick(t, self.ctor_name(t), args, node)
        temp = self.temporary(t, node)
        call = self.inline(self.method(t, fn, t.name), args, node, this=temp)
        return ir.Comma(call, self.value_of(temp, node), t, ir_pos(node))

    def default_construct(self, var, node: Node) -> ir.Expr | None:
        """`T x;`: the constructor of no arguments when it does something, else None."""
        t = var.type
        if not isinstance(t, C.Struct):
            return None
        fns = [f for f in self.struct_def_of(t).methods.get(self.ctor_name(t), [])
               if _arity(f) == 0 and f.child_by_field_name("body") is not None]
        if not fns:
            return None
        return self.inline(self.method(t, fns[0], t.name), [], node, this=var)

    def ctor_name(self, t: C.Struct) -> str:
        """Constructors are named by the struct's own name (a template's without <...>)."""
        return self.struct_def_of(t).own or t.name

    def temporary(self, t: C.CType, node: Node):
        return Var(self.slot(), t, "(temporary)")

    # ------------------------------------------------------------ calls

    def pick(self, t: C.Struct, name: str, args: list[Node], node: Node) -> Node:
        fns = [f for f in self.struct_def_of(t).methods.get(name, [])
               if f.child_by_field_name("body") is not None]
        fits = [f for f in fns if _arity(f) == len(args)]
        if not fits:
            raise error(node, f"'{t.name}' has no member function {name} taking "
                              f"{len(args)} arguments" +
                        suggest(name, self.struct_def_of(t).methods))
        if len({_signature(f) for f in fits}) > 1:
            raise error(node, f"overloaded {t.name}::{name} is outside the subset")
        return fits[0]  # overloads that differ only by `const`: the first

    def struct_conversion(self, e: ir.Expr, t: C.CType, node: Node) -> ir.Expr:
        """A struct value where a pointer or number is needed -> its conversion operator's
        result (`T *p = SharedMemory<T>();`), run on a temporary copy of the value."""
        fns = [f for f in self.struct_def_of(e.type).methods.get("operator_cast", [])
               if f.child_by_field_name("body") is not None]
        if not fns:
            raise error(node, f"cannot convert {C.name_of(e.type)} to {C.name_of(t)}")
        temp = self.temporary(e.type, node)
        call = self.inline(self.method(e.type, fns[0], e.type.name), [], node, this=temp)
        return ir.Comma(ir.Assign(temp.slot, e, e.type, ir_pos(node)), call, call.type,
                        ir_pos(node))

    def has_method(self, t: C.CType, name: str) -> bool:
        return isinstance(t, C.Struct) and name in self.struct_def_of(t).methods

    def method_call(self, obj, name: str, args: list[Node], node: Node):
        """obj.name(args): the member function inlined with `obj` as `this`; a function
        that returns a reference to a member gives that lvalue."""
        t = obj.type
        fn = self.pick(t, name, args, node)
        static = any(text(c) == "static" for c in fn.children
                     if c.type == "storage_class_specifier")
        if not static and not (isinstance(obj, ir.Part | ir.Memory) or self.is_var(obj)):
            temp = self.temporary(t, node)
            call = self.value_of(self.method_call(temp, name, args, node), node)
            return ir.Comma(ir.Assign(temp.slot, obj, t, ir_pos(node)), call, call.type,
                            ir_pos(node))
        return self.inline(self.method(t, fn, f"{t.name}::{name}"), args, node,
                           this=None if static else obj)

    def member_call(self, name: str, args: list[Node], node: Node):
        """`f(args)` inside a member function naming another member function of its struct
        (on the same object), else None."""
        if any(name in scope and not isinstance(scope[name], templates.TypeName)
               for scope in self.scopes):
            return None
        own = next((s[k].type for s in reversed(self.scopes) for k in s
                    if isinstance(s[k], templates.TypeName) and self.has_method(s[k].type, name)
                    and self.struct_def_of(s[k].type).own == k), None)
        if own is None:
            return None
        this = next((f.this for f in reversed(self.frames) if f.this is not None), None)
        if this is not None and this.type == own:
            return self.method_call(this, name, args, node)
        return self.static_call(own, name, args, node)

    def static_call(self, t: C.Struct, name: str, args: list[Node], node: Node):
        """`T::f(args)`: a static member function."""
        fn = self.pick(t, name, args, node)
        return self.inline(self.method(t, fn, f"{t.name}::{name}"), args, node)

    def operator(self, op: str, obj, args: list[Node], node: Node):
        """`a op b`, `a[i]`, `a op= b` on a struct: its `operator op` member function; a
        compound assignment without one is `a = a op b`."""
        name = f"operator{op}"
        if self.has_method(obj.type, name):
            return self.method_call(obj, name, args, node)
        if op.endswith("=") and op not in ("==", "!=", "<=", ">=") and \
                self.has_method(obj.type, f"operator{op[:-1]}"):
            value = self.value_of(self.method_call(obj, f"operator{op[:-1]}", args, node), node)
            return self.assignment(self.lvalue_of(obj, node), value, node, node)
        raise error(node, f"'{op}' of {C.name_of(obj.type)} needs an 'operator{op}' member "
                          "function")

    def lvalue_of(self, obj, node: Node):
        if isinstance(obj, ir.Part | ir.Memory) or self.is_var(obj):
            return obj
        raise error(node, f"cannot assign to '{text(node)}'")

    def bind_members(self, this, scope: dict, node: Node) -> None:
        """A member function's scope: the object's members (its statics come with the
        function's bindings, see `method`)."""
        t = this.type
        for m in t.members:
            scope[m.name] = self.member(this, m.name, node)

    def member_inits(self, fn: Node, this) -> list[ir.Stmt]:
        """A constructor's `: a(x), b{y}` list -> assignments to the members."""
        out = []
        for item in fn.children:
            if item.type != "field_initializer_list":
                continue
            for init in item.named_children:
                name_node = init.named_children[0]
                value_node = init.named_children[1]
                target = self.member(this, text(name_node), name_node)
                if value_node.type == "initializer_list" or (
                        isinstance(target.type, C.Struct | C.Vec) and
                        len(value_node.named_children) != 1):
                    value = self.construct(target.type, value_node)
                else:
                    value = self.rvalue(value_node.named_children[0])
                out.append(ir.Eval(self.assignment(target, value, init, name_node)))
        return out

    def memcpy(self, args: list[Node], node: Node) -> ir.Expr:
        """memcpy(&dst, src, n) into a local variable of n bytes from a local variable of n
        bytes (a packed vector type's int4 constructor) or from n bytes of a per-thread
        array (`memcpy(&out, regs, sizeof(out))`): dst takes src's bytes. Memory is not
        copied this way."""
        if len(args) != 3:
            raise error(node, "memcpy takes (destination, source, bytes)")
        dst, src = (self.local_object(a) for a in args[:2])
        n = self.constant_int(args[2])
        if isinstance(src, LocalRef):
            src = self.registers(src, n, args[1])
        elif src is not None and src.type.size == n:
            src = ir.PartRead(src, src.type, ir_pos(args[1])) if isinstance(src, ir.Part) \
                else ir.Read(src.slot, src.type, ir_pos(args[1]), src.name)
        if dst is None or isinstance(dst, LocalRef) or src is None or \
                src.type.size != n or dst.type.size != n:
            raise error(node, "memcpy is in the subset into a local variable of its byte "
                              "count, from another or from a per-thread array")
        value = ir.Reinterpret(src, dst.type, ir_pos(node))
        return self.assignment(dst, value, node, args[0])

    def registers(self, ref: LocalRef, n: int, node: Node) -> ir.Expr | None:
        """n bytes of a per-thread array from element `ref` (a constant index) on, as one
        value (a tuple of its elements); None when they are not whole elements in it."""
        elem = ref.array.elem
        count, start = n // elem.size, ref.index
        if n % elem.size or not start.const:
            return None
        first = int(ir.constant_value(start))
        if first + count > ref.array.type.size // elem.size:
            return None
        return ir.Vector([self.value_of(LocalRef(ref.array, elem, ir.Const(
            np.int64(first + k), C.LONG, ir_pos(node))), node) for k in range(count)],
            C.Array(elem, count), ir_pos(node))

    def local_object(self, node: Node):
        """`&x`, `x` (an array member) or `&x.m` naming a local -> that lvalue, else None."""
        if node.type == "pointer_expression" and \
                node.child_by_field_name("operator").type == "&":
            node = node.child_by_field_name("argument")
        target = self.expr(node)
        if isinstance(target, ir.Part | LocalRef) or self.is_var(target):
            return target
        return None

    def is_var(self, obj) -> bool:
        return isinstance(obj, Var)


@dataclass
class _Static:
    """A static member named inside its struct's code: compiled when it is read."""

    struct: str
    statics: dict[str, Node]  # the struct's static members -> their value nodes
    name: str
    bindings: tuple[tuple[str, object], ...] = ()  # its class template's arguments


def _statics_scope(struct: str, statics: dict[str, Node], bindings: tuple = ()
                   ) -> dict[str, _Static]:
    return {n: _Static(struct, statics, n, bindings) for n in statics}


def _label(binding) -> str:
    """A template argument as Nsight Compute prints it: `float`, `4`."""
    return C.name_of(binding.type) if isinstance(binding, templates.TypeName) else \
        str(int(binding.value))


def _key(binding):
    return binding if isinstance(binding, templates.TypeName) else int(binding.value)


def ir_pos(node: Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.start_point[1] + 1


def _signature(fn: Node) -> tuple[str, ...]:
    """A function's parameter types as written (overloads that differ only by const
    qualifiers of the function have one signature)."""
    decl = fn.child_by_field_name("declarator")
    while decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator") or decl.named_children[0]
    return tuple(text(p.child_by_field_name("type")) for p in
                 decl.child_by_field_name("parameters").named_children
                 if p.child_by_field_name("type") is not None)


def _arity(fn: Node) -> int:
    decl = fn.child_by_field_name("declarator")
    while decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator") or decl.named_children[0]
    params = decl.child_by_field_name("parameters").named_children
    params = [p for p in params if p.type != "comment"]
    return 0 if len(params) == 1 and text(params[0]) == "void" else len(params)


def _parts(t: C.CType) -> list[C.CType] | None:
    """The types an initializer list fills in order (None: a scalar)."""
    if isinstance(t, C.Struct):
        return [m.type for m in t.members]
    if isinstance(t, C.Array):
        return [t.of] * t.n
    if isinstance(t, C.Vec):
        return [t.base] * t.n
    return None


def _leaves(t: C.CType, offset: int, name: str, whole: bool = False
            ) -> list[tuple[int, int, str]]:
    """(byte offset, size, member path) of every number inside `t` (vector components
    included), outermost first; `whole`: the members that hold them too."""
    out = [(offset, t.size, name)] if whole and name else []
    if isinstance(t, C.Struct):
        return out + [leaf for m in t.members
                      for leaf in _leaves(m.type, offset + m.offset, f"{name}.{m.name}", whole)]
    if isinstance(t, C.Array):
        return out + [leaf for k in range(t.n)
                      for leaf in _leaves(t.of, offset + k * t.of.size, f"{name}[{k}]", whole)]
    if isinstance(t, C.Vec):
        return out + [(offset + k * t.base.size, t.base.size, f"{name}.{C.FIELDS[k]}")
                      for k in range(t.n)]
    return [(offset, t.size, name)]
