"""sectorviz: lane-to-sector accounting for CUDA warp memory accesses."""

__version__ = "0.1.0"

from . import frontends  # noqa: E402,F401  (registers the CUDA front end with the model)
