// The same offset and stride copies launched as the CUDA blog's coalescing sample launches
// them (our own code): from a host template whose launches leave the kernel's template
// argument to be deduced from the buffer's type, called once per element type with a size
// in MiB that main fixes.
template <typename T>
__global__ void offset(T *a, int shift)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x + shift;
    a[i] = a[i] + 1;
}

template <typename T>
__global__ void stride(T *a, int step)
{
    int i = (blockDim.x * blockIdx.x + threadIdx.x) * step;
    a[i] = a[i] + 1;
}

template <typename T>
void run(int mib)
{
    const int block = 128;
    int n = mib * 1024 * 1024 / sizeof(T);
    T *buffer;
    cudaMalloc(&buffer, n * 33 * sizeof(T));
    offset<<<n / block, block>>>(buffer, 0); // warm up
    for (int k = 0; k <= 32; k++)
        offset<<<n / block, block>>>(buffer, k);
    stride<<<n / block, block>>>(buffer, 2);
    cudaFree(buffer);
}

int main()
{
    int mib = 2;
    run<float>(mib);
    run<double>(mib);
    return 0;
}
