"""Host code left out: the device view of a .cu file keeps the device code where it was."""

import pytest
from compiled_helpers import needs_nvcc, write_pattern

from sectorviz.compiled.compile import compile_kernel
from sectorviz.compiled.hostcode import device_view

EXTENSION = """\
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <vector>
namespace py = pybind11;
using namespace torch;

template <typename scalar_t>
__global__ void twice(const scalar_t *__restrict__ x, scalar_t *__restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2;
}

constexpr int threads() { return 256; }

torch::Tensor twice_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "twice", ([&] {
        twice<scalar_t><<<(n + threads() - 1) / threads(), threads()>>>(
            x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n);
    }));
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("twice", &twice_cuda, "y = 2 x");
}
"""

SAMPLES_STYLE = """\
#include <cstdio>
#include <helper_cuda.h>
#include "helper_functions.h"

__device__ float square(float v) { return v * v; }

__global__ void squares(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = square(x[i]);
}

int main(int argc, char **argv)
{
    int dev = findCudaDevice(argc, (const char **)argv);
    float *x, *y;
    checkCudaErrors(cudaMalloc(&x, 1024 * sizeof(float)));
    checkCudaErrors(cudaMalloc(&y, 1024 * sizeof(float)));
    StopWatchInterface *timer = NULL;
    sdkCreateTimer(&timer);
    squares<<<4, 256>>>(x, y, 1024);
    getLastCudaError("squares failed");
    printf("%d\\n", dev);
    return 0;
}
"""


def test_device_view_blanks_host_code_and_keeps_every_line():
    view = device_view(EXTENSION)
    assert view.count("\n") == EXTENSION.count("\n")
    kept, blanked = view.splitlines(), EXTENSION.splitlines()
    for number, (line, original) in enumerate(zip(kept, blanked), 1):
        assert len(line) == len(original), number
        assert line.strip() in ("", original.strip()), number
    assert "torch" not in view and "pybind11" not in view and "PYBIND11_MODULE" not in view
    assert "__global__ void twice" in view and "constexpr int threads()" in view
    assert "#include <vector>" in view


def test_device_view_of_device_only_code_is_the_code():
    code = "__device__ int f(int v) { return v; }\n__global__ void k(int *a) { a[0] = f(1); }\n"
    assert device_view(code) == code


def test_host_main_of_a_samples_file_is_left_out():
    view = device_view(SAMPLES_STYLE)
    assert "findCudaDevice" not in view and "__device__ float square" in view


@needs_nvcc
def test_a_pytorch_extension_compiles_without_torch(tmp_path):
    pattern = write_pattern(tmp_path, EXTENSION, "twice<float>")
    compiled = compile_kernel(pattern)
    assert compiled.host_code_left_out
    assert compiled.name == "void twice<float>(float const*, float*, int)"
    assert compiled.params == ("x", "y", "n")
    assert "ld.global.nc.f32" in compiled.ptx
    # the kernel's lines are those of the file: `y[i] = x[i] * 2` is line 10
    assert "\t.loc\t1 10 " in compiled.ptx
    assert f'.file\t1 "{tmp_path / "kernel.cu"}"' in compiled.ptx


@needs_nvcc
def test_a_samples_style_file_compiles_without_helper_headers(tmp_path):
    compiled = compile_kernel(write_pattern(tmp_path, SAMPLES_STYLE, "squares"))
    assert compiled.host_code_left_out and compiled.params == ("x", "y", "n")
    assert compiled.files == (str(tmp_path / "kernel.cu"),)


@needs_nvcc
def test_host_code_that_compiles_is_kept(tmp_path):
    code = SAMPLES_STYLE.replace("#include <helper_cuda.h>\n", "\n").replace(
        '#include "helper_functions.h"\n', "\n")
    code = "\n".join(line for line in code.splitlines()
                     if not any(w in line for w in ("findCuda", "Timer", "getLast", "Stop"))
                     ).replace("checkCudaErrors", "") + "\n"
    code = code.replace("printf(\"%d\\n\", dev);", "")
    compiled = compile_kernel(write_pattern(tmp_path, code, "squares"))
    assert not compiled.host_code_left_out


