"""The child process that compiles a Python kernel to PTX with Triton or Numba (pykernel.py
runs it bounded, in a private folder, with Python's -I).

Standard input: JSON {"compiler": "triton" | "numba", "module": the generated module's text
(pysource.py: only imports of the compilers' modules, literal constants and jit functions),
"file": its file name, "function", "dotted": [[line, "tl.load"], ...] (each checked to
reach only KERNEL_PACKAGES), and the compiler's request ("triton": signature, constexprs,
divisible, arch, num_warps, num_stages; "numba": argument types, cc). Standard output:
JSON {"ok", "log" (the first error, one line), "line" (its line in the file, or 0), "ptx",
"version", "shared": the bytes of dynamic shared memory the launch gives (Triton's; null
for Numba), "cubin": Triton's own cubin of that PTX (made by its bundled ptxas, with
`-lineinfo`), base64, and "ptxas": that ptxas's release (`13.4`); null for Numba}.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import re
import sys
import types
from typing import Any

# where what a kernel names may come from: Triton's language and its jit, the `triton`
# package's own top level (triton.cdiv), Numba, math (Triton calls any other Python function
# it is handed at compile time: triton.runtime, triton.testing, os, ... are refused)
KERNEL_PACKAGES = ("triton.language", "triton.runtime.jit", "numba", "math")
TRITON_TOP = "triton"


def _ours(name: str | None) -> bool:
    """Whether a module name lies in KERNEL_PACKAGES (or is `triton` itself)."""
    text = str(name or "")
    return text == TRITON_TOP or any(text == p or text.startswith(p + ".")
                                     for p in KERNEL_PACKAGES)


def _owner(value: Any) -> str | None:
    """The module a value comes from: a module's own name, a function's or class's
    module, else its type's."""
    if isinstance(value, types.ModuleType):
        return value.__name__
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                          type)):
        return getattr(value, "__module__", None)
    return type(value).__module__


def _unsafe_reach(module: types.ModuleType, chain: str) -> str | None:
    """Why a dotted name (its first part a name of the generated module) reaches something
    from outside KERNEL_PACKAGES, else None."""
    value: Any = module
    for part in chain.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None  # unknown: the compiler says so
        if type(value).__module__ == "builtins" and not callable(value) and \
                not isinstance(value, types.ModuleType):
            continue  # data: a literal constant, a stub's property (cuda.blockIdx.x)
        if not _ours(_owner(value)):
            return f"{chain} reaches {_owner(value)}, not a module a kernel may use " \
                   f"({', '.join(KERNEL_PACKAGES)})"
    return None


def _loaded(request: dict) -> types.ModuleType:
    """The generated module, written to this (private) folder and imported."""
    path = os.path.join(os.getcwd(), request["file"])
    with open(path, "w", encoding="utf-8") as out:
        out.write(request["module"])
    spec = importlib.util.spec_from_file_location(request["file"][:-3], path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _triton(fn: Any, req: dict) -> dict[str, Any]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import get_ptxas
    from triton.compiler import ASTSource
    attrs = {(int(i),): [["tt.divisibility", 16]] for i in req["divisible"]}
    source = ASTSource(fn, req["signature"], constexprs=req["constexprs"], attrs=attrs)
    options = {"num_warps": req["num_warps"], "num_stages": req["num_stages"]}
    compiled = triton.compile(source, target=GPUTarget("cuda", req["arch"], 32),
                              options=options)
    return {"ptx": compiled.asm["ptx"], "version": triton.__version__,
            "shared": int(compiled.metadata.shared),
            "cubin": base64.b64encode(compiled.asm["cubin"]).decode("ascii"),
            "ptxas": get_ptxas(req["arch"]).version}


def _numba_type(arg: list) -> Any:
    from numba.core import types as nt
    kind, dtype = arg[0], getattr(nt, arg[1])
    return nt.Array(dtype, arg[2], arg[3]) if kind == "array" else dtype


def _numba(fn: Any, req: dict) -> dict[str, Any]:
    from importlib.metadata import version

    from numba import cuda
    signature = tuple(_numba_type(arg) for arg in req["args"])
    ptx, _ = cuda.compile_ptx(getattr(fn, "py_func", fn), signature, cc=tuple(req["cc"]),
                              lineinfo=True)
    return {"ptx": ptx, "version": version("numba-cuda"), "shared": None, "cubin": None,
            "ptxas": None}


def _first_line(err: BaseException, request: dict) -> tuple[str, int]:
    """An error -> (its message in one line, its line in the kernel's file or 0). Triton's
    CompilationError counts lines from its function's `def` and quotes the source before
    a `^` and the cause: the line is made the file's, the cause kept."""
    line = 0
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.endswith(request["file"]):
            line = tb.tb_lineno
        tb = tb.tb_next
    text = " ".join(str(err).split())
    node, src = getattr(err, "node", None), getattr(err, "src", None)
    if node is not None and isinstance(src, str):  # Triton's CompilationError
        text = text.rsplit("^", 1)[-1].strip() or text
        found = re.match(r"\s*def\s+(\w+)", src)
        lines = request["module"].splitlines()
        starts = [n for n, at in enumerate(lines, 1)
                  if found and re.match(rf"\s*def\s+{found.group(1)}\b", at)]
        line = starts[0] + node.lineno - 1 if starts else line
    loc = getattr(err, "loc", None)  # Numba's errors, where they say
    line = getattr(loc, "line", None) or line
    return f"{type(err).__name__}: {text}"[:400], int(line or 0)


def main() -> None:
    request = json.loads(sys.stdin.read())
    result: dict[str, Any] = {"ok": False, "log": "", "line": 0, "ptx": "", "version": ""}
    try:
        module = _loaded(request)
        for line, chain in request["dotted"]:
            why = _unsafe_reach(module, chain)
            if why is not None:
                result["log"], result["line"] = why, line
                break
        else:
            fn = getattr(module, request["function"])
            compile_ = _triton if request["compiler"] == "triton" else _numba
            result.update(compile_(fn, request), ok=True)
    except Exception as err:  # the compiler's error, said in one line
        result["log"], result["line"] = _first_line(err, request)
    sys.stdout.write(json.dumps(result))


if __name__ == "__main__":
    main()
