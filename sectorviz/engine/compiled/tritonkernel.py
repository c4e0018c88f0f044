"""A Triton kernel pattern -> what Triton's launcher would compile for its values, as PTX.

`"kernel": {"triton": "add.py", "function": "add_kernel", "constexprs": {"BLOCK": 1024},
"num_warps": 4, "num_stages": 3}` (a constexpr may be an integer expression of the params,
`"BLOCK": "block"`, so a sweep can vary it): each argument of the kernel is, by name, a constexpr, a
pattern array (a pointer `*fp32`, ... from its dtype) or a pattern param (an integer `i32`
while it fits, else `i64`; a float `fp32`). The specialisation is the launcher's rule on the
values given: an integer equal to 1 becomes the constexpr 1, and a pointer (its array's
address) or integer divisible by 16 gets `tt.divisibility` 16; `"divisibility": {"n": false}`
turns both off for an argument (Triton's do_not_specialize), `true` asserts divisibility.
Triton appends two scratch pointers (global and profile), passed as null. Triton's own
cubin of the PTX, made by its bundled ptxas, is the SASS that is read (pykernel.py).
"""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...model.errors import PatternError
from ...model.kernel import Launch, constant
from ...model.pattern import Pattern, expression
from ...model.python_kernel import DEFAULT_NUM_STAGES, num_warps
from ..ptx.kernel import CompiledPtx
from .compiler import tool_release
from .pykernel import (
    compiled_python,
    compiler_version,
    own_ptxas_words,
    python_arch,
    read_python_source,
)
from .sass import SASS_SECONDS

TRITON_TYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64",
                "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
                "uint16": "u16", "uint32": "u32", "uint64": "u64"}
SCRATCH = ("global_scratch", "profile_scratch")  # the pointers Triton appends, passed null
DIVISOR = 16  # what `tt.divisibility` asserts
PTXAS_FROM_90 = "ptxas-blackwell"  # the ptxas Triton runs from sm_90, `ptxas` below
# (backends/nvidia/compiler.py get_ptxas), in its package's backends/nvidia/bin


def triton_compiler(pattern: Pattern) -> str:
    """`Triton 3.9.0 for sm_90, num_warps 4`; PatternError saying what to install."""
    assert pattern.kernel is not None
    return (f"{compiler_version('triton')} for {python_arch(pattern)}, num_warps "
            f"{num_warps(pattern.kernel)}")


def capability(pattern: Pattern) -> int:
    """The pattern's architecture as Triton's target capability: sm_90a -> 90."""
    return int(python_arch(pattern)[3:].rstrip("af"))


def triton_assembler(pattern: Pattern) -> str:
    """`Triton's ptxas 13.4 for sm_90`: the ptxas Triton's compile runs for the pattern,
    its release read from the bundled binary; "" where it is not found."""
    release = ptxas_release(capability(pattern))
    return "" if release is None else own_ptxas_words("triton", release, python_arch(pattern))


@lru_cache(maxsize=4)
def ptxas_release(capability: int) -> str | None:
    """The release (`13.4`) `ptxas --version` gives of the ptxas Triton runs for
    `capability` (PTXAS_FROM_90), run bounded once; None where it is not found or says
    none."""
    spec = importlib.util.find_spec("triton")
    if spec is None or spec.origin is None:
        return None
    name = PTXAS_FROM_90 if capability >= 90 else "ptxas"
    found = shutil.which(name, path=str(Path(spec.origin).parent / "backends" / "nvidia" /
                                        "bin"))
    return None if found is None else tool_release(found, "kernel.triton", SASS_SECONDS)


def integer_type(value: int) -> str:
    """Triton's launcher type of a Python int: i32 while it fits, u64 from 2**63, else i64."""
    if -2**31 <= value < 2**31:
        return "i32"
    return "u64" if value >= 2**63 else "i64"


def triton_arguments(pattern: Pattern, params: tuple[str, ...]
                     ) -> tuple[dict[str, str], dict[str, Any], list[int]]:
    """The kernel's arguments -> (signature, constexprs, indices divisible by 16) as
    Triton's launcher would make them from the pattern's values."""
    assert pattern.kernel is not None
    constexprs = {name: constant(expression(value, f"kernel.constexprs.{name}"),
                                 pattern.integer_params) if isinstance(value, str) else value
                  for name, value in pattern.kernel.get("constexprs", {}).items()}
    told: dict[str, bool] = pattern.kernel.get("divisibility", {})
    arrays = Launch(pattern).arrays
    values = dict(pattern.params)
    signature: dict[str, str] = {}
    divisible = []
    for i, name in enumerate(params):
        if name in constexprs:
            signature[name], divides = "constexpr", False
        elif name in arrays and arrays[name].spec.space == "global":
            signature[name] = "*" + _pointee(pattern, name)
            divides = told.get(name, arrays[name].address0 % DIVISOR == 0)
        elif name in values and isinstance(values[name], float):
            signature[name], divides = "fp32", False
        elif name in values:
            value = int(values[name])
            if value == 1 and told.get(name, True):
                signature[name], constexprs[name] = "constexpr", 1
                continue
            signature[name] = integer_type(value)
            divides = told.get(name, value % DIVISOR == 0)
        else:
            raise PatternError("kernel.function", f"the kernel's argument {name!r} has no "
                                                  "value: add it to params, arrays or "
                                                  "kernel.constexprs")
        if divides:
            divisible.append(i)
    return signature, constexprs, divisible


def _pointee(pattern: Pattern, name: str) -> str:
    dtype = pattern.array(name).dtype
    if dtype not in TRITON_TYPES:
        raise PatternError(f"arrays.{name}.dtype", f"a Triton pointer needs one of "
                                                   f"{', '.join(TRITON_TYPES)}")
    return TRITON_TYPES[dtype]


def triton_kernel(pattern: Pattern) -> CompiledPtx:
    """A Triton pattern -> the PTX Triton emits for it, with its parameters' names."""
    assert pattern.kernel is not None
    compiler = triton_compiler(pattern)
    source = read_python_source(pattern)
    signature, constexprs, divisible = triton_arguments(pattern, source.kernel.params)
    request = {"function": pattern.kernel["function"], "signature": signature,
               "constexprs": constexprs, "divisible": divisible,
               "arch": capability(pattern),
               "num_warps": num_warps(pattern.kernel),
               "num_stages": int(pattern.kernel.get("num_stages", DEFAULT_NUM_STAGES))}
    names = tuple(n for n in source.kernel.params if signature[n] != "constexpr") + SCRATCH
    return replace(compiled_python(source, request, compiler, names, python_arch(pattern)),
                   param_values=tuple((n, 0) for n in SCRATCH))
