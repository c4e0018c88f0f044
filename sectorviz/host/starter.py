"""A bare .cu -> a starting pattern for each launched kernel (each instantiation of a template
kernel: `"function": "offset<float>"`), saved beside the .cu by the app (File > Open, a drop,
the command line on a .cu) and `sectorviz new`, or reported straight away by `sectorviz
report KERNEL.cu`.

The pattern takes the kernel's own parameter names: each pointer parameter an array, each
scalar parameter a param. Where the host code launches the kernel (`k<<<grid, block>>>(...)`)
the launch, the integer constants it uses and each array's length (its `cudaMalloc` bytes over
the element size) are read from there (constants.py, launches.py); a value that cannot be known
keeps the default below, and the pattern's notes say which and why. Without a launch, or when
that pattern does not check, a 1-D launch of THREADS threads a block covering ELEMENTS
threads, arrays of ELEMENTS elements (a scalar named like an element count, n, N, size, count,
length, is that count). The user adjusts them in the Form tab.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..atomic import write_atomic
from ..model import Pattern, PatternError, pattern_from_dict, warp_detail
from ..model.errors import printable
from .kernels import KernelSignature, parsed, signatures
from .syntax import text

ELEMENTS = 1 << 20  # elements of each array and threads launched
SIDE = 1 << 10  # each of several sizes the program computes when it runs (ELEMENTS = SIDE^2)
THREADS = 256  # threads per block
COUNT_NAMES = ("n", "N", "size", "count", "length", "len", "num_elements", "numElements")
RESERVED = frozenset({"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "min", "max",
                      "abs", "i"})
NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Starter:
    """One launched kernel of a .cu: its name as the pattern gives it, the pattern its host
    launch makes (None without one), the default pattern, and what was not known."""

    function: str
    host: dict[str, Any] | None
    fallback: dict[str, Any]
    unknown: tuple[str, ...] = ()

    def document(self, cu: Path, include_dirs: tuple[str, ...] = ()) -> dict[str, Any]:
        """The host launch's pattern where it checks, else the default (its notes say why)."""
        if self.host is None:
            return self.fallback
        try:
            pattern = pattern_from_dict(self.host, cu.parent, include_dirs)
            warp_detail(pattern, 0)
            return self.host
        except PatternError as err:
            doc = dict(self.fallback)
            doc["notes"] += f"; the host launch's pattern does not check ({err})"
            return doc

    def guessed(self, doc: dict[str, Any]) -> str:
        """One line: the launch, array lengths and params `doc` takes from the host code."""
        launch = doc["launch"]
        arrays = ", ".join(f"{k}[{v['length']}]" for k, v in doc["arrays"].items())
        params = ", ".join(f"{k}={v}" for k, v in doc["params"].items())
        said = "the host launch" if doc is self.host else "no host launch read: a 1-D default"
        line = (f"{self.function}: {said}: grid ({', '.join(launch['grid'])}), block "
                f"({', '.join(launch['block'])}), {arrays or 'no arrays'}; {params}")
        return line + (f"; not known: {'; '.join(self.unknown)}" if self.unknown else "")


def starting_patterns(cu: Path, include_dirs: tuple[str, ...] = (),
                      kernel: str | None = None) -> list[Starter]:
    """The starters of the .cu `cu` in file order (those named `kernel`, as a pattern names
    it or by the kernel's plain name, when given); PatternError naming the file for one
    that cannot be read or parsed."""
    unit = parsed(cu, include_dirs)
    found = [s for sig in signatures(unit) for s in _starters(cu, unit, sig)]
    if kernel is None:
        return found
    return [s for s in found if kernel in (s.function, s.function.split("<")[0])]


def _starters(cu: Path, unit: Any, kernel: KernelSignature) -> list[Starter]:
    from .launches import instances
    launched = instances(unit, kernel)
    if not launched:
        why = ("no launch names its template arguments" if kernel.template
               else "the file does not launch it")
        return [Starter(kernel.name, None, starter_pattern(cu, kernel), (why,))]
    return [_host_starter(cu, unit, kernel, i) for i in launched]


