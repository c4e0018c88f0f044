"""The readings: which FrontEnd interprets a kernel pattern. Part of the engine, above the
model (the model never imports the engine; it asks the hooks registered here).

Every kernel pattern is compiled and its PTX executed by the PTX engine
(sectorviz.engine.ptx.kernel.CompiledKernel); there is one machine and two readings of a
CUDA kernel:
- "compiled": the kernel as nvcc or NVRTC optimizes it (-O3), counted in SASS where ptxas
  and nvdisasm are found (engine.ptx.sass_reading), else in PTX: what the GPU runs;
- "source": the source as written: the kernel's debug compile (-G), which keeps every
  access the source spells where it spells it, read by the same engine.
The reading is the pattern's `kernel.engine` when it names one (report/export/compare's
`--engine` set that key), else SECTORVIZ_ENGINE, else DEFAULT_ENGINE. Where no compiler is
found, a CUDA kernel is refused in one line that says what to install. Triton, Numba and
PTX-file kernels are compiled by their own compilers; any other pattern -> the model's own
Kernel.
"""

from __future__ import annotations

import hashlib
import json
import os
import weakref
from typing import TYPE_CHECKING

from ..model.errors import PatternError
from ..model.frontend import FrontEnd, Reading, register_kernel_factory
from ..model.pattern import ENGINES, Pattern
from ..model.python_kernel import python_language
from .ptx.kernel import CompiledPtx

if TYPE_CHECKING:
    from .compiled.compiler import Toolchain
    from .ptx.sass_reading import SassKernel

ENGINE_VAR = "SECTORVIZ_ENGINE"
DEFAULT_ENGINE = "compiled"
DEFAULT_LEVEL = "sass"  # the compiled engine counts SASS where ptxas and nvdisasm are found


def asked_engine(pattern: Pattern) -> tuple[str, bool]:
    """(engine, whether the pattern itself asked for it) of a kernel pattern."""
    assert pattern.kernel is not None
    if "engine" in pattern.kernel:
        return pattern.kernel["engine"], True
    engine = os.environ.get(ENGINE_VAR) or DEFAULT_ENGINE
    if engine not in ENGINES:
        raise PatternError(ENGINE_VAR, f"expected one of {', '.join(ENGINES)}, got "
                                       f"{engine!r}")
    return engine, False


def kernel_reading(pattern: Pattern) -> Reading:
    """The reading of a kernel pattern and the compile it reads (a PTX file, a Triton or
    Numba kernel: the compiled reading of their own compiler); PatternError in one line
    where a CUDA kernel finds no compiler."""
    assert pattern.kernel is not None
    from .compiled.compiler import INSTALL, NO_COMPILER, find_compiler
    from .compiled.flags import DEFAULT_ARCH
    if "ptx" in pattern.kernel:
        from .compiled.ptxfile import ptx_compiler
        return Reading("compiled", ptx_compiler(pattern),
                       assembler=assembler(pattern, find_compiler(), "its .target"))
    language = python_language(pattern.kernel)
    if language is not None:  # Triton (its own cubin) or Numba (nvJitLink): pykernel.py
        from .compiled.numbakernel import numba_compiler
        from .compiled.tritonkernel import triton_compiler
        compiler = triton_compiler(pattern) if language == "triton" else numba_compiler(pattern)
        return Reading("compiled", compiler, assembler=python_assembler(pattern, language))
    engine, by_pattern = asked_engine(pattern)
    toolchain = find_compiler()
    if toolchain is None:
        raise PatternError("kernel.engine" if by_pattern else "kernel",
                           f"reading a CUDA kernel needs a compiler: {NO_COMPILER}; {INSTALL}")
    arch = pattern.kernel.get("arch", DEFAULT_ARCH)
    if engine == "source":
        return Reading("source", toolchain.compiling_for(arch, as_written=True))
    return Reading("compiled", toolchain.compiling_for(arch),
                   assembler=assembler(pattern, toolchain, arch))


