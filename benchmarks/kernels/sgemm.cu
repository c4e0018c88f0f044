// Six single-precision GEMMs, C = alpha * A * B + beta * C with A M x K, B K x N and C M x N
// (row-major floats), the steps of the usual "optimise a GEMM" walk-through, written for
// benchmarks/bench_real.py as stand-ins of the same launch shapes and access patterns.
//  gemmNaive        2-D blocks of 32 x 32, x picks the row: a warp reads 32 rows of A.
//  gemmCoalesced    1-D blocks of 1024 over a 32 x 32 tile, x picks the column.
//  gemmShared       the same tile, staged through 32 x 32 shared tiles of A and B.
//  gemmTiles1D      64 x 64 tiles, K steps of 8, each thread owns 8 results of a column.
//  gemmTiles2D      TILE_M x TILE_N tiles, K steps of 8, each thread owns 8 x 8 results.
//  gemmFloat4       the 2-D tiles, global reads and writes as float4, A stored transposed.

__global__ void gemmNaive(int M, int N, int K, float alpha, const float* A, const float* B,
                          float beta, float* C)
{
    const unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned c = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < M && c < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[r * K + k] * B[k * N + c];
        C[r * N + c] = alpha * acc + beta * C[r * N + c];
    }
}

template <int EDGE>
__global__ void gemmCoalesced(int M, int N, int K, float alpha, const float* A,
                              const float* B, float beta, float* C)
{
    const unsigned r = blockIdx.x * EDGE + threadIdx.x / EDGE;
    const unsigned c = blockIdx.y * EDGE + threadIdx.x % EDGE;
    if (r < M && c < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[r * K + k] * B[k * N + c];
        C[r * N + c] = alpha * acc + beta * C[r * N + c];
    }
}

template <int EDGE>
__global__ void gemmShared(int M, int N, int K, float alpha, const float* A, const float* B,
                           float beta, float* C)
{
    __shared__ float tileA[EDGE * EDGE];
    __shared__ float tileB[EDGE * EDGE];
    const unsigned ty = threadIdx.x / EDGE, tx = threadIdx.x % EDGE;
    const float* a = A + blockIdx.x * EDGE * K;
    const float* b = B + blockIdx.y * EDGE;
    float* out = C + blockIdx.x * EDGE * N + blockIdx.y * EDGE;
    float acc = 0.0f;
    for (int step = 0; step < K; step += EDGE) {
        tileA[ty * EDGE + tx] = a[ty * K + tx];
        tileB[ty * EDGE + tx] = b[ty * N + tx];
        __syncthreads();
        a += EDGE;
        b += EDGE * N;
        for (int k = 0; k < EDGE; ++k)
            acc += tileA[ty * EDGE + k] * tileB[k * EDGE + tx];
        __syncthreads();
    }
    out[ty * N + tx] = alpha * acc + beta * out[ty * N + tx];
}

template <int TILE_M, int TILE_N, int STEP, int PER_THREAD>
__global__ void gemmTiles1D(int M, int N, int K, float alpha, const float* A,
                            const float* B, float beta, float* C)
{
    __shared__ float tileA[TILE_M * STEP];
    __shared__ float tileB[STEP * TILE_N];
    const int col = threadIdx.x % TILE_N, rowGroup = threadIdx.x / TILE_N;
    const float* a = A + blockIdx.y * TILE_M * K;
    const float* b = B + blockIdx.x * TILE_N;
    float* out = C + blockIdx.y * TILE_M * N + blockIdx.x * TILE_N;
    const unsigned aRow = threadIdx.x / STEP, aCol = threadIdx.x % STEP;
    const unsigned bRow = threadIdx.x / TILE_N, bCol = threadIdx.x % TILE_N;
    float acc[PER_THREAD] = {0.0f};
    for (unsigned step = 0; step < K; step += STEP) {
        tileA[aRow * STEP + aCol] = a[aRow * K + aCol];
        tileB[bRow * TILE_N + bCol] = b[bRow * N + bCol];
        __syncthreads();
        a += STEP;
        b += STEP * N;
        for (unsigned k = 0; k < STEP; ++k) {
            const float fromB = tileB[k * TILE_N + col];
            for (unsigned i = 0; i < PER_THREAD; ++i)
                acc[i] += tileA[(rowGroup * PER_THREAD + i) * STEP + k] * fromB;
        }
        __syncthreads();
    }
    for (unsigned i = 0; i < PER_THREAD; ++i) {
        const unsigned at = (rowGroup * PER_THREAD + i) * N + col;
        out[at] = alpha * acc[i] + beta * out[at];
    }
}

