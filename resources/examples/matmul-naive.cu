// Naive matrix multiply, C = A * B, n x n floats, 16 x 16 thread blocks.
// Each thread computes one element of C with a loop over k: every iteration is one more
// request for both loads. A warp is two half-rows of 16 threads, so A[row * n + k] touches
// 2 sectors (two rows, one word each) and B[k * n + col] 2 sectors (64 contiguous bytes).
#include <cstdio>
#include <cuda_runtime.h>

#define BLOCK 16

__device__ float dot(const float* a, const float* b, int n, int stride)
{
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) {
        sum += a[k] * b[k * stride];
    }
    return sum;
}

__global__ void matmulNaive(const float* A, const float* B, float* C, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        C[row * n + col] = dot(A + row * n, B + col, n, n);
    }
}

int main()
{
    const int n = 256;
    float *A, *B, *C;
    cudaMalloc(&A, n * n * sizeof(float));
    cudaMalloc(&B, n * n * sizeof(float));
    cudaMalloc(&C, n * n * sizeof(float));
    dim3 block(BLOCK, BLOCK), grid((n + BLOCK - 1) / BLOCK, (n + BLOCK - 1) / BLOCK);
    matmulNaive<<<grid, block>>>(A, B, C, n);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
