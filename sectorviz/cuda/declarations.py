"""Local declarations: variables, per-thread arrays, references and __shared__ variables."""

from __future__ import annotations

from dataclasses import replace

from ..model.kernel import SHARED_ALIGN
from ..model.pattern import MAX_BLOCK_SHARED, MAX_STATIC_SHARED
from . import ctype as C
from . import ir, lanes, templates
from .builtins import Group
from .dispatch import STATEMENTS
from .source import Node, error, text
from .symbols import Lambda, LocalArray, LocalRef, Shared, Var, is_reference, pos

LOCAL_ARRAYS = ("per-thread arrays are registers (no memory traffic); nvcc may spill "
                "dynamically indexed ones to local memory, which is not modelled")


class DeclarationCompiler:
    """Compiler mixin: local and __shared__ declarations."""

    def named_group(self, name: str, group: Group) -> list[ir.Stmt]:
        """Binds `name` to `group`; the member mask of a coalesced group or partition is kept
        in a variable: the members are the lanes that made the group, not those that use it."""
        if group.mask is None or isinstance(group.mask, ir.Read):
            self.scopes[-1][name] = group
            return []
        slot = self.slot()
        self.scopes[-1][name] = replace(group, mask=ir.Read(slot, C.UINT, group.mask.pos, name))
        return [ir.Declare(slot, group.mask, name)]

    @STATEMENTS("declaration")
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
                out.extend(self.named_group(name, self.group(init)))
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
                    out.extend(self.named_group(name, found))
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
                value = self.one_load_each(value)
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

    def _check_shared_total(self, decl: Node) -> None:
        """The block's __shared__ bytes within sm_90's limits: the static variables at most
        MAX_STATIC_SHARED, static plus dynamic at most MAX_BLOCK_SHARED; an error naming
        the figure at `decl` otherwise."""
        dynamic = (self._dynamic_at, self.dynamic_shared)
        static = sum(size for at, size in self.shared.values() if (at, size) != dynamic)
        if static > MAX_STATIC_SHARED:
            raise error(decl, f"the __shared__ variables total {static:,} bytes; a block's "
                              f"static shared memory is at most {MAX_STATIC_SHARED:,} (48 KiB)")
        total = static + (self.dynamic_shared or 0) * (self._dynamic_at is not None)
        if total > MAX_BLOCK_SHARED:
            raise error(decl, f"the block's shared memory totals {total:,} bytes ({static:,} "
                              f"static, {total - static:,} dynamic); sm_90 allows at most "
                              f"{MAX_BLOCK_SHARED:,} (227 KiB) per block")

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
            self._check_shared_total(decl)
        self.scopes[-1][name] = Shared(name, t, self.shared[name][0])
