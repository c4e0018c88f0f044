"""Matrix transpose through a shared-memory tile in Numba CUDA, in the style of Numba's
CUDA examples: a 32 x 32 tile per block (32 x 8 threads, 4 rows each), padded to 33 columns
so the column reads hit 32 different banks; both global sides are coalesced."""

from numba import cuda, float32

TILE = 32
ROWS = 8
PADDED = 33  # TILE + 1: Numba needs the literal


@cuda.jit
def transpose_tiled(a, out):
    tile = cuda.shared.array(shape=(TILE, PADDED), dtype=float32)
    x = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        tile[cuda.threadIdx.y + j, cuda.threadIdx.x] = a[y + j, x]
    cuda.syncthreads()
    x = cuda.blockIdx.y * TILE + cuda.threadIdx.x
    y = cuda.blockIdx.x * TILE + cuda.threadIdx.y
    for j in range(0, TILE, ROWS):
        out[y + j, x] = tile[cuda.threadIdx.x, cuda.threadIdx.y + j]
