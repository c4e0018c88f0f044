"""Declared types: type names, declarators and type aliases -> C types."""

from __future__ import annotations

from ..model.errors import PatternError
from ..model.pattern import suggest
from . import ctype as C
from . import ir, templates
from .builtins import GROUP_NAMESPACES, LIBCUDACXX
from .source import MAX_NESTING, Node, alias_name_nodes, error, text
from .symbols import GroupNamespace, is_group_type
from .templates import TypeName

PIPELINE_STATE = (f"a cuda::pipeline_shared_state<scope, N> takes {C.PIPELINE_STAGE} N + "
                  f"{C.PIPELINE_COUNT} bytes of shared memory, as libcu++ lays it out (a "
                  "produced and a consumed 8-byte barrier per stage, then a thread count); "
                  "a pipeline's calls only order threads (its copies move the bytes)")


WMMA_REFUSED = ("warp matrix fragments (nvcuda::wmma) are outside the subset: NVIDIA leaves "
                "unspecified which lane moves which element and in how many instructions")


class TypeCompiler:
    """Compiler mixin: the type a declaration, cast or `sizeof` names."""

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
        elif kind == "template_type" and text(node.child_by_field_name("name")) == "fragment":
            raise error(node, WMMA_REFUSED)
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
            if text(node).replace(" ", "").startswith(("wmma::", "nvcuda::wmma::")):
                raise error(node, WMMA_REFUSED)
            library = self.library_type(scope, node.child_by_field_name("name"))
            if library is not None:
                return library
            if scope is None or text(scope) in ("std", "cuda::std"):
                return self.named_type(name, node)
        else:
            raise error(node, f"type '{text(node)}' is outside the subset")
        if name not in C.NAMED:
            raise error(node, f"type '{name}' is outside the subset" + suggest(name, C.NAMED))
        return C.NAMED[name]

    def library_type(self, scope: Node | None, name: Node) -> C.CType | None:
        """`cuda::barrier<scope>` (and its `::arrival_token`), `cuda::pipeline<scope>`,
        `cuda::pipeline_shared_state<scope, N>` and `cg::block_tile_memory<N>` (objects that
        only order threads or hold cooperative groups' scratch) -> their type, else None."""
        if scope is not None and text(scope) in LIBCUDACXX and \
                name.type == "qualified_identifier" and \
                text(name.child_by_field_name("name")) == "arrival_token" and \
                self.library_type(scope, name.child_by_field_name("scope")) == C.BARRIER:
            return C.ARRIVAL_TOKEN
        if name.type != "template_type" or scope is None:
            return None
        template = text(name.child_by_field_name("name"))
        if text(scope) in LIBCUDACXX and template == "barrier":
            return C.BARRIER
        if text(scope) in LIBCUDACXX and template == "pipeline":
            return C.PIPELINE
        if text(scope) in LIBCUDACXX and template == "pipeline_shared_state":
            targs = name.child_by_field_name("arguments").named_children
            if len(targs) != 2:
                raise error(name, "cuda::pipeline_shared_state takes <scope, stages>")
            if PIPELINE_STATE not in self.assumptions:
                self.assumptions.append(PIPELINE_STATE)
            return C.pipeline_shared_state(self.template_int(targs[1]))
        if self.group_namespace(scope) and template == "block_tile_memory":
            return C.TILE_MEMORY
        return None

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
        """A local `typedef` / `using X = ...`: its names become types in the current scope
        (again only as the type they name there already, as in C++)."""
        for at in alias_name_nodes(node):
            name = text(at)
            t = templates.alias_type(self, node, name)
            before = self.scopes[-1].get(name)
            if isinstance(before, TypeName) and before.type != t:
                raise _conflict(at, name, before.node)
            self.scopes[-1][name] = TypeName(t, node)

    def check_file_typedefs(self) -> None:
        """A file-scope typedef / using of a name already given another type in the same
        namespace is refused, as nvcc refuses it (one that names the same type is allowed);
        declarations whose types are outside the subset (host code's) are not compared."""
        with templates.file_scope(self):
            for name, node in self.unit.redeclared:
                first = self.unit.types[name]
                try:
                    same = templates.alias_type(self, first, name) == \
                        templates.alias_type(self, node, name)
                except PatternError:
                    continue
                if not same:
                    at = next(n for n in alias_name_nodes(node) if text(n) == name)
                    raise _conflict(at, name, first)

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

    def template_int(self, node: Node) -> int:
        """A template's integer argument, also a constant's name the grammar took for a type
        (`pipeline_shared_state<scope, kStages>`) -> its value."""
        inner = node.child_by_field_name("type") if node.type == "type_descriptor" else None
        if inner is not None and inner.type == "type_identifier" and \
                node.child_by_field_name("declarator") is None:
            e = self.value_of(self.x_identifier(inner), inner)
            if e.const and C.is_int(e.type):
                return int(ir.constant_value(e))
        return self.constant_int(node)

    def type_descriptor(self, node: Node) -> C.CType:
        _, t, _ = self.declarator(node)
        return t


def _conflict(at: Node, name: str, first: Node | None) -> PatternError:
    """`name` declared again, at `at`, as another type than its declaration `first` gives."""
    where = "" if first is None else f" at line {first.start_point[0] + 1}"
    return error(at, f"the type name '{name}' is declared again as another type than "
                     f"its declaration{where}; give the new type its own name")
