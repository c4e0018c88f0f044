"""What the source tells the compiled engine and its PTX does not, with no interpreter
(compiled/hostfacts.py): each pointer's pointee type (for an array the pattern gives no
dtype) from the entry's demangled name, a struct's bytes from a compile of a sizeof probe,
and the launch's dynamic shared memory (its third <<<>>> argument, a constant expression)
from the host code (host/launches.py)."""

import json
import shutil

import pytest
from compiled_helpers import needs_nvcc

from sectorviz.engine.compiled import compile as compile_module
from sectorviz.engine.compiled import entries, hostfacts
from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.model import load_pattern
from sectorviz.model.analysis import analyze
from sectorviz.model.files import pattern_roots

# nvcc's name for `template <int N, typename T> __global__ void k(const T *, T *, ns::Cell *,
# Particle *, float4 *, unsigned char *)` launched as k<16, float>
MANGLED = "_Z1kILi16EfEvPKT0_PS0_PN2ns4CellEP8ParticleP6float4Ph"

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


@needs_nvcc
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


@needs_nvcc
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


def test_the_demangler_runs_in_process_and_resolves_template_parameters(monkeypatch):
    """With no c++filt on PATH, __cxa_demangle (the C++ runtime, loaded with ctypes) still
    gives the name Nsight prints, T and N resolved; an unmangled name stays as it is."""
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert entries._cxa_demangle() is not None  # the in-process demangler, not c++filt
    assert entries.demangle([MANGLED, "vecAdd"]) == [
        "void k<16, float>(float const*, float*, ns::Cell*, Particle*, float4*, "
        "unsigned char*)", "vecAdd"]


def test_pointee_types_map_to_pattern_dtypes_and_struct_names():
    """float const* and float* -> float32 (4 B); ns::Cell and Particle keep their names and
    take the probed bytes; float4 -> float4 (4 x 4 B = 16); unsigned char* -> uint8 (1 B)."""
    name = entries.demangle([MANGLED])[0]
    params = ["a", "b", "cells", "parts", "quads", "bytes_"]
    types = hostfacts.pointee_types(name, params)
    assert types == {"a": "float", "b": "float", "cells": "ns::Cell", "parts": "Particle",
                     "quads": "float4", "bytes_": "unsigned char"}
    assert hostfacts.needs_probe(list(types.values())) == ["ns::Cell", "Particle"]
    assert hostfacts.pointees(types, {"ns::Cell": 16, "Particle": 24}, params) == (
        ("a", "float32", 4), ("b", "float32", 4), ("cells", "ns::Cell", 16),
        ("parts", "Particle", 24), ("quads", "float4", 16), ("bytes_", "uint8", 1))
    # a struct the probe did not size, a pointer to a pointer, a value: left out
    assert hostfacts.pointees(types, {}, ["cells"]) == ()
    assert hostfacts.pointee_types("void f(float**, int, __half*)", ["p", "n", "h"]) == {
        "h": "__half"}
    assert hostfacts.pointees({"h": "__half"}, {}, ["h"]) == (("h", "float16", 2),)


def test_the_probes_sizes_are_read_as_the_ptx_writes_them():
    """nvcc writes {sizeof(A) = 16, sizeof(B) = 24} as little-endian bytes with the trailing
    zeros left out: 16 at byte 0, 24 at byte 8."""
    ptx = ".global .align 8 .b8 __sectorviz_sizeof[16] = {16, 0, 0, 0, 0, 0, 0, 0, 24};"
    assert hostfacts.probed_sizes(ptx, 2) == [16, 24]
    assert hostfacts.probed_sizes(".global .u64 __sectorviz_sizeof[2] = {16, 24};", 2) == [
        16, 24]
    assert hostfacts.probed_sizes(".b64 __sectorviz_sizeof", 2) is None


PADDED = """\
namespace phys {
struct Padded { char tag; double value; int count; };
}

__global__ void count(phys::Padded *cells, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) cells[i].count += 1;
}
"""


@needs_nvcc
def test_a_padded_struct_in_a_namespace_takes_the_compilers_size(tmp_path, monkeypatch):
    """phys::Padded: tag at byte 0, 7 bytes of padding so that the double sits at 8, count
    at 16, then 4 bytes of tail padding to the struct's 8-byte alignment: 24 bytes. One warp
    of 32 lanes 24 B apart reads (and writes) count over 32 * 24 = 768 B, 24 sectors a
    request; the probe compiles once, then its sizes come from the cache entry."""
    (tmp_path / "padded.cu").write_text(PADDED)
    doc = {"format": "sectorviz.pattern/1", "params": {"n": 32},
           "launch": {"grid": [1], "block": [32]}, "arrays": {"cells": {"length": "n"}},
           "kernel": {"source": "padded.cu", "function": "count", "engine": "compiled"}}
    (tmp_path / "p.sectorviz.json").write_text(json.dumps(doc))
    pattern = load_pattern(tmp_path / "p.sectorviz.json")
    probes = []
    real = compile_module._probed
    monkeypatch.setattr(compile_module, "_probed",
                        lambda types, probe: probes.append(types) or real(types, probe))
    assert compile_kernel(pattern).pointees == (("cells", "phys::Padded", 24),)
    assert compile_kernel(pattern).pointees == (("cells", "phys::Padded", 24),)
    assert probes == [["phys::Padded"]]
    analysis = analyze(pattern)
    assert [(s.op, s.requests, s.sectors) for s in analysis.instructions] == [
        ("load", 1, 24), ("store", 1, 24)]


LAUNCHES = """\
constexpr int TILE = 64;
#define WIDE (2 * TILE)

__global__ void agree(float *a) {{ extern __shared__ float s[]; s[threadIdx.x] = a[0]; }}
__global__ void differ(float *a) {{ extern __shared__ float s[]; s[threadIdx.x] = a[0]; }}
template <typename T>
__global__ void typed(T *a) {{ extern __shared__ char s[]; s[threadIdx.x] = 0; }}

int main()
{{
    float *a; double *d;
    agree<<<1, TILE, TILE * sizeof(float)>>>(a);
    agree<<<2, TILE, {again}>>>(a);
    differ<<<1, 32, 128>>>(a);
    differ<<<1, 32, 256>>>(a);
    typed<float><<<1, 32, 32 * sizeof(float)>>>(a);
    typed<double><<<1, 32, 32 * sizeof(double)>>>(d);
    return 0;
}}
"""


@pytest.mark.parametrize("again, agreed", [("WIDE * 2", 256), ("WIDE", None)])
def test_dynamic_shared_bytes_from_constexpr_and_define_launches(tmp_path, again, agreed):
    """agree's launches: TILE * sizeof(float) = 64 * 4 = 256 and WIDE * 2 = 2 * 64 * 2 = 256
    agree (256); with WIDE alone (128) they do not (None), as differ's 128 and 256 never do.
    A template kernel's instantiations each have their own: typed<float> 32 * 4 = 128,
    typed<double> 32 * 8 = 256."""
    text = LAUNCHES.format(again=again)
    roots = pattern_roots(tmp_path)

    def shared(function, targs=None):
        return hostfacts.dynamic_shared_bytes(text, None, roots, function, targs)
    assert shared("agree") == agreed
    assert shared("differ") is None
    assert (shared("typed", "float"), shared("typed", "double")) == (128, 256)