def _host_starter(cu: Path, unit: Any, kernel: KernelSignature, instance: Any) -> Starter:
    from .constants import HostScope, Unknown
    from .launches import array_length, given_by
    fallback = starter_pattern(cu, kernel, instance.function)
    if instance.launch is None:
        return Starter(instance.function, None, fallback, ("the file does not launch it",))
    call = instance.call()
    args = [a for a in call.child_by_field_name("arguments").named_children
            if a.type != "comment"]
    types = dict(instance.types)
    given = given_by(unit, instance)
    arrays = frozenset(name for name, pointer in kernel.params if pointer)
    scalars, stand_ins, unknown = _scalars(unit, instance, kernel, args, given,
                                           fallback["params"])
    scope = HostScope(unit, instance.launch.host, call, types, RESERVED | arrays, given,
                      stand_ins)
    for name, value in scalars.items():
        scope.claim(name, value)
    doc = dict(fallback)
    config = instance.launch.config
    try:
        doc["launch"] = {part: [t.text for t in scope.dims(node)]
                         for part, node in zip(("grid", "block"), config)}
    except Unknown as why:
        unknown.append(f"launch: {why}; the 1-D default stands in")
    if len(config) > 2:  # <<<grid, block, dynamic shared bytes>>>
        try:
            doc["kernel"] = {**doc["kernel"],
                             "dynamic_shared_bytes": scope.term(config[2]).value}
        except Unknown as why:
            unknown.append(f"dynamic shared memory: {why}")
    lengths = {}
    for (name, pointer), kind, arg in zip(kernel.params, kernel.types, args):
        if pointer:
            try:
                lengths[name] = {"length": array_length(scope, arg, kind).text}
            except Unknown as why:
                stood = fallback["arrays"][name]["length"]  # the 1-D default's count
                lengths[name] = {"length": stood if scalars.get(stood, ELEMENTS) == ELEMENTS
                                 else str(ELEMENTS)}
                unknown.append(f"{name}: {why}; {lengths[name]['length']} elements stand in")
    doc["arrays"] = lengths
    used = set(NAME.findall(" ".join(doc["launch"]["grid"] + doc["launch"]["block"] + [
        a["length"] for a in lengths.values()])))
    doc["params"] = {**{k: v for k, v in fallback["params"].items() if k in used},
                     **{k: v for k, v in scope.params.items() if k in used}, **scalars}
    line = int(call.start_point[0]) + 1
    doc["notes"] = (f"made from {cu.name}: the launch at line {line}, its constants and "
                    "cudaMalloc sizes" + (f"; not known: {'; '.join(unknown)}" if unknown
                                          else ""))
    return Starter(instance.function, doc, fallback, tuple(unknown))


def _scalars(unit: Any, instance: Any, kernel: KernelSignature, args: list[Any],
             given: dict[str, Any], defaults: dict[str, int]
             ) -> tuple[dict[str, int], dict[str, int], list[str]]:
    """(each scalar parameter's value at the launch, a stand-in for each host name passed
    as one that the program computes when it runs, what was not known and what stands in).
    One such size stands in as ELEMENTS; two or more (`M`, `N`, `K` of `a.size(0)`, ...) as
    SIDE each, a SIDE x SIDE matrix of ELEMENTS elements; any other unknown value keeps the
    1-D default's."""
    from .constants import HostScope, RunTime, Unknown
    scalars: dict[str, int] = {}
    runtime: dict[str, tuple[str, str]] = {}  # parameter -> (host name, why)
    unknown: list[str] = []
    for (name, pointer), arg in zip(kernel.params, args):
        if pointer:
            continue
        try:
            scalars[name] = HostScope(unit, instance.launch.host, instance.call(),
                                      dict(instance.types), given=given).term(arg).value
        except Unknown as why:
            if isinstance(why, RunTime) and arg.type == "identifier":
                runtime[name] = (text(arg), str(why))
            else:
                scalars[name] = defaults[name]
                unknown.append(f"{name}: {why}, {scalars[name]} stands in")
    size = ELEMENTS if len(runtime) == 1 else SIDE
    for name, (_, said) in runtime.items():
        scalars[name] = size
        unknown.append(f"{name}: {said}, {size} stands in")
    return scalars, {host: size for host, _ in runtime.values()}, unknown


