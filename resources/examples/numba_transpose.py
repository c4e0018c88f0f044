"""Naive matrix transpose in Numba CUDA, in the style of Numba's CUDA examples: one thread
per element, out[col, row] = a[row, col]; reads are coalesced, writes are not."""

from numba import cuda


@cuda.jit
def transpose(a, out):
    col, row = cuda.grid(2)
    if row < a.shape[0] and col < a.shape[1]:
        out[col, row] = a[row, col]
