"""Host code, decided by the compiler: PyTorch-extension and samples-style files open through
`report` with nvcc (stand-in headers declare what is not installed) and with NVRTC (the host
functions it names are left out, every line kept)."""

import json
import os
import subprocess
import sys

import pytest
from compiled_helpers import needs_nvcc, write_pattern

from sectorviz.engine.compiled import compiler
from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.engine.compiled.hostcode import host_item_lines, host_items_left_out

NVRTC = compiler.find_nvrtc()
needs_nvrtc = pytest.mark.skipif(NVRTC is None, reason="the nvidia-cuda-nvrtc wheel is not "
                                                       "installed")
COMPILERS = [pytest.param("nvcc", marks=needs_nvcc), pytest.param("nvrtc", marks=needs_nvrtc)]

# a file that ends in binding macros: host functions written by a macro call at file scope,
# a module whose body is macro calls without `;`, and `half` brought by the torch header
BINDINGS = """\
#include <torch/extension.h>
#include <torch/types.h>

#define NAME_OF(f) #f
#define BIND(f) m.def(NAME_OF(f), &f, NAME_OF(f));
#define HALF_PAIR(v) (reinterpret_cast<half2 *>(&(v))[0])

__global__ void scale_f16x2_kernel(half *x, half *y, int n) {
    int i = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) {
        half2 v = HALF_PAIR(x[i]);
        HALF_PAIR(y[i]) = __hmul2(v, __float2half2_rn(2.0f));
    }
}

#define SCALE_BINDING(tag, th_type, element_type, per_thread)                 \\
  void scale_##tag(torch::Tensor x, torch::Tensor y) {                         \\
    if (x.options().dtype() != (th_type)) {                                    \\
      std::cout << "dtype: " << x.options() << std::endl;                      \\
      throw std::runtime_error("expected " #th_type);                          \\
    }                                                                          \\
    const int n = x.numel();                                                   \\
    dim3 block(256 / (per_thread));                                            \\
    dim3 grid((n + 255) / 256);                                                \\
    scale_##tag##_kernel<<<grid, block>>>(reinterpret_cast<element_type *>(x.data_ptr()), \\
                                 reinterpret_cast<element_type *>(y.data_ptr()), n); \\
  }

SCALE_BINDING(f16x2, torch::kHalf, half, 2)

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  BIND(scale_f16x2)
}
"""

# a template kernel launched from an AT_DISPATCH lambda on the current stream, tensor options
# and a tuple of tensors in host code, a pybind11 module with named arguments
DISPATCH = """\
#include <tuple>
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

template <typename scalar_t>
__global__ void shift(const scalar_t *__restrict__ x, scalar_t *__restrict__ y, int n, int by) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + by < n) y[i] = x[i + by];
}

torch::Tensor shift_cuda(torch::Tensor x, int64_t by) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    const at::cuda::OptionalCUDAGuard guard(device_of(x));
    auto y = torch::zeros_like(x);
    auto counts = torch::zeros({2}, torch::TensorOptions().dtype(torch::kInt32)
                                        .device(torch::kCUDA, 0));
    std::tuple<torch::Tensor, torch::Tensor> top = torch::max(x, 0);
    const int n = x.numel();
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    AT_DISPATCH_FLOATING_TYPES_AND_HALF(x.scalar_type(), "shift", ([&] {
        shift<scalar_t><<<(n + 255) / 256, 256, 0, stream>>>(
            x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n, static_cast<int>(by));
    }));
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}

namespace py = pybind11;
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("shift", &shift_cuda, "y[i] = x[i + by]", py::arg("x"), py::arg("by") = 1);
}
"""

# samples style: helper headers not installed, a host statement macro without `;` calling a
# runtime API that CUDA 13 removed
REMOVED_API = """\
#include <cstdio>
#include <helper_cuda.h>
#include <helper_functions.h>

#define SYNC_OR_DIE(what)                               \\
    if (cudaThreadSynchronize() != cudaSuccess) {       \\
        fprintf(stderr, "%s failed\\n", what);           \\
        exit(EXIT_FAILURE);                             \\
    }

__global__ void stride2(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[2 * i];
}

int main(int argc, char **argv) {
    findCudaDevice(argc, (const char **)argv);
    StopWatchInterface *timer = NULL;
    sdkCreateTimer(&timer);
    float *x, *y;
    checkCudaErrors(cudaMalloc(&x, 2048 * sizeof(float)));
    checkCudaErrors(cudaMalloc(&y, 1024 * sizeof(float)));
    stride2<<<4, 256>>>(x, y, 1024);
    SYNC_OR_DIE("stride2")
    getLastCudaError("stride2");
    cudaThreadExit();
    return 0;
}
"""


