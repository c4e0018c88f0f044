"""sectorviz: lane-to-sector accounting for CUDA warp memory accesses."""

__version__ = "0.1.0"