def starter_pattern(cu: Path, kernel: KernelSignature,
                    function: str | None = None) -> dict[str, Any]:
    """The default pattern document (a dict, as the file holds it) for `kernel` of the .cu
    `cu`, launched as `function` (default: the kernel's name)."""
    scalars = [name for name, pointer in kernel.params if not pointer]
    count = next((name for name in scalars if name in COUNT_NAMES), "elements")
    params = {name: ELEMENTS if name == count else 1 for name in scalars}
    params.setdefault(count, ELEMENTS)
    params.setdefault("threads", THREADS)
    return {
        "format": "sectorviz.pattern/1",
        "name": f"{function or kernel.name} ({cu.name})",
        "notes": f"made from {cu.name}: a 1-D launch of {count} threads and arrays of "
                 f"{count} elements; adjust them in the Form tab",
        "params": params,
        "launch": {"grid": [f"({count} + threads - 1) / threads"], "block": ["threads"]},
        "arrays": {name: {"length": count} for name, pointer in kernel.params if pointer},
        "kernel": {"source": cu.name, "function": function or kernel.name},
    }


def pattern_path(cu: Path, function: str) -> Path:
    """Where the starting pattern of `function` (`offset<float>` too) is saved: beside the
    .cu, named after it and the kernel."""
    name = "-".join(re.findall(r"\w+", function))
    return cu.with_name(f"{cu.stem}-{name}.sectorviz.json")


def pattern_text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2) + "\n"


def write_starter(cu: Path, kernel: KernelSignature, include_dirs: tuple[str, ...] = ()) -> Path:
    """Write the starting pattern of `kernel` (its first launched instantiation) beside the
    .cu (never over an existing file: that one is opened instead) and return its path."""
    starter = starting_patterns(cu, include_dirs, kernel.name)[0]
    path = pattern_path(cu, starter.function)
    if not path.exists():
        write_atomic(path, pattern_text(starter.document(cu, include_dirs)))
    return path


def cu_pattern(cu: Path, include_dirs: tuple[str, ...], kernel: str | None
               ) -> tuple[Pattern, str, str]:
    """A .cu's kernel (`kernel`: its name or an instantiation; None: its only one) -> (the
    starting pattern, one line saying what it took from the host code, and for a launch or
    lengths that were guessed the hint an error ends with: what to change, where);
    PatternError listing the kernels where `kernel` names none or several."""
    (starter,) = chosen(cu, include_dirs, kernel, one=True)
    doc = starter.document(cu, include_dirs)
    said = printable(f"{cu}: {starter.guessed(doc)}")
    hint = ""
    if doc is not starter.host or starter.unknown:
        flag = f" --kernel '{starter.function}'" if "<" in starter.function else \
            f" --kernel {starter.function}"
        hint = (f" (the launch or array lengths were guessed, as the line above says: "
                f"`sectorviz new {cu.name}{flag}` writes them to a pattern file; set "
                "launch.grid, launch.block or the arrays' length there)")
    return pattern_from_dict(doc, cu.parent, include_dirs), said, hint


def chosen(cu: Path, include_dirs: tuple[str, ...], kernel: str | None,
           one: bool) -> list[Starter]:
    """The starters `kernel` names (all without it); PatternError for none, or, with `one`,
    for several: one line listing them, to pick with --kernel."""
    found = starting_patterns(cu, include_dirs, kernel)
    if not found and kernel is not None:
        names = ", ".join(s.function for s in starting_patterns(cu, include_dirs))
        raise PatternError("--kernel", f"no kernel {kernel!r}; the file has: {names or 'none'}")
    if not found:
        raise PatternError("", "no __global__ function to make a pattern for")
    if one and len(found) > 1:
        raise PatternError("", f"{len(found)} kernels ({', '.join(s.function for s in found)}); "
                               "name one with --kernel NAME")
    return found
