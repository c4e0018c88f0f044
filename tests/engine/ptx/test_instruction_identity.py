"""Which source line a compiled memory instruction belongs to: the `.loc` in force for it, at
its innermost inlined position in a file the compile read for the pattern (a CUDA header's
inlined code counts at the user's line); an access in an included file carries that file."""

from __future__ import annotations

from ptx_helpers import inline_pattern, needs_nvcc

from sectorviz.engine.ptx.kernel import CompiledKernel

pytestmark = needs_nvcc

ARRAYS = {"a": {"dtype": "float32", "length": 64}, "out": {"dtype": "float32", "length": 64}}


def test_an_access_in_an_included_file_carries_that_file_and_its_line(tmp_path):
    header = "// helpers\n__device__ float twice(const float* p, int i) { return p[i] * 2; }\n"
    code = ('#include "helper.cuh"\n'
            'extern "C" __global__ void k(const float* a, float* out)\n'
            '{\n'
            '    int i = threadIdx.x;\n'
            '    out[i] = twice(a, i);\n'
            '}\n')
    pattern, compiled = inline_pattern(tmp_path, code, "k", ARRAYS,
                                       headers={"helper.cuh": header})
    kernel = CompiledKernel(pattern, compiled)
    load, store = kernel.instructions
    assert (load.file, load.line, load.array, load.ptx) == (
        str(tmp_path / "helper.cuh"), 2, "a", "ld.global.f32")
    # named by the expression of its array where the line has one (p in the header: the
    # statement), as the source writes it
    assert load.name == ("helper.cuh line 2: __device__ float twice(const float* p, int i) "
                         "{ return p[i] * 2; }, ld.global.f32")
    assert (store.file, store.line) == (None, 5)
    assert store.name == "line 5: out[i], st.global.f32"


def test_code_inlined_from_a_cuda_header_counts_at_the_users_line(tmp_path):
    code = ('extern "C" __global__ void k(const float* a, float* out)\n'
            '{\n'
            '    atomicAdd(&out[threadIdx.x % 4], a[threadIdx.x]);\n'
            '}\n')
    pattern, compiled = inline_pattern(tmp_path, code, "k", ARRAYS)
    assert "inlined_at" in compiled.ptx  # the atomic's .loc is in a CUDA header
    kernel = CompiledKernel(pattern, compiled)
    red = next(ins for ins in kernel.instructions if ins.array == "out")
    assert (red.op, red.file, red.line) == ("red", None, 3)
    assert red.name == "line 3: out[threadIdx.x % 4], atom.global.add.f32"
