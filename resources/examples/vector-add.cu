// Vector add: c[i] = a[i] + b[i], one element per thread.
// Each warp reads 2 x 128 contiguous bytes and writes 128: 12 sectors per warp.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                        \
    do {                                                                   \
        cudaError_t err = (call);                                          \
        if (err != cudaSuccess) {                                          \
            fprintf(stderr, "%s\n", cudaGetErrorString(err));              \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

__global__ void vectorAdd(const float* __restrict__ a, const float* __restrict__ b,
                          float* __restrict__ c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

int main()
{
    const int n = 1 << 20;
    const int threads = 256;
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, n * sizeof(float)));
    CHECK(cudaMalloc(&b, n * sizeof(float)));
    CHECK(cudaMalloc(&c, n * sizeof(float)));
    vectorAdd<<<(n + threads - 1) / threads, threads>>>(a, b, c, n);
    CHECK(cudaDeviceSynchronize());
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
