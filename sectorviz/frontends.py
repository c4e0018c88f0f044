"""Front ends: which FrontEnd interprets a pattern. Sits above the model and the CUDA front
ends (the model never imports a front end; it asks the hooks registered here).

A pattern with a `kernel` key is read by one of two engines:
- "compiled": the kernel compiled by nvcc or NVRTC (sectorviz.compiled), its PTX executed by the
  model's PTX engine (sectorviz.model.ptx.kernel.CompiledKernel): what the GPU runs;
- "source": sectorviz.cuda.kernel.CudaKernel, the source as written (tree-sitter is imported
  on the first kernel, not at start-up).
The engine is the pattern's `kernel.engine` when it names one (report/export/compare's
`--engine` set that key), else SECTORVIZ_ENGINE, else DEFAULT_ENGINE. The compiled engine
asked by SECTORVIZ_ENGINE or the default falls back to the source engine, saying so, when no
compiler is found; asked by the pattern, it is an error. Any other pattern -> the model's own
Kernel.
"""

from __future__ import annotations

import os

from .model.errors import PatternError
from .model.frontend import FrontEnd, Reading, register_kernel_factory
from .model.pattern import ENGINES, Pattern
from .model.ptx.kernel import CompiledPtx
from .model.python_kernel import python_language

ENGINE_VAR = "SECTORVIZ_ENGINE"
DEFAULT_ENGINE = "compiled"  # falls back to "source", saying so, where no compiler is found


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
    """The engine that reads a kernel pattern, and the compiler or why not (a PTX file:
    the compiled engine, with no compiler)."""
    assert pattern.kernel is not None
    if "ptx" in pattern.kernel:
        from .compiled.ptxfile import ptx_compiler
        return Reading("compiled", ptx_compiler(pattern))
    if python_language(pattern.kernel) == "triton":
        from .compiled.tritonkernel import triton_compiler
        return Reading("compiled", triton_compiler(pattern))
    if python_language(pattern.kernel) == "numba":
        from .compiled.numbakernel import numba_compiler
        return Reading("compiled", numba_compiler(pattern))
    engine, by_pattern = asked_engine(pattern)
    if engine == "source":
        return Reading("source")
    from .compiled.compiler import INSTALL, NO_COMPILER, find_compiler
    from .compiled.flags import DEFAULT_ARCH
    toolchain = find_compiler()
    if toolchain is None:
        if by_pattern:
            raise PatternError("kernel.engine", f"the compiled engine needs a compiler: "
                                                f"{NO_COMPILER}; {INSTALL}, or use \"source\"")
        return Reading("source", None, NO_COMPILER)
    return Reading("compiled", toolchain.compiling_for(pattern.kernel.get("arch",
                                                                          DEFAULT_ARCH)))


def cuda_kernel(pattern: Pattern, reading: Reading) -> FrontEnd:
    """A kernel pattern -> its FrontEnd for the engine `reading` names; PatternError if that
    front end cannot load."""
    if reading.engine == "compiled":
        return compiled_kernel(pattern)
    try:
        from .cuda.kernel import CudaKernel
    except ImportError as err:
        raise PatternError("kernel", f"the CUDA front end is not installed ({err.name}); "
                                     "install sectorviz[cuda]") from None
    return CudaKernel(pattern)


def compiled_kernel(pattern: Pattern) -> FrontEnd:
    """A kernel pattern compiled (nvcc, NVRTC, Triton, Numba), or its PTX file -> the PTX
    engine's kernel of it."""
    from .model.ptx.kernel import CompiledKernel
    return CompiledKernel(pattern, compiled_ptx(pattern))


def compiled_ptx(pattern: Pattern) -> CompiledPtx:
    """What the PTX engine runs for a kernel pattern, from the compiler its keys name."""
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
    return compile_kernel(pattern)


register_kernel_factory(cuda_kernel, kernel_reading)
