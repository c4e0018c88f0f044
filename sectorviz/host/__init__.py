"""Reading a bare .cu's host code into starting patterns, Qt-free (the app opens a .cu with
it; `sectorviz new` and `sectorviz report KERNEL.cu` use it without a display).

kernels.py: the file parsed and its `__global__` functions; constants.py: the host code's
integer constants, `#define`s and expressions as pattern expressions (nothing is run);
launches.py: each `<<<...>>>` launch of a kernel, one per launched instantiation;
starter.py: the starting pattern documents and where they are saved.
"""
