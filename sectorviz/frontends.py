"""Front ends: which Kernel interprets a pattern. Sits above the model and the CUDA front end
(the model never imports a front end; it asks the hook registered here).

A pattern with a `kernel` key -> sectorviz.cuda.kernel.CudaKernel (tree-sitter is imported on
the first kernel, not at start-up); any other pattern -> the model's own Kernel.
"""

from __future__ import annotations

from .model.errors import PatternError
from .model.frontend import FrontEnd, register_kernel_factory
from .model.pattern import Pattern


def cuda_kernel(pattern: Pattern) -> FrontEnd:
    """A kernel pattern -> its CudaKernel; PatternError if the CUDA front end cannot load."""
    try:
        from .cuda.kernel import CudaKernel
    except ImportError as err:
        raise PatternError("kernel", f"the CUDA front end is not installed ({err.name}); "
                                     "install sectorviz[cuda]") from None
    return CudaKernel(pattern)


register_kernel_factory(cuda_kernel)
