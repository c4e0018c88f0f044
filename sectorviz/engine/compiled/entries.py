"""The kernel entries of a PTX text and the one a pattern names.

`.entry` names are mangled (`_Z11matmulTiledILi16EfEvPKT0_S2_PS0_i`); the C++ runtime's
`__cxa_demangle` (in this process; c++filt where it cannot be loaded) gives the name Nsight
Compute prints (`void matmulTiled<16, float>(float const*, float const*, float*, int)`). A pattern's
`kernel.function` names an entry as the PTX spells it (`_Z6vecAddPKfS0_Pfi`), a plain
function (`matmulTiled`: the one instantiation the compiled code holds, which for a template
is the one the host code launches) or an instantiation (`matmulTiled<16, float>`; trailing
defaulted arguments may be left out: `matmulTiled<16>`).
The kernel's parameter names come from its definition in the source (tree-sitter).
"""

from __future__ import annotations

import ctypes
import re
import shutil
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from ...model.errors import PatternError
from ...model.pattern import suggest
from .bounded import run_bounded

_ENTRY = re.compile(r"^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([\w$]+)\s*\(([^)]*)\)", re.M)
_INT_SUFFIX = re.compile(r"(?<=\d)[uUlL]+\b")
DEMANGLE_SECONDS = 30.0
CXX_RUNTIMES = ("libstdc++.so.6", "libc++abi.dylib", "libc++.1.dylib")  # with __cxa_demangle


@dataclass(frozen=True)
class Entry:
    """One `.entry` of a PTX text: its mangled and demangled names, its parameter count."""

    mangled: str
    demangled: str
    nparams: int

    @property
    def split(self) -> tuple[str, str | None]:
        """(function name, template arguments or None; "" for a template whose name could
        not be demangled)."""
        if self.demangled == self.mangled and self.mangled.startswith("_Z"):
            return _itanium_name(self.mangled)
        return split_name(self.demangled)

    @property
    def shown(self) -> str:
        """`matmulTiled<16, float>`: the name without `void` and parameters."""
        name, args = self.split
        return name if args is None else f"{name}<{args}>"


def _itanium_name(mangled: str) -> tuple[str, str | None]:
    """A mangled name c++filt did not demangle (there is none) -> (its function's name,
    None, or "" when it is a template instantiation): `_Z5saxpyPKfPffi` -> ('saxpy', None),
    `_ZN2ns4stepEPf` -> ('step', None)."""
    at, name = (3, "") if mangled.startswith("_ZN") else (2, "")
    while at < len(mangled) and mangled[at].isdigit():
        digits = re.match(r"\d+", mangled[at:]).group()
        start = at + len(digits)
        name, at = mangled[start:start + int(digits)], start + int(digits)
        if not mangled.startswith("_ZN"):
            break
    return (name or mangled), ("" if mangled[at:at + 1] == "I" else None)


def ptx_entries(ptx: str) -> list[Entry]:
    """Every kernel entry of `ptx`, demangled, in the order the PTX defines them."""
    found = [(m.group(1), m.group(2).count(".param")) for m in _ENTRY.finditer(ptx)]
    names = demangle([name for name, _ in found])
    return [Entry(name, shown, n) for (name, n), shown in zip(found, names)]


def demangle(names: list[str]) -> list[str]:
    """Itanium-mangled names -> what c++filt prints: by the C++ runtime's `__cxa_demangle`
    in this process, else by c++filt (binutils); each name itself where neither demangles it
    (`extern "C"` kernels are not mangled)."""
    shown = [_in_process(name) for name in names]
    left = [name for name, done in zip(names, shown) if done is None]
    by_tool = dict(zip(left, _by_cxxfilt(left)))
    return [done if done is not None else by_tool[name] for name, done in zip(names, shown)]


@lru_cache(maxsize=1)
def _cxa_demangle() -> Callable[[bytes], str | None] | None:
    """The C++ runtime's demangler (libstdc++ on Linux, libc++abi on macOS) as a function of
    a mangled name -> its demangled name or None; None where no runtime can be loaded."""
    for library in CXX_RUNTIMES:
        try:
            found = ctypes.CDLL(library).__cxa_demangle
            free = ctypes.CDLL(None).free
            break
        except (OSError, AttributeError):
            continue
    else:
        return None
    found.restype = ctypes.c_void_p
    found.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                      ctypes.POINTER(ctypes.c_int)]
    free.argtypes = [ctypes.c_void_p]

    def call(mangled: bytes) -> str | None:
        status = ctypes.c_int(-1)
        out = found(mangled, None, None, ctypes.byref(status))
        if not out:
            return None
        try:
            return ctypes.string_at(out).decode("utf-8", "replace") if status.value == 0 \
                else None
        finally:
            free(out)
    return call


def _in_process(name: str) -> str | None:
    """`name` demangled by `__cxa_demangle`; itself when it is not mangled; None where it
    cannot be demangled here."""
    if not name.startswith("_Z"):
        return name
    call = _cxa_demangle()
    return None if call is None or "\x00" in name else call(name.encode("utf-8"))


