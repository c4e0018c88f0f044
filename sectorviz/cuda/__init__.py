"""CUDA front end: a `__global__` function of a .cu file, interpreted SIMT-style over every
lane of a launch, gives the same instructions and executions as a pattern file's accesses."""