def assembler(pattern: Pattern, toolchain: "Toolchain | None", arch: str) -> str:
    """`ptxas 13.0 for sm_90` where the compiled engine counts SASS (the pattern's
    `kernel.level`, else "sass", and an assembler and nvdisasm are found), else "" (PTX)."""
    assert pattern.kernel is not None
    from .compiled.sass import assembler_tools
    tools = assembler_tools(toolchain) if pattern.kernel.get("level", DEFAULT_LEVEL) == "sass" \
        else None
    return "" if tools is None else tools.words(arch)


def python_assembler(pattern: Pattern, language: str) -> str:
    """What is expected to make a Python kernel's SASS: Triton's bundled ptxas (its own
    cubin, `Triton's ptxas 13.4 for sm_90`) where the compiled engine counts SASS and it and
    nvdisasm are found, else nvJitLink as `assembler` gives it (counted_reading names the
    one that did, where the cubin could not be read)."""
    assert pattern.kernel is not None
    from .compiled.pykernel import PYTHON_ASSEMBLER, python_arch
    from .compiled.sass import find_nvdisasm
    from .compiled.tritonkernel import triton_assembler
    if language == "triton" and pattern.kernel.get("level", DEFAULT_LEVEL) == "sass" and \
            find_nvdisasm() is not None:
        own = triton_assembler(pattern)
        if own:
            return own
    return assembler(pattern, PYTHON_ASSEMBLER, python_arch(pattern))


def compiled_kernel(pattern: Pattern, reading: Reading) -> FrontEnd:
    """A kernel pattern compiled (nvcc, NVRTC, Triton, Numba; a CUDA kernel at -G for the
    as-written reading), or its PTX file -> the PTX engine's kernel of it, counted in SASS
    (model.ptx.sass_reading) where the reading says so and ptxas made it and it holds no wmma
    (kernel.holds_wmma), else in PTX."""
    from .ptx.kernel import CompiledKernel, holds_wmma
    from .ptx.sass_reading import SassKernel
    compiled = compiled_ptx(pattern, as_written=reading.engine == "source")
    key = _level_free(pattern, reading, compiled)
    if reading.level == "sass" and compiled.sass is not None and not holds_wmma(compiled.ptx):
        kernel = _SASS_KERNELS[key] = SassKernel(pattern, compiled, compiled.sass)
        return kernel
    counted_in_sass = _SASS_KERNELS.get(key)
    if counted_in_sass is not None:  # the PTX level of a kernel already read in SASS
        return counted_in_sass.ptx_level()
    return CompiledKernel(pattern, compiled)


def _level_free(pattern: Pattern, reading: Reading, compiled: CompiledPtx) -> str:
    """What a kernel read from `compiled` depends on but for its level (SASS or PTX): the
    pattern's value less `kernel.level`, its folders, the engine and the compiled PTX."""
    doc = pattern.to_dict()
    doc["kernel"] = {k: v for k, v in doc["kernel"].items() if k != "level"}
    return json.dumps([doc, pattern.base_dir, list(pattern.include_dirs), reading.engine,
                       hashlib.sha256(compiled.ptx.encode()).hexdigest(), compiled.entry],
                      sort_keys=True, default=str)


# the kernels read in SASS while something holds them, by _level_free
_SASS_KERNELS: "weakref.WeakValueDictionary[str, SassKernel]" = weakref.WeakValueDictionary()


def compiled_ptx(pattern: Pattern, as_written: bool = False) -> CompiledPtx:
    """What the PTX engine runs for a kernel pattern, from the compiler its keys name (a
    .cu at -G when `as_written`)."""
    assert pattern.kernel is not None
    if "ptx" in pattern.kernel:
        from .compiled.ptxfile import ptx_kernel
        return ptx_kernel(pattern)
    if python_language(pattern.kernel) == "triton":
        from .compiled.tritonkernel import triton_kernel
        return triton_kernel(pattern)
    if python_language(pattern.kernel) == "numba":
        from .compiled.numbakernel import numba_kernel
        return numba_kernel(pattern)
    from .compiled.compile import compile_kernel
    return compile_kernel(pattern, as_written=as_written)


register_kernel_factory(compiled_kernel, kernel_reading)
