"""The NVRTC route: NVIDIA's runtime compiler from its wheels, where there is no nvcc."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from compiled_helpers import SAXPY, needs_nvcc, write_pattern

from sectorviz.engine.compiled import bounded, compiler, nvrtc
from sectorviz.engine.compiled import compile as compile_module
from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.model import PatternError, analyze, load_pattern, pattern_from_dict
from sectorviz.model.memo import MEMO
from sectorviz.paths import examples_dir

NVRTC = compiler.find_nvrtc()
pytestmark = pytest.mark.skipif(NVRTC is None, reason="the nvidia-cuda-nvrtc wheel is not "
                                                      "installed")

TEMPLATE = """\
#include <cstdio>
#include <cstdint>
#include <vector>

template <int BLOCK, typename T = float>
__global__ void scale(const T *__restrict__ x, T *__restrict__ y, std::uint32_t n)
{
    uint32_t i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) y[i] = 2 * x[i];
}

int main()
{
    std::vector<float> host(1024);
    float *x, *y;
    cudaMalloc(&x, 4096);
    cudaMalloc(&y, 4096);
    scale<128><<<8, 128>>>(x, y, 1024);
    printf("%f\\n", host[0]);
    return 0;
}
"""


@pytest.fixture(autouse=True)
def nvrtc_only(monkeypatch):
    """compile_kernel finds NVRTC, as on a machine without nvcc."""
    monkeypatch.setattr(compile_module, "find_compiler", lambda: NVRTC)


def test_a_plain_kernel(tmp_path):
    compiled = compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy"))
    assert compiled.compiler == f"NVRTC {NVRTC.version} for sm_90 at -O3"
    assert compiled.entry == "_Z5saxpyPKfPffi" and compiled.params == ("x", "y", "a", "n")
    assert ".target sm_90" in compiled.ptx and "ld.global.f32" in compiled.ptx
    assert f'.file\t1 "{tmp_path / "kernel.cu"}"' in compiled.ptx
    assert compiled.files == (str(tmp_path / "kernel.cu"),)


def test_a_template_is_named_by_its_instantiation(tmp_path):
    compiled = compile_kernel(write_pattern(tmp_path, TEMPLATE, "scale<64>"))
    assert compiled.entry == "_Z5scaleILi64EfEvPKT0_PS0_j"
    assert compiled.host_code_left_out and compiled.params == ("x", "y", "n")
    with pytest.raises(PatternError, match="NVRTC compiles no host launch, so a template "
                                           "kernel is named by its instantiation"):
        compile_kernel(write_pattern(tmp_path, TEMPLATE, "scale"))


def test_includes_of_the_root_are_read_and_outside_ones_refused(tmp_path):
    code = '#include "inc/value.h"\n__global__ void k(float *y) { y[threadIdx.x] = VALUE; }\n'
    files = {"inc/value.h": '#include "more.h"\n', "inc/more.h": "#define VALUE 3.0f\n"}
    compiled = compile_kernel(write_pattern(tmp_path / "p", code, "k", files=files))
    assert compiled.files == (str(tmp_path / "p" / "kernel.cu"),
                              str(tmp_path / "p" / "inc" / "value.h"),
                              str(tmp_path / "p" / "inc" / "more.h"))
    assert "1077936128;" in compiled.ptx  # 3.0f
    (tmp_path / "secret.h").write_text("#error SECRET\n")
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(tmp_path / "p", '#include "../secret.h"\n' + SAXPY,
                                     "saxpy"))
    assert str(err.value) == ("kernel.cu line 1: an #include of '../secret.h', outside "
                              "the pattern's root; refused")
    with pytest.raises(PatternError, match=r"^kernel.cu line 2: an #include of a file a "
                                           r"macro names"):
        compile_kernel(write_pattern(tmp_path / "p", '#define H "x.h"\n#include H\n' + SAXPY,
                                     "saxpy"))


def test_a_missing_include_that_could_leave_the_root_is_refused(tmp_path):
    code = '#include "inc/a.h"\n' + SAXPY
    files = {"inc/a.h": '#include "../../x.h"\n'}
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(tmp_path / "p", code, "saxpy", files=files))
    assert str(err.value) == ("a.h line 1: an #include of '../../x.h', outside the pattern's "
                              "root; refused")


def test_inline_code_is_named_kernel_code(tmp_path):
    (tmp_path / "half.h").write_text("#define HALF 0.5f\n")
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"dtype": "float32", "length": 32}},
           "kernel": {"code": '#include "half.h"\n__global__ void k(float *a) '
                              '{ a[threadIdx.x] = HALF; }\n', "function": "k"}}
    compiled = compile_kernel(pattern_from_dict(doc, tmp_path))
    assert compiled.files == ("kernel.code", str(tmp_path / "half.h"))
    assert '.file\t1 "kernel.code"' in compiled.ptx


def test_a_compile_error_is_one_line_at_the_source(tmp_path):
    code = "__global__ void k(float *a)\n{\n    a[0] = missing;\n}\n"
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(tmp_path, code, "k"))
    assert str(err.value) == 'kernel.cu line 3, column 12: identifier "missing" is undefined'


def test_the_compiler_runs_isolated_from_the_pattern_folder(tmp_path):
    compiled = compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy", files={
        "json.py": "raise SystemExit('imported from the pattern folder')\n",
        "ctypes.py": "raise SystemExit('imported from the pattern folder')\n"}))
    assert compiled.params == ("x", "y", "a", "n")


def test_a_compile_past_its_time_ends_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(bounded, "COMPILE_SECONDS", 0.01)
    with pytest.raises(PatternError, match=r"^kernel: the compile took over 0.01 s"):
        compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy"))


def test_only_the_wheels_are_needed(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvcc, no c++filt, no host compiler
    assert compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy")).params == \
        ("x", "y", "a", "n")


@needs_nvcc
def test_nvrtc_and_nvcc_give_the_same_counts(monkeypatch):
    doc = load_pattern(examples_dir() / "matmul-naive-cuda.sectorviz.json").to_dict()
    doc["kernel"]["engine"] = "compiled"
    compiled = pattern_from_dict(doc, examples_dir())
    by_nvrtc = analyze(compiled).totals
    MEMO.clear()
    monkeypatch.setattr(compile_module, "find_compiler", compiler.find_compiler)
    by_nvcc = analyze(compiled).totals
    MEMO.clear()
    assert (by_nvrtc.requests, by_nvrtc.sectors) == (by_nvcc.requests, by_nvcc.sectors)
    assert by_nvrtc.sectors > 0


def test_sectorviz_compiler_names_the_compiler_looked_for(monkeypatch):
    compiler.compiler_named.cache_clear()
    monkeypatch.setenv(compiler.COMPILER_VAR, "nvrtc")
    try:
        assert compiler.find_compiler() == NVRTC
        monkeypatch.setenv(compiler.COMPILER_VAR, "nvcc")
        found = compiler.find_compiler()
        assert found is None or found.kind == "nvcc"
    finally:
        compiler.compiler_named.cache_clear()


def test_the_packaged_app_runs_the_child_compile_from_its_own_executable(monkeypatch):
    monkeypatch.setattr(nvrtc.sys, "frozen", True, raising=False)
    assert nvrtc.child_command() == [nvrtc.sys.executable, nvrtc.CHILD_ARG]
    monkeypatch.setattr(nvrtc.sys, "frozen", False)
    assert nvrtc.child_command() == [nvrtc.sys.executable, "-I", str(nvrtc.CHILD)]


def test_the_bundle_entry_point_runs_one_nvrtc_compile(tmp_path):
    """packaging/entry.py --nvrtc-child (what the frozen app runs) answers a request."""
    root = Path(__file__).resolve().parents[3]
    request = {"library": NVRTC.path, "source": SAXPY, "name": "kernel.cu",
               "options": ["-arch=compute_90"] + [f"-I{d}" for d in NVRTC.include_dirs],
               "names": []}
    done = subprocess.run([sys.executable, str(root / "packaging" / "entry.py"),
                           "--nvrtc-child"], input=json.dumps(request), text=True,
                          capture_output=True, cwd=tmp_path, timeout=120,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    result = json.loads(done.stdout)
    assert done.returncode == 0 and result["ok"], result["log"]
    assert ".entry _Z5saxpyPKfPffi" in result["ptx"]


def test_macros_reach_nvrtc_in_the_generated_header(tmp_path):
    """The same header as nvcc's: a value with spaces is the macro, nothing of it an
    option."""
    code = SAXPY.replace("a * x[i]", "TWO * x[i]")
    compiled = compile_kernel(write_pattern(tmp_path, code, "saxpy",
                                            flags=["-DTWO=(1.0f + 1.0f)", "-DA=1 -E"]))
    assert "0f40000000" in compiled.ptx  # 2.0f
    with pytest.raises(PatternError, match=r"^kernel.cu line 4, column \d+: "):
        compile_kernel(write_pattern(tmp_path, code, "saxpy", flags=["-DTWO=(1.0f + *"]))
