// Sum reduction, sequential addressing in shared memory (each thread first adds two
// elements). Global side: two coalesced loads per warp and one store per block; the tree
// in shared memory is conflict-free, and its requests shrink as fewer warps stay active.
#include <cuda_runtime.h>

#define THREADS 256

__global__ void reduceSum(const float* __restrict__ in, float* __restrict__ out, unsigned int n)
{
    __shared__ float sdata[THREADS];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;

    float sum = (i < n) ? in[i] : 0.0f;
    if (i + blockDim.x < n)
        sum += in[i + blockDim.x];
    sdata[tid] = sum;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] = sum = sum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = sum;
}

int main()
{
    const unsigned int n = 1 << 20;
    float *in, *out;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n / (2 * THREADS) * sizeof(float));
    reduceSum<<<n / (2 * THREADS), THREADS>>>(in, out, n);
    cudaDeviceSynchronize();
    return 0;
}
