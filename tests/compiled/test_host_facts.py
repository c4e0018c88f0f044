"""What the host code tells the compiled engine: a struct pointer's element type (for an
array the pattern gives no dtype) and the launch's dynamic shared memory (its third <<<>>>
argument, a constant expression), as the source front end reads them."""

import json

from compiled_helpers import needs_nvcc

from sectorviz.compiled.compile import compile_kernel
from sectorviz.model import load_pattern
from sectorviz.model.analysis import analyze

pytestmark = needs_nvcc

PARTICLES = """\
struct Particle { float x, y, z, w, vx, vy; };

__global__ void drift(Particle *p, int n, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i].x += p[i].vx * dt;
}

__global__ void reverse(const float *in, float *out)
{
    extern __shared__ float tile[];
    int t = threadIdx.x;
    tile[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = tile[blockDim.x - 1 - t];
}

#define THREADS 32

int main()
{
    Particle *p;
    float *a, *b;
    cudaMalloc(&p, 64 * sizeof(Particle));
    drift<<<2, THREADS>>>(p, 64, 0.1f);
    reverse<<<2, THREADS, THREADS * sizeof(float)>>>(a, b);
    return 0;
}
"""


def _pattern(folder, function, arrays, **kernel):
    (folder / "particles.cu").write_text(PARTICLES)
    doc = {"format": "sectorviz.pattern/1", "params": {"n": 64},
           "launch": {"grid": [2], "block": [32]}, "arrays": arrays,
           "kernel": {"source": "particles.cu", "function": function, "engine": "compiled",
                      **kernel}}
    (folder / "p.sectorviz.json").write_text(json.dumps(doc))
    return load_pattern(folder / "p.sectorviz.json")


def test_a_struct_pointer_without_a_dtype_takes_the_structs_size(tmp_path):
    """p[i].x and p[i].vx of 24-byte Particles, 2 warps: a request's 32 lanes lie 24 B apart
    and span 768 B, 24 sectors: 2 requests of 24 sectors per instruction (with the PTX's f32
    as the element, the array would hold 4 B a particle and the accesses would leave it).
    The other kernel's extern __shared__ array asks this one for no size."""
    pattern = _pattern(tmp_path, "drift", {"p": {"length": "n"}})
    compiled = compile_kernel(pattern)
    assert compiled.pointees == (("p", "Particle", 24),)
    analysis = analyze(pattern)
    assert [(s.op, s.requests, s.sectors) for s in analysis.instructions] == [
        ("load", 2, 48), ("load", 2, 48), ("store", 2, 48)]


def test_dynamic_shared_memory_comes_from_the_launchs_third_argument(tmp_path):
    """reverse<<<2, THREADS, THREADS * sizeof(float)>>>: 128 bytes of extern __shared__,
    without "dynamic_shared_bytes" in the pattern; the pattern's own key still wins."""
    f32 = {"dtype": "float32", "length": 64}
    pattern = _pattern(tmp_path, "reverse", {"in": f32, "out": f32})
    assert compile_kernel(pattern).dynamic_shared_bytes == 128
    shared = analyze(pattern).shared
    assert [(s.op, s.requests, s.wavefronts) for s in shared] == [("store", 2, 2),
                                                                ("load", 2, 2)]
    given = _pattern(tmp_path, "reverse", {"in": f32, "out": f32}, dynamic_shared_bytes=256)
    assert compile_kernel(given).dynamic_shared_bytes is None  # not asked: the pattern says
