// Host for histogram-naive-cuda and histogram-shared-cuda: the kernels of
// resources/examples/histogram.cu (which has no main) on the pattern's bytes, read from the
// file validation/values.py wrote (n = 65536 uint8 values drawn as the pattern draws them).
// Usage: histogram naive|shared DATA.bin
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "../../resources/examples/histogram.cu"

int main(int argc, char** argv)
{
    const int n = 65536, threads = 256;
    if (argc != 3 || (strcmp(argv[1], "naive") && strcmp(argv[1], "shared"))) {
        fprintf(stderr, "usage: %s naive|shared DATA.bin\n", argv[0]);
        return 2;
    }
    std::vector<unsigned char> host(n);
    FILE* f = fopen(argv[2], "rb");
    if (!f || fread(host.data(), 1, n, f) != (size_t)n) {
        fprintf(stderr, "%s: cannot read %d bytes\n", argv[2], n);
        return 1;
    }
    fclose(f);
    unsigned char* data;
    unsigned int* bins;
    cudaMalloc(&data, n);
    cudaMalloc(&bins, BINS * sizeof(unsigned int));
    cudaMemcpy(data, host.data(), n, cudaMemcpyHostToDevice);
    cudaMemset(bins, 0, BINS * sizeof(unsigned int));
    if (!strcmp(argv[1], "naive"))
        histogramNaive<<<n / threads, threads>>>(data, bins, n);
    else
        histogramShared<<<64, threads>>>(data, bins, n);
    cudaDeviceSynchronize();
    cudaFree(data);
    cudaFree(bins);
    return 0;
}
