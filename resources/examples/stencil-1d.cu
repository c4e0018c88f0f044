// 1D stencil of radius 3 through a shared-memory tile (the classic CUDA C introduction).
// in holds n + 2 * RADIUS elements (a halo each side). The main load in[g + RADIUS] is
// 12 bytes past a sector boundary, so each warp touches 5 sectors instead of 4; the first
// three lanes of each block also load the two halos.
#include <cuda_runtime.h>

#define RADIUS 3
#define BLOCK_SIZE 256

__global__ void stencil1d(const float* in, float* out)
{
    __shared__ float temp[BLOCK_SIZE + 2 * RADIUS];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + RADIUS;

    temp[l] = in[g + RADIUS];
    if (threadIdx.x < RADIUS) {
        temp[l - RADIUS] = in[g];
        temp[l + BLOCK_SIZE] = in[g + RADIUS + BLOCK_SIZE];
    }
    __syncthreads();

    float result = 0;
    for (int offset = -RADIUS; offset <= RADIUS; offset++)
        result += temp[l + offset];
    out[g] = result;
}

int main()
{
    const int n = 1 << 20;
    float *in, *out;
    cudaMalloc(&in, (n + 2 * RADIUS) * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    stencil1d<<<n / BLOCK_SIZE, BLOCK_SIZE>>>(in, out);
    cudaDeviceSynchronize();
    return 0;
}