def _by_cxxfilt(names: list[str]) -> list[str]:
    """Names -> what c++filt prints (each name itself when there is no c++filt or it
    fails)."""
    tool = shutil.which("c++filt")
    if not names or tool is None:
        return list(names)
    try:
        done = run_bounded([tool, *names], "kernel.function", "c++filt",
                           seconds=DEMANGLE_SECONDS)
    except PatternError:
        return list(names)
    shown = done.stdout.splitlines()
    return shown if done.returncode == 0 and len(shown) == len(names) else list(names)


def top_level_split(text: str) -> list[str]:
    """`16, Pair<int, 2>` -> ['16', ' Pair<int, 2>']: split at the commas outside <>, ()."""
    out, depth, word = [], 0, ""
    for ch in text:
        depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(word)
            word = ""
        else:
            word += ch
    out.append(word)
    return out


def split_name(spec: str) -> tuple[str, str | None]:
    """`void reduce<float, 256>(float *, int)` -> ('reduce', 'float, 256'); `k` -> ('k', None)."""
    name = re.sub(r"^\s*void\s+", "", spec).strip()
    if name.endswith(")") and "(" in name:
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i].strip()
                break
    found = re.fullmatch(r"(?:(?:[A-Za-z_]\w*|\(anonymous namespace\))::)*([A-Za-z_]\w*)\s*"
                         r"(?:<(.*)>)?", name, re.S)
    if found is None:
        raise PatternError("kernel.function", f"cannot read the function name {spec!r}")
    return found.group(1), found.group(2)


def _arguments(args: str) -> list[str]:
    """`16, float` -> ['16', 'float'] (split at top-level commas, spaces and integer
    suffixes dropped, so `256u` matches `256`)."""
    return [_INT_SUFFIX.sub("", "".join(w.split())) for w in top_level_split(args)]


def same_arguments(args: str, spec: str) -> bool:
    """Whether template arguments `args` (`16, float`) are those `spec` writes (`16u,float`)."""
    return _arguments(args) == _arguments(spec)


def pick_entry(entries: list[Entry], spec: str, hint: str = "") -> Entry:
    """The entry the pattern's `kernel.function` names, by its mangled name as the PTX
    spells it or its demangled one; PatternError at kernel.function when there is none
    (`hint` then follows the message) or more than one."""
    exact = [e for e in entries if e.mangled == spec]
    if exact:
        return exact[0]
    name, args = split_name(spec)
    same = [e for e in entries if e.split[0] == name]
    if not same:
        template = "" if args is not None else (
            "; a template kernel is compiled only where the file launches it: name the "
            f"instantiation, as Nsight prints it ('{name}<...>')")
        raise PatternError("kernel.function", f"the compiled code has no __global__ function "
                                              f"{name!r}" + suggest(name, [e.split[0] for e in
                                                                           entries])
                           + (hint or template))
    if args is not None:
        want = _arguments(args)
        exact = [e for e in same if e.split[1] is not None and _arguments(e.split[1]) == want]
        same = exact or [e for e in same if e.split[1] is not None
                         and _arguments(e.split[1])[:len(want)] == want]
    if len(same) == 1:
        return same[0]
    shown = [e.shown for e in same]
    if not shown:
        raise PatternError("kernel.function", f"the compiled code has no instantiation "
                                              f"{spec!r}")
    raise PatternError("kernel.function", f"the compiled code holds {len(shown)} "
                                          f"instantiations of {name!r} ({', '.join(shown)}); "
                                          f"name one, e.g. \"{shown[0]}\"")


def parameter_names(texts: list[str], entry: Entry) -> tuple[str, ...] | None:
    """The parameter names, in order, of the `__global__` definition of `entry` in the first
    of `texts` (the .cu file, then its includes) that defines one with as many parameters;
    None when none does. An unnamed parameter is named `_N` after its position."""
    from ...host.syntax import parser  # tree-sitter loads only for a .cu
    name = entry.split[0]
    for text in texts:
        for params in _kernel_definitions(parser().parse(text.encode("utf-8")).root_node, name):
            if len(params) == entry.nparams:
                return params
    return None


def _kernel_definitions(node, name: str):
    """The parameter-name tuples of every `__global__` definition of `name` under `node`."""
    from ...host.syntax import declared_name
    for fn in _descendants(node, "function_definition"):
        decl = fn.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        body = fn.child_by_field_name("body")
        if decl is None or body is None:
            continue
        head = fn.text[:body.start_byte - fn.start_byte].decode("utf-8", "replace")
        declared = decl.child_by_field_name("declarator")
        if "__global__" not in head or declared is None or \
                declared.text.decode("utf-8", "replace").split("::")[-1] != name:
            continue
        plist = decl.child_by_field_name("parameters")
        params = [p for p in plist.named_children if p.type.endswith("parameter_declaration")]
        yield tuple(declared_name(p.child_by_field_name("declarator")) or f"_{i}"
                    for i, p in enumerate(params))


def _descendants(node, kind: str):
    """Every node of type `kind` under `node` (not looking inside the ones found)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == kind:
            yield n
        else:
            stack.extend(reversed(n.named_children))
