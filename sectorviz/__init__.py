"""sectorviz: lane-to-sector accounting for CUDA warp memory accesses."""

__version__ = "0.1.0"

from .engine import readings  # noqa: E402,F401  (registers the compiled kernels with the model)
