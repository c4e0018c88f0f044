"""Anything outside the subset, or wrong for the launch, is an error naming line and column."""

from __future__ import annotations

import json

import pytest
from cuda_helpers import kernel_pattern, run

from sectorviz.cli import main
from sectorviz.model import PatternError, analyze
from sectorviz.model.budget import Budget


def error_of(code: str, **kw) -> str:
    with pytest.raises(PatternError) as info:
        run(code, **kw)
    return str(info.value)


@pytest.mark.parametrize("body, expected", [
    ("a[threadIdx.x + jj] = 0;", "line 2, column 25: unknown name 'jj'"),
    ("int idx = 1; a[idy] = 0;", "unknown name 'idy' (did you mean 'idx'?)"),
    ("goto end; end: a[0] = 0;", "line 2, column 9: 'goto statement' is outside the subset"),
    ("asm(\"trap;\");", "line 2, column 9: inline PTX (asm) is outside the subset"),
    ("k<<<1, 32>>>(a);", "line 2, column 9: a kernel launch inside a kernel (k<<<...>>>, "
                         "dynamic parallelism) is outside the subset"),
    ("float v = tex1Dfetch(t, 0);", "line 2, column 19: tex1Dfetch (texture fetches) is outside"),
    ("a[(int)atomicAdd(&a[0], 1.0f)] = 0;", "line 2, column 16: an address depends on the "
                                            "value atomicAdd returns (line 2)"),
    ("float r[4]; a[(int)r[1]] = 0;", "line 2, column 28: an address depends on an element of "
                                      "'r' that was never set"),
    ("a[(int)clock()] = 0;", "line 2, column 16: an address depends on clock() (line 2)"),
    ("float r[4]; r[threadIdx.x] = 0; a[0] = 0;",
     "line 2, column 21: element index 4 of 'r' outside [0, 4) at warp 0 lane 4"),
    ("__shared__ float s[4]; s[0] = 1; a[(int)atomicMax(&s[1], 2.0f)] = 0;",
     "an address depends on the value atomicMax returns"),
    ("extern __shared__ float s[]; s[0] = 1;", "line 2, column 33: extern __shared__ memory "
                                                "needs its size"),
    ("a[threadIdx.x + 1000] = 0;", "line 2, column 9: element index 1024 of 'a' outside "
                                   "[0, 1024) at warp 0 lane 24"),
    ("a[-1] = 0;", "element index -1 of 'a' outside [0, 1024) at warp 0 lane 0"),
    ("int z = threadIdx.x - 5; a[10 / z] = 0;", "line 2, column 36: division by zero in '/' "
                                               "at warp 0 lane 5"),
    ("a[(int)a[threadIdx.x]] = 0;", "line 2, column 16: an address depends on data loaded by "
                                    "'a[threadIdx.x]' (line 2); give 'a' values"),
    ("if (a[0] > 0) a[1] = 0;", "line 2, column 13: a branch depends on data loaded by 'a[0]'"),
    ("__shared__ bool last; last = threadIdx.x == 0; if (last) a[1] = 0;",
     "a branch depends on data read from shared memory by 'last' (line 2); what a kernel "
     "stores there is not tracked"),
    ("int q; a[q] = 0;", "line 2, column 18: 'q' is read before it is set"),
    ("a[1 << 40] = 0;", "shift count outside [0, 32)"),
    ("a[threadIdx.x] = 0 @ 1;", "line 2, column 28: syntax error"),
])
def test_errors_name_line_and_column(body, expected):
    message = error_of(f"__global__ void k(float* a) {{\n        {body}\n}}")
    assert expected in message


def test_syntax_error_elsewhere_in_the_file_is_skipped():
    a, _ = run("""#include <x>
    __global__ void k(float* a) { a[threadIdx.x] = 0; }
    int main() { k<<<1, 32>>>(; return 0 }""")
    assert a.totals.sectors == 4


def test_kernel_choice_errors():
    code = "__global__ void vecAdd(float* a) { a[0] = 0; }\n" \
           "template <int N> __global__ void tk(float* a) { a[N] = 0; }"
    assert "no __global__ function 'vecAd' in the source (kernels: tk, vecAdd) (did you mean " \
           "'vecAdd'?)" in error_of(code, function="vecAd")
    assert "kernel.function: 'tk' is a template kernel that the file does not launch; name " \
           "the instantiation, e.g. \"tk<...>\"" in error_of(code, function="tk")


def test_arguments_must_match_the_pattern():
    code = "__global__ void k(float* a, int n) { a[n] = 0; }"
    assert "column 29: the kernel parameter 'n' needs a value" in error_of(code)
    assert "the pointer parameter 'a' needs an entry in the pattern's arrays" in error_of(
        code, params={"n": 1}, arrays={"b": {"dtype": "float32", "length": 4}})
    assert "arrays.a has dtype float64 (8 bytes) but the parameter points to float (4 bytes)" \
        in error_of(code, params={"n": 1}, arrays={"a": {"dtype": "float64", "length": 4}})
    assert "the pattern's array 'b' is not a pointer parameter of 'k'" in error_of(
        code, params={"n": 1}, arrays={"a": {"dtype": "float32", "length": 4},
                                       "b": {"dtype": "float32", "length": 4}})
    assert "params.n = 4294967296 does not fit int" in error_of(code, params={"n": 2**32})


def test_pointer_into_global_and_shared_memory_is_outside_the_subset():
    code = """__global__ void k(float* a) {
        __shared__ float s[32];
        float* p = a;
        if (threadIdx.x > 3) p = s;
        p[0] = 1;
    }"""
    assert "line 4, column 30: a pointer into 'a' cannot also point into 's'" in error_of(code)


def test_a_loop_past_the_work_budget_is_a_clear_error():
    p = kernel_pattern("""__global__ void k(float* a) {
        int i = 0;
        while (i < 10 || threadIdx.x == 3) i++;
        a[i] = 0;
    }""")
    with pytest.raises(PatternError, match="line 3, column 9: this loop passes the work budget "
                                           "of 1,000,000 units"):
        analyze(p, budget=Budget(work=10**6))


def test_recursion_is_outside_the_subset():
    message = error_of("""__device__ int f(int x) { return x ? f(x - 1) : 0; }
    __global__ void k(float* a) { a[f(3)] = 0; }""")
    assert "recursive call of 'f'" in message


def test_cli_reports_a_kernel_error_in_one_line(tmp_path, capsys):
    (tmp_path / "k.cu").write_text("__global__ void k(float* a) {\n  a[threadIdx.x * 64] = 0;\n}\n")
    doc = json.loads(kernel_pattern("").source)
    doc["kernel"] = {"source": "k.cu", "function": "k"}
    path = tmp_path / "k.sectorviz.json"
    path.write_text(json.dumps(doc))
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 2, column 3: element index 1024 of 'a'" in err[0]
    doc["kernel"]["source"] = "missing.cu"
    path.write_text(json.dumps(doc))
    assert main(["report", str(path)]) == 2
    assert "kernel.source: cannot read missing.cu" in capsys.readouterr().err
