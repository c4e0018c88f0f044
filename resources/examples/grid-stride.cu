// SAXPY with a grid-stride loop: a fixed grid walks an array of any length.
// Every trip of the loop is one more request per warp; the last trip of the last warp
// is partial (n is not a multiple of 32), so it touches fewer sectors.
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

int main()
{
    const int n = 1000003;
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    saxpy<<<120, 256>>>(n, 2.0f, x, y);
    cudaDeviceSynchronize();
    return 0;
}
