// A matrix transpose in the style of the CUDA blog's sample (our own code): 32 x 32 tiles
// walked by 32 x 8 thread blocks, each thread moving TILE / ROWS elements.
#include <cstdio>

const int TILE = 32;
const int ROWS = 8;

__global__ void copyRows(float *out, const float *in)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    int width = gridDim.x * TILE;
    for (int k = 0; k < TILE; k += ROWS)
        out[(y + k) * width + x] = in[(y + k) * width + x];
}

__global__ void transposeNaive(float *out, const float *in)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    int width = gridDim.x * TILE;
    for (int k = 0; k < TILE; k += ROWS)
        out[x * width + (y + k)] = in[(y + k) * width + x];
}

__global__ void transposeShared(float *out, const float *in)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    int width = gridDim.x * TILE;
    for (int k = 0; k < TILE; k += ROWS)
        tile[threadIdx.y + k][threadIdx.x] = in[(y + k) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += ROWS)
        out[(y + k) * width + x] = tile[threadIdx.x][threadIdx.y + k];
}

static cudaError_t checked(cudaError_t status)
{
    if (status != cudaSuccess)
        fprintf(stderr, "%s\n", cudaGetErrorString(status));
    return status;
}

int main()
{
    const int cols = 1024, rows = 1024;
    const int bytes = cols * rows * sizeof(float);
    dim3 blocks(cols / TILE, rows / TILE, 1);
    dim3 threads(TILE, ROWS, 1);
    float *d_in, *d_out;
    checked(cudaMalloc(&d_in, bytes));
    checked(cudaMalloc(&d_out, bytes));
    copyRows<<<blocks, threads>>>(d_out, d_in);
    transposeNaive<<<blocks, threads>>>(d_out, d_in);
    transposeShared<<<blocks, threads>>>(d_out, d_in);
    checked(cudaDeviceSynchronize());
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
