// Gather: out[i] = data[index[i]]. The load of data goes wherever the indices point,
// so its sector count depends on the index values (the pattern file gives them).
#include <cuda_runtime.h>
#include <vector>

__global__ void gather(const int* __restrict__ index, const float* __restrict__ data,
                       float* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = data[index[i]];
}

int main()
{
    const int n = 1 << 20;
    std::vector<int> host(n);
    for (int i = 0; i < n; ++i) host[i] = (i * 8) % n;
    int* index;
    float *data, *out;
    cudaMalloc(&index, n * sizeof(int));
    cudaMalloc(&data, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMemcpy(index, host.data(), n * sizeof(int), cudaMemcpyHostToDevice);
    gather<<<n / 256, 256>>>(index, data, out, n);
    cudaDeviceSynchronize();
    return 0;
}