template <int TILE_M, int TILE_N, int STEP, int RM, int RN>
__global__ void gemmTiles2D(int M, int N, int K, float alpha, const float* A,
                            const float* B, float beta, float* C)
{
    __shared__ float tileA[TILE_M * STEP];
    __shared__ float tileB[STEP * TILE_N];
    constexpr unsigned threads = TILE_M * TILE_N / (RM * RN);
    const unsigned col = threadIdx.x % (TILE_N / RN), row = threadIdx.x / (TILE_N / RN);
    const float* a = A + blockIdx.y * TILE_M * K;
    const float* b = B + blockIdx.x * TILE_N;
    float* out = C + blockIdx.y * TILE_M * N + blockIdx.x * TILE_N;
    const unsigned aRow = threadIdx.x / STEP, aCol = threadIdx.x % STEP;
    const unsigned bRow = threadIdx.x / TILE_N, bCol = threadIdx.x % TILE_N;
    float acc[RM * RN] = {0.0f};
    float fromA[RM], fromB[RN];
    for (unsigned step = 0; step < K; step += STEP) {
        for (unsigned r = 0; r < TILE_M; r += threads / STEP)
            tileA[(aRow + r) * STEP + aCol] = a[(aRow + r) * K + aCol];
        for (unsigned r = 0; r < STEP; r += threads / TILE_N)
            tileB[(bRow + r) * TILE_N + bCol] = b[(bRow + r) * N + bCol];
        __syncthreads();
        a += STEP;
        b += STEP * N;
        for (unsigned k = 0; k < STEP; ++k) {
            for (unsigned i = 0; i < RM; ++i)
                fromA[i] = tileA[(row * RM + i) * STEP + k];
            for (unsigned j = 0; j < RN; ++j)
                fromB[j] = tileB[k * TILE_N + col * RN + j];
            for (unsigned i = 0; i < RM; ++i)
                for (unsigned j = 0; j < RN; ++j)
                    acc[i * RN + j] += fromA[i] * fromB[j];
        }
        __syncthreads();
    }
    for (unsigned i = 0; i < RM; ++i)
        for (unsigned j = 0; j < RN; ++j) {
            const unsigned at = (row * RM + i) * N + col * RN + j;
            out[at] = alpha * acc[i * RN + j] + beta * out[at];
        }
}

template <int TILE_M, int TILE_N, int STEP, int RM, int RN>
__global__ void gemmFloat4(int M, int N, int K, float alpha, const float* A, const float* B,
                           float beta, float* C)
{
    __shared__ float tileAT[STEP * TILE_M];  // A's tile transposed: k-major
    __shared__ float tileB[STEP * TILE_N];
    const unsigned col = threadIdx.x % (TILE_N / RN), row = threadIdx.x / (TILE_N / RN);
    const float* a = A + blockIdx.y * TILE_M * K;
    const float* b = B + blockIdx.x * TILE_N;
    float* out = C + blockIdx.y * TILE_M * N + blockIdx.x * TILE_N;
    const unsigned aRow = threadIdx.x / (STEP / 4), aCol = threadIdx.x % (STEP / 4);
    const unsigned bRow = threadIdx.x / (TILE_N / 4), bCol = threadIdx.x % (TILE_N / 4);
    float acc[RM * RN] = {0.0f};
    float fromA[RM], fromB[RN];
    for (unsigned step = 0; step < K; step += STEP) {
        const float4 quad = reinterpret_cast<const float4*>(&a[aRow * K + aCol * 4])[0];
        tileAT[(aCol * 4 + 0) * TILE_M + aRow] = quad.x;
        tileAT[(aCol * 4 + 1) * TILE_M + aRow] = quad.y;
        tileAT[(aCol * 4 + 2) * TILE_M + aRow] = quad.z;
        tileAT[(aCol * 4 + 3) * TILE_M + aRow] = quad.w;
        reinterpret_cast<float4*>(&tileB[bRow * TILE_N + bCol * 4])[0] =
            reinterpret_cast<const float4*>(&b[bRow * N + bCol * 4])[0];
        __syncthreads();
        a += STEP;
        b += STEP * N;
        for (unsigned k = 0; k < STEP; ++k) {
            for (unsigned i = 0; i < RM; ++i)
                fromA[i] = tileAT[k * TILE_M + row * RM + i];
            for (unsigned j = 0; j < RN; ++j)
                fromB[j] = tileB[k * TILE_N + col * RN + j];
            for (unsigned i = 0; i < RM; ++i)
                for (unsigned j = 0; j < RN; ++j)
                    acc[i * RN + j] += fromA[i] * fromB[j];
        }
        __syncthreads();
    }
    for (unsigned i = 0; i < RM; ++i)
        for (unsigned j = 0; j < RN; j += 4) {
            float4 v = reinterpret_cast<float4*>(&out[(row * RM + i) * N + col * RN + j])[0];
            v.x = alpha * acc[i * RN + j + 0] + beta * v.x;
            v.y = alpha * acc[i * RN + j + 1] + beta * v.y;
            v.z = alpha * acc[i * RN + j + 2] + beta * v.z;
            v.w = alpha * acc[i * RN + j + 3] + beta * v.w;
            reinterpret_cast<float4*>(&out[(row * RM + i) * N + col * RN + j])[0] = v;
        }
}