@needs_nvcc
def test_a_real_helper_header_in_the_root_wins_over_the_stand_in(tmp_path):
    helper = "#pragma once\n#define SCALE 3.0f\n"
    code = ('#include "helper_cuda.h"\n__global__ void k(float *y) '
            '{ y[threadIdx.x] = SCALE; }\n')
    compiled = compile_kernel(write_pattern(tmp_path, code, "k",
                                            files={"helper_cuda.h": helper}))
    assert str(tmp_path / "helper_cuda.h") in compiled.files
    assert "1077936128;" in compiled.ptx  # 3.0f stored as its bits


@needs_nvcc
@pytest.mark.parametrize("function", ["twice", "twice<double>"])
def test_templates_named_without_a_launch(tmp_path, function):
    pattern = write_pattern(tmp_path, EXTENSION, function)
    if function == "twice":  # host code left out: nothing launches an instantiation
        with pytest.raises(Exception, match="no __global__ function 'twice'"):
            compile_kernel(pattern)
    else:
        assert compile_kernel(pattern).name.startswith("void twice<double>")


COMMON_STYLE = """\
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cublasLt.h>
#include <curand.h>

cublasHandle_t blas;
cublasLtHandle_t blas_lt;
static cublasComputeType_t compute_type;

void blas_check(cublasStatus_t status) {
    if (status != CUBLAS_STATUS_SUCCESS) { exit(1); }
}

void setup() {
    blas_check(cublasCreate(&blas));
    blas_check(cublasLtCreate(&blas_lt));
    compute_type = CUBLAS_COMPUTE_32F_FAST_TF32;
    blas_check(cublasSetMathMode(blas, CUBLAS_TF32_TENSOR_OP_MATH));
    curandGenerator_t gen;
    curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_DEFAULT);
}

__device__ float twice(float v) { return 2.0f * v; }
"""


@needs_nvcc
def test_a_shared_header_whose_host_code_uses_cublas_compiles_with_the_stand_ins(tmp_path):
    """A header in the style of llm.c's dev/cuda/common.h keeps cuBLAS, cuBLASLt and cuRAND
    handles and calls in host code; without the libraries the stand-ins declare them, and
    the file compiles as written (the device view blanks the main file only)."""
    code = ('#include "common.h"\n__global__ void scale(float *y, const float *x, int n)\n'
            '{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
            '    if (i < n) y[i] = twice(x[i]);\n}\n'
            'int main() { setup(); cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, 1, 1, 1, 0, 0, 1,'
            ' 0, 1, 0, 0, 1); return 0; }\n')
    compiled = compile_kernel(write_pattern(tmp_path, code, "scale",
                                            files={"common.h": COMMON_STYLE}))
    assert not compiled.host_code_left_out
    assert str(tmp_path / "common.h") in compiled.files
    assert "ld.global" in compiled.ptx and "st.global" in compiled.ptx


def test_an_extern_c_host_function_is_left_out_whole():
    """cuda-samples' scan.cu style: `extern "C" void host(...) {...}` goes with its linkage
    (a bare `extern "C"` left at the end of the file does not compile); a linkage block of
    declarations keeps its device code."""
    code = ('extern "C" void scanHost(float *d, int n)\n{\n    checkCudaErrors(0);\n}\n'
            'extern "C" {\n__global__ void k(float *a) { a[threadIdx.x] = 0; }\n'
            'void other() { helper(); }\n}\n')
    view = device_view(code)
    assert view.count("\n") == code.count("\n")
    assert "extern \"C\" void" not in view and "scanHost" not in view
    assert 'extern "C" {' in view and "__global__ void k" in view and "helper" not in view


@needs_nvcc
def test_cublas_brings_half_and_bfloat16_as_the_real_header_does(tmp_path):
    """llm.c's common.h gets __nv_bfloat16 through cublas_v2.h only."""
    code = ('#include <cublas_v2.h>\n__global__ void k(__nv_bfloat16 *y, const float *x)\n'
            '{\n    y[threadIdx.x] = __float2bfloat16(x[threadIdx.x]);\n}\n')
    compiled = compile_kernel(write_pattern(tmp_path, code, "k"))
    assert "st.global.b16" in compiled.ptx or "st.global.u16" in compiled.ptx, compiled.ptx
