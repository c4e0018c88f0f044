// Array of structures against structure of arrays: the same particle update, two layouts.
//
// move_aos keeps each particle's six floats together (a 24-byte Particle). A warp that
// updates x reads lanes 24 bytes apart: 768 bytes span 24 sectors for 128 useful bytes.
// move_soa keeps each field in its own array: 32 consecutive floats, 4 sectors.
// Per warp: AoS 9 instructions x 24 sectors = 216; SoA 9 x 4 = 36 (6 times fewer).
#include <cuda_runtime.h>

struct Particle {
    float x, y, z;     // position, bytes 0-11
    float vx, vy, vz;  // velocity, bytes 12-23
};

__global__ void move_aos(Particle* p, float dt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    p[i].x += p[i].vx * dt;
    p[i].y += p[i].vy * dt;
    p[i].z += p[i].vz * dt;
}

__global__ void move_soa(float* x, float* y, float* z,
                         const float* vx, const float* vy, const float* vz, float dt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    x[i] += vx[i] * dt;
    y[i] += vy[i] * dt;
    z[i] += vz[i] * dt;
}

int main()
{
    const int n = 1 << 20;
    const int threads = 256;
    Particle* p;
    float* f;
    cudaMalloc(&p, n * sizeof(Particle));
    cudaMalloc(&f, 6 * n * sizeof(float));
    move_aos<<<(n + threads - 1) / threads, threads>>>(p, 0.01f, n);
    move_soa<<<(n + threads - 1) / threads, threads>>>(f, f + n, f + 2 * n, f + 3 * n,
                                                       f + 4 * n, f + 5 * n, 0.01f, n);
    cudaDeviceSynchronize();
    cudaFree(p);
    cudaFree(f);
    return 0;
}
