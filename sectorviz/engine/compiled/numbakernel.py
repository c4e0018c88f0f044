"""A Numba CUDA kernel pattern -> the PTX `numba.cuda.compile_ptx` emits for it.

`"kernel": {"numba": "add.py", "function": "add"}`: each argument is, by name, a pattern
array (a C-contiguous array of its dtype, 1-D, or 2-D where it has a shape; Fortran order
for a col-major layout) or a pattern param (typed as Numba types a Python value: int64,
float64). Numba passes an array of n dimensions as 5 + 2n parameters (meminfo, parent,
nitems, itemsize, data, shape..., strides...); the data pointer is the array, the others get
the values the array's length, shape and layout give (strides in bytes).
"""

from __future__ import annotations

from dataclasses import replace

from ...model.errors import PatternError
from ...model.kernel import Launch, ResolvedArray
from ...model.pattern import Pattern
from ..ptx.kernel import CompiledPtx
from .pykernel import compiled_python, compiler_version, python_arch, read_python_source

NUMBA_TYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
               "uint16", "uint32", "uint64")


def numba_compiler(pattern: Pattern) -> str:
    """`Numba CUDA 0.30.4 for sm_90`; PatternError saying what to install."""
    return f"{compiler_version('numba')} for {python_arch(pattern)}"


def array_parameters(name: str, arr: ResolvedArray) -> list[tuple[str, int | None]]:
    """An array's PTX parameters as Numba passes them -> (name, value; None: the data
    pointer, which is the array)."""
    size = arr.spec.elem_bytes
    if arr.rows is None or arr.cols is None or arr.ld is None:
        shape, strides = [arr.length], [size]
    else:
        shape = [arr.rows, arr.cols]
        strides = [arr.ld * size, size] if arr.spec.layout == "row-major" else \
            [size, arr.ld * size]
    return [(f"{name}.meminfo", 0), (f"{name}.parent", 0), (f"{name}.nitems", arr.length),
            (f"{name}.itemsize", size), (name, None),
            *((f"{name}.shape[{k}]", n) for k, n in enumerate(shape)),
            *((f"{name}.strides[{k}]", s) for k, s in enumerate(strides))]


def numba_arguments(pattern: Pattern, params: tuple[str, ...]
                    ) -> tuple[list[list], list[tuple[str, int | None]]]:
    """The kernel's arguments -> (Numba argument types, the PTX parameters with values)."""
    arrays = Launch(pattern).arrays
    values = dict(pattern.params)
    types: list[list] = []
    ptx: list[tuple[str, int | None]] = []
    for name in params:
        if name in arrays and arrays[name].spec.space == "global":
            arr = arrays[name]
            if arr.spec.dtype not in NUMBA_TYPES:
                raise PatternError(f"arrays.{name}.dtype", f"a Numba array needs one of "
                                                           f"{', '.join(NUMBA_TYPES)}")
            order = "F" if arr.rows is not None and arr.spec.layout == "col-major" else "C"
            types.append(["array", arr.spec.dtype, 1 if arr.rows is None else 2, order])
            ptx += array_parameters(name, arr)
        elif name in values:
            types.append(["scalar", "float64" if isinstance(values[name], float) else "int64"])
            ptx.append((name, None))
        else:
            raise PatternError("kernel.function", f"the kernel's argument {name!r} has no "
                                                  "value: add it to params or arrays")
    return types, ptx


def numba_kernel(pattern: Pattern) -> CompiledPtx:
    """A Numba pattern -> the PTX Numba emits for it, with its parameters' names and the
    values of those the pattern does not name."""
    assert pattern.kernel is not None
    compiler = numba_compiler(pattern)
    source = read_python_source(pattern)
    types, ptx = numba_arguments(pattern, source.kernel.params)
    digits = python_arch(pattern)[3:].rstrip("af")
    request = {"function": pattern.kernel["function"], "args": types,
               "cc": [int(digits[:-1]), int(digits[-1])]}
    compiled = compiled_python(source, request, compiler, tuple(n for n, _ in ptx),
                               python_arch(pattern))
    return replace(compiled, param_values=tuple((n, v) for n, v in ptx if v is not None))