def _report(tmp_path, source: str, function: str, params: dict, arrays: dict, launch: dict,
            compiler_name: str) -> dict:
    """`sectorviz report --json` of a pattern for `source`, compiled by `compiler_name` ->
    the report, by instruction name."""
    (tmp_path / "kernel.cu").write_text(source)
    doc = {"format": "sectorviz.pattern/1", "params": params, "launch": launch,
           "arrays": arrays,
           "kernel": {"source": "kernel.cu", "function": function, "engine": "compiled"}}
    (tmp_path / "p.sectorviz.json").write_text(json.dumps(doc))
    env = {**os.environ, "SECTORVIZ_COMPILER": compiler_name,
           "SECTORVIZ_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "sectorviz", "report", "--json", "--quiet",
                           str(tmp_path / "p.sectorviz.json")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return {(i["op"], i["array"]): i for i in json.loads(done.stdout)["instructions"]}


@pytest.mark.parametrize("compiler_name", COMPILERS)
def test_a_file_ending_in_binding_macros_opens(tmp_path, compiler_name):
    found = _report(tmp_path, BINDINGS, "scale_f16x2_kernel", {"n": 1024},
                    {"x": {"dtype": "float16", "length": "n"},
                     "y": {"dtype": "float16", "length": "n"}},
                    {"grid": [2], "block": [256]}, compiler_name)
    # 512 threads, each 2 halves (4 B) at 4 i: a warp reads 128 B = 4 sectors, 16 warps
    for key, line in ((("load", "x"), 11), (("store", "y"), 12)):
        assert (found[key]["requests"], found[key]["sectors"]) == (16, 64)
        assert found[key]["line"] == line


@pytest.mark.parametrize("compiler_name", COMPILERS)
def test_a_kernel_launched_by_at_dispatch_opens(tmp_path, compiler_name):
    found = _report(tmp_path, DISPATCH, "shift<float>", {"n": 1024, "by": 32},
                    {"x": {"dtype": "float32", "length": "n"},
                     "y": {"dtype": "float32", "length": "n"}},
                    {"grid": [4], "block": [256]}, compiler_name)
    # i + 32 < 1024: 992 lanes, 31 whole warps; x[i + 32] starts 128 B on: 4 sectors a warp
    for key in (("load", "x"), ("store", "y")):
        assert (found[key]["active_lanes"], found[key]["sectors"]) == (992, 124)


@pytest.mark.parametrize("compiler_name", COMPILERS)
def test_a_removed_api_in_host_code_does_not_stop_the_kernel(tmp_path, compiler_name):
    found = _report(tmp_path, REMOVED_API, "stride2", {"n": 1024},
                    {"x": {"dtype": "float32", "length": 2048},
                     "y": {"dtype": "float32", "length": "n"}},
                    {"grid": [4], "block": [256]}, compiler_name)
    # x[2 i]: a warp spans 256 B = 8 sectors, 32 warps; y[i]: 4 sectors a warp
    assert found[("load", "x")]["sectors"] == 256
    assert found[("store", "y")]["sectors"] == 128


def test_the_lines_nvrtc_names_as_host_functions():
    log = ("k.cu(4): error: A function without execution space annotations "
           "(__host__/__device__/__global__) is considered a host function, and host "
           "functions are not allowed in JIT mode.\n  int main() {\n      ^\n\n"
           'k.cu(5): error: identifier "x" is undefined\n'
           "k.cu(7): error: A namespace scope variable without memory space annotations "
           "(__device__/__constant__/__shared__/__managed__) is considered a host variable\n"
           "other.h(9): error: A function without execution space annotations (...)\n")
    assert host_item_lines(log, "k.cu") == {4, 7}


def test_items_left_out_keep_every_line_and_column():
    text = ('#include <vector>\n'
            '__global__ void k(float *a) { a[threadIdx.x] = 0; }\n'
            'BIND_ALL(f32, torch::kFloat32, float, 1)\n'
            'MODULE(NAME, m) {\n  BIND(f32)\n  BIND(f16)\n}\n'
            'template <class T>\nvoid host(T v) { use(v); }\n'
            'extern "C" {\nvoid other() { helper(); }\n}\n'
            'static Table table(4);\n')
    left = host_items_left_out(text, {3, 4, 9, 11, 13})
    assert [len(line) for line in left.splitlines()] == [len(line) for line in
                                                          text.splitlines()]
    kept = [line for line in left.splitlines() if line.strip()]
    assert kept == ['#include <vector>', '__global__ void k(float *a) { a[threadIdx.x] = 0; }',
                    'extern "C" {', '}']


@needs_nvcc
def test_host_code_is_compiled_by_nvcc(tmp_path):
    compiled = compile_kernel(write_pattern(tmp_path, REMOVED_API, "stride2"))
    assert not compiled.host_code_left_out and compiled.params == ("x", "y", "n")
    assert compiled.files == (str(tmp_path / "kernel.cu"),)


@needs_nvcc
def test_host_code_that_does_not_compile_is_refused_at_its_place(tmp_path):
    code = REMOVED_API.replace("sdkCreateTimer(&timer);", "sdkCreateTimer(&timer); nope();")
    with pytest.raises(Exception, match=r'^kernel.cu line 19, column 29: identifier "nope" '
                                        r'is undefined$'):
        compile_kernel(write_pattern(tmp_path, code, "stride2"))


@needs_nvcc
def test_a_real_helper_header_in_the_root_wins_over_the_stand_in(tmp_path):
    helper = "#pragma once\n#define SCALE 3.0f\n"
    code = ('#include "helper_cuda.h"\n__global__ void k(float *y) '
            '{ y[threadIdx.x] = SCALE; }\n')
    compiled = compile_kernel(write_pattern(tmp_path, code, "k",
                                            files={"helper_cuda.h": helper}))
    assert str(tmp_path / "helper_cuda.h") in compiled.files
    assert "1077936128;" in compiled.ptx  # 3.0f stored as its bits


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
    handles and calls in host code; without the libraries the stand-ins declare them."""
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


@needs_nvcc
def test_cublas_brings_half_and_bfloat16_as_the_real_header_does(tmp_path):
    """llm.c's common.h gets __nv_bfloat16 through cublas_v2.h only."""
    code = ('#include <cublas_v2.h>\n__global__ void k(__nv_bfloat16 *y, const float *x)\n'
            '{\n    y[threadIdx.x] = __float2bfloat16(x[threadIdx.x]);\n}\n')
    compiled = compile_kernel(write_pattern(tmp_path, code, "k"))
    assert "st.global.b16" in compiled.ptx or "st.global.u16" in compiled.ptx, compiled.ptx


@needs_nvcc
def test_a_leetcuda_style_reference_gemm_through_cublas_compiles_with_the_stand_ins(tmp_path):
    """LeetCUDA's hgemm utils.h checks its kernels against cublasHgemm (and sgemv ones against
    cublasSgemv): the stand-in declares the half-precision GEMMs and the GEMVs too."""
    code = ('#include <cublas_v2.h>\n#include <cuda_fp16.h>\n'
            '__global__ void k(__half *y) { y[threadIdx.x] = __float2half(1.f); }\n'
            'void check(cublasHandle_t h, __half *a, float *f, double *d) {\n'
            '  __half one = __float2half(1.f); float s = 1; double t = 1;\n'
            '  cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 8, 8, 8, &one, a, 8, a, 8, &one, a, 8);\n'
            '  cublasHgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, 8, 8, 8, &one, a, 8, 64,'
            ' a, 8, 64, &one, a, 8, 64, 2);\n'
            '  cublasSgemv(h, CUBLAS_OP_N, 8, 8, &s, f, 8, f, 1, &s, f, 1);\n'
            '  cublasDgemv(h, CUBLAS_OP_T, 8, 8, &t, d, 8, d, 1, &t, d, 1);\n}\n')
    compiled = compile_kernel(write_pattern(tmp_path, code, "k"))
    assert not compiled.host_code_left_out
    assert "st.global" in compiled.ptx
