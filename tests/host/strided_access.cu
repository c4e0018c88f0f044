// Offset and stride copies of one buffer, for float and double, in the style of the CUDA
// blog's coalescing sample (our own code): the buffer holds n * 33 elements so that a
// stride of up to 32 stays inside it.
#define BLOCK 256

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

int main()
{
    int n = 1 << 20;
    float *f;
    double *d;
    cudaMalloc(&f, n * 33 * sizeof(float));
    cudaMalloc((void **)&d, n * 33 * sizeof(double));
    offset<float><<<n / BLOCK, BLOCK>>>(f, 1);
    offset<double><<<n / BLOCK, BLOCK>>>(d, 1);
    stride<float><<<n / BLOCK, BLOCK>>>(f, 32);
    stride<double><<<n / BLOCK, BLOCK>>>(d, 32);
    cudaDeviceSynchronize();
    cudaFree(f);
    cudaFree(d);
    return 0;
}
