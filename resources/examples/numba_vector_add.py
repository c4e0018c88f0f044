"""Vector add in Numba CUDA, in the style of Numba's CUDA examples: one element per thread,
out[i] = x[i] + y[i] for i < n."""

from numba import cuda


@cuda.jit
def add(x, y, out, n):
    i = cuda.grid(1)
    if i < n:
        out[i] = x[i] + y[i]


def run(x, y):
    """The host side (never read by sectorviz: it takes only the kernel)."""
    out = cuda.device_array_like(x)
    add[(x.size + 255) // 256, 256](x, y, out, x.size)
    return out.copy_to_host()
