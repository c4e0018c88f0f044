// Tiled matrix multiply, C = A * B, n x n, TILE x TILE thread blocks, written as a template
// the way real kernels are: the tile size and the element type are template arguments, and
// the pattern file names no instantiation, so sectorviz takes the one main() launches
// (matmulTiled<16>, T = float by default).
// Each step loads one TILE x TILE tile of A and of B into shared memory, so a warp (two
// half-rows of 16 threads) reads 2 rows x 64 contiguous bytes = 4 sectors per load, n / TILE
// times, instead of the naive kernel's 2 sectors on each of n iterations: 8x fewer sectors.
#include <cstdio>
#include <cuda_runtime.h>

template <int TILE, typename T = float>
__global__ void __launch_bounds__(TILE * TILE)
matmulTiled(const T *__restrict__ A, const T *__restrict__ B, T *__restrict__ C, int n)
{
    __shared__ T As[TILE][TILE];
    __shared__ T Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    T sum = 0;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        As[ty][tx] = A[row * n + k0 + tx];
        Bs[ty][tx] = B[(k0 + ty) * n + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            sum += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[row * n + col] = sum;
}

int main()
{
    const int n = 256;
    constexpr int tile = 16;
    float *A, *B, *C;
    cudaMalloc(&A, n * n * sizeof(float));
    cudaMalloc(&B, n * n * sizeof(float));
    cudaMalloc(&C, n * n * sizeof(float));
    dim3 block(tile, tile), grid(n / tile, n / tile);
    matmulTiled<tile><<<grid, block>>>(A, B, C, n);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
