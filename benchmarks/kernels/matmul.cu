// Three matrix multiplies, C = A * B, n x n floats, for the scale benchmark and tests.
// Coalesced: one thread per output in 1-D blocks of 1024, row and col from / and %: per k a
// warp reads one word of A (1 sector) and 32 consecutive floats of B (4 sectors).
// Tiled: 32 x 32 tiles through shared memory; per tile a warp reads a 128-byte row piece of
// A and of B (4 sectors each), and the inner loop over k reads shared memory only.
#define TILE 32

__global__ void matmulCoalesced(const float* A, const float* B, float* C, int n)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int row = idx / n;
    int col = idx % n;
    if (row < n) {
        float sum = 0.0f;
        for (int k = 0; k < n; ++k)
            sum += A[row * n + k] * B[k * n + col];
        C[row * n + col] = sum;
    }
}

__global__ void matmulTiled(const float* A, const float* B, float* C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[threadIdx.y][threadIdx.x] = A[row * n + t * TILE + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = sum;
}

// Block-coalesced (SGEMM_CUDA's second kernel): a 1-D block of BLOCK * BLOCK threads owns a
// BLOCK x BLOCK tile of C, row and col by / and % of the template constant; with BLOCK = 32
// a warp is a row piece of its tile, so per k it reads as the coalesced one does.
template <unsigned BLOCK>
__global__ void matmulBlockCoalesced(const float* A, const float* B, float* C, int n)
{
    const int row = blockIdx.x * BLOCK + threadIdx.x / BLOCK;
    const int col = blockIdx.y * BLOCK + threadIdx.x % BLOCK;
    if (row < n && col < n) {
        float sum = 0.0f;
        for (int k = 0; k < n; ++k)
            sum += A[row * n + k] * B[k * n + col];
        C[row * n + col] = sum;
    }
}
