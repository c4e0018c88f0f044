// Matrix transpose, m x m floats, 32 x 32 thread blocks.
// Naive: reads rows (4 sectors per warp) but writes columns (32 sectors per warp).
// Tiled: goes through a shared-memory tile, so both global accesses are rows (4 + 4);
// the tile is padded to 33 columns so reading it by column has no bank conflicts.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define TILE_DIM 32

__global__ void transposeNaive(const float* a, float* c, int m)
{
    int col = blockIdx.x * TILE_DIM + threadIdx.x;
    int row = blockIdx.y * TILE_DIM + threadIdx.y;
    c[col * m + row] = a[row * m + col];
}

__global__ void transposeTiled(const float* a, float* c, int m)
{
    cg::thread_block cta = cg::this_thread_block();
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = a[y * m + x];

    cg::sync(cta);

    x = blockIdx.y * TILE_DIM + threadIdx.x;  // transposed block offset
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    c[y * m + x] = tile[threadIdx.x][threadIdx.y];
}

int main()
{
    const int m = 1024;
    float *a, *c;
    cudaMalloc(&a, m * m * sizeof(float));
    cudaMalloc(&c, m * m * sizeof(float));
    dim3 grid(m / TILE_DIM, m / TILE_DIM), block(TILE_DIM, TILE_DIM);
    transposeNaive<<<grid, block>>>(a, c, m);
    transposeTiled<<<grid, block>>>(a, c, m);
    cudaDeviceSynchronize();
    return 0;
}
