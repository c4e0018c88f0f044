// Host for gather-repeated-cuda: the gather kernel of resources/examples/gather.cu, with the
// index array filled as that pattern fills it, index[i] = (i / 4) * 8 % n (runs of four
// lanes on one element), where gather.cu's own main fills gather-distinct's (i * 8) % n.
#define main example_main
#include "../../resources/examples/gather.cu"
#undef main

int main()
{
    const int n = 1 << 20;
    std::vector<int> host(n);
    for (int i = 0; i < n; ++i) host[i] = (i / 4) * 8 % n;
    int* index;
    float *data, *out;
    cudaMalloc(&index, n * sizeof(int));
    cudaMalloc(&data, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMemcpy(index, host.data(), n * sizeof(int), cudaMemcpyHostToDevice);
    gather<<<n / 256, 256>>>(index, data, out, n);
    cudaDeviceSynchronize();
    cudaFree(index);
    cudaFree(data);
    cudaFree(out);
    return 0;
}
