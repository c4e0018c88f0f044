// Byte histograms with atomics. The naive kernel adds every byte straight to the global
// bins: each warp's reduction touches as many sectors as its bytes fall in distinct 32-byte
// groups of bins. The privatized kernel counts in a shared copy per block first and adds it
// to the global bins once per block: 4 sectors per warp, 256 bins per block.
#define BINS 256

__global__ void histogramNaive(const unsigned char *data, unsigned int *bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[data[i]], 1u);
}

__global__ void histogramShared(const unsigned char *data, unsigned int *bins, int n)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
