"""compile_kernel: the entry a pattern names, its parameters, the flags, the cache, and one
line for every compile error."""

import json
import os

import pytest
from compiled_helpers import SAXPY, needs_nvcc, write_pattern

import sectorviz.engine.readings  # noqa: F401  (registers the engines)
from sectorviz.engine.compiled import bounded, compiler, nvcc, ptxcache, sass
from sectorviz.engine.compiled import compile as compile_module
from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.model import PatternError, analyze, pattern_from_dict

pytestmark = needs_nvcc

TEMPLATE = """\
template <int BLOCK, typename T = float>
__global__ void __launch_bounds__(BLOCK)
scale(const T *__restrict__ x, T *__restrict__ y, int n)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) y[i] = 2 * x[i];
}

int main()
{
    float *x = nullptr, *y = nullptr;
    constexpr int block = 128;
    scale<block><<<8, block>>>(x, y, 1024);
    return 0;
}
"""


def test_a_plain_kernel(tmp_path):
    compiled = compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy"))
    assert compiled.entry == "_Z5saxpyPKfPffi"
    assert compiled.name == "saxpy(float const*, float*, float, int)"
    assert compiled.params == ("x", "y", "a", "n")
    assert compiled.flags == ("-O3", "-lineinfo", "-arch=sm_90")
    assert compiled.compiler == f"nvcc {compiler.find_compiler().version} for sm_90 at -O3"
    assert ".target sm_90" in compiled.ptx and "ld.global.f32" in compiled.ptx
    assert compiled.files == (str(tmp_path / "kernel.cu"),) and compiled.texts == (SAXPY,)
    assert compiled.source == str(tmp_path / "kernel.cu")


def test_a_plain_template_name_is_the_launched_instantiation(tmp_path):
    compiled = compile_kernel(write_pattern(tmp_path, TEMPLATE, "scale"))
    assert compiled.name == "void scale<128, float>(float const*, float*, int)"
    assert compiled.params == ("x", "y", "n")


@pytest.mark.parametrize("function, name", [
    ("scale<64, double>", "void scale<64, double>(double const*, double*, int)"),
    ("scale<64>", "void scale<64, float>(float const*, float*, int)"),
    ("void scale<128, float>(const float *, float *, int)",
     "void scale<128, float>(float const*, float*, int)"),
])
def test_an_instantiation_named_as_nsight_prints_it(tmp_path, function, name):
    assert compile_kernel(write_pattern(tmp_path, TEMPLATE, function)).name == name


def test_a_kernel_launched_as_two_instantiations_must_be_named(tmp_path):
    code = TEMPLATE.replace("    return 0;", "    scale<256><<<4, 256>>>(x, y, 1024);\n"
                                             "    return 0;")
    with pytest.raises(PatternError, match=r"holds 2 instantiations of 'scale' "
                                           r"\(scale<128, float>, scale<256, float>\); name one"):
        compile_kernel(write_pattern(tmp_path, code, "scale"))
    assert compile_kernel(write_pattern(tmp_path, code, "scale<256>")).name.startswith(
        "void scale<256, float>")


def test_an_unknown_function_suggests_the_nearest(tmp_path):
    with pytest.raises(PatternError, match="no __global__ function 'saxpi' .*'saxpy'"):
        compile_kernel(write_pattern(tmp_path, SAXPY, "saxpi"))


@pytest.mark.parametrize("function", ["k<1>; int x", "k<1>{}", 'k<"a">', "k\n", "#k"])
def test_function_names_that_are_not_names_are_refused(tmp_path, function):
    with pytest.raises(PatternError, match="cannot read the function name"):
        compile_kernel(write_pattern(tmp_path, SAXPY, function))


def test_inline_code_is_named_kernel_code(tmp_path):
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"dtype": "float32", "length": 32}},
           "kernel": {"code": '#include "half.h"\n__global__ void k(float *a) '
                              '{ a[threadIdx.x] = HALF; }\n', "function": "k"}}
    (tmp_path / "half.h").write_text("#define HALF 0.5f\n")
    compiled = compile_kernel(pattern_from_dict(doc, tmp_path))
    assert compiled.source == "kernel.code" and '.file\t1 "kernel.code"' in compiled.ptx
    assert compiled.files == ("kernel.code", str(tmp_path / "half.h"))
    assert compiled.texts == (doc["kernel"]["code"], "#define HALF 0.5f\n")
    assert compiled.params == ("a",)
    doc["kernel"]["code"] = "__global__ void k(float *a) { a[0] = nothing; }\n"
    with pytest.raises(PatternError) as err:
        compile_kernel(pattern_from_dict(doc, tmp_path))
    assert str(err.value) == ('kernel.code line 1, column 38: identifier "nothing" is '
                              'undefined')


def test_flags_and_architecture_reach_the_compiler(tmp_path):
    code = "__global__ void k(float *y) { y[threadIdx.x] = VALUE; }\n"
    compiled = compile_kernel(write_pattern(tmp_path, code, "k", flags=["-DVALUE=3.0f"],
                                            arch="sm_80"))
    assert compiled.arch == "sm_80" and ".target sm_80" in compiled.ptx
    assert "1077936128;" in compiled.ptx  # 3.0f
    assert compile_kernel(write_pattern(tmp_path, code, "k", flags=["-DVALUE=3.0f"]),
                          arch="sm_89").arch == "sm_89"


def test_the_flag_whitelist_applies_to_patterns(tmp_path):
    with pytest.raises(PatternError, match=r"kernel.flags\[0\]: '-ccbin=/bin/sh' is not "):
        compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy", flags=["-ccbin=/bin/sh"]))


def _nvcc_runs(monkeypatch) -> list:
    runs = []
    real = nvcc.run_bounded

    def counting(args, *a, **kw):
        runs.append(args)
        return real(args, *a, **kw)
    monkeypatch.setattr(nvcc, "run_bounded", counting)
    return runs


def test_ptx_is_cached_by_content(tmp_path, monkeypatch, ptx_cache):
    files = {"scale.h": "#define SCALE 2.0f\n"}
    code = '#include "scale.h"\n__global__ void k(float *y) { y[threadIdx.x] = SCALE; }\n'
    runs = _nvcc_runs(monkeypatch)
    first = compile_kernel(write_pattern(tmp_path, code, "k", files=files))
    assert len(runs) == 2 and len(list(ptx_cache.iterdir())) == 1  # nvcc -M, nvcc -ptx
    again = compile_kernel(write_pattern(tmp_path, code, "k", files=files))
    assert again == first and len(runs) == 2
    (tmp_path / "scale.h").write_text("#define SCALE 4.0f\n")  # an include changed
    changed = compile_kernel(write_pattern(tmp_path, code, "k"))
    assert len(runs) == 4 and changed.ptx != first.ptx
    compile_kernel(write_pattern(tmp_path, code, "k", flags=["-DUNUSED"]))  # flags changed
    assert len(runs) == 6
    for entry in ptx_cache.iterdir():  # a damaged entry is a miss, not an error
        entry.write_text("{not json")
    assert compile_kernel(write_pattern(tmp_path, code, "k")) == changed


def test_the_cache_keeps_the_most_recently_used_entries(tmp_path, monkeypatch, ptx_cache):
    monkeypatch.setattr(ptxcache, "MAX_ENTRIES", 2)
    kernels = [f"__global__ void k(float *y) {{ y[threadIdx.x] = {v}.0f; }}\n"
               for v in range(3)]
    for code in kernels[:2]:
        compile_kernel(write_pattern(tmp_path, code, "k"))
    first = sorted(ptx_cache.iterdir(), key=lambda p: p.stat().st_mtime)[0]
    os.utime(first, (1, 1))  # long unused
    compile_kernel(write_pattern(tmp_path, kernels[2], "k"))
    assert len(list(ptx_cache.iterdir())) == 2 and not first.exists()


def test_a_cache_entry_is_plain_json_with_the_files_it_depends_on(tmp_path, ptx_cache):
    compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy"))
    entry = json.loads(next(ptx_cache.iterdir()).read_text())
    assert list(entry["files"]) == [str(tmp_path / "kernel.cu")]


@pytest.mark.parametrize("code, files, line", [
    ("__global__ void k(float *a)\n{\n    a[0] = 1.0f +;\n}\n", {},
     "kernel.cu line 3, column 18: expected an expression"),
    ('#include "missing.h"\n__global__ void k(float *a) {}\n', {},
     "kernel.cu line 1, column 10: missing.h: No such file or directory"),
    ('#include "inc/bad.h"\n__global__ void k(float *a) { a[0] = bad(); }\n',
     {"inc/bad.h": "// a helper\n__device__ float bad() { return undefined_name; }\n"},
     'inc/bad.h line 2, column 33: identifier "undefined_name" is undefined'),
])
def test_a_compile_error_is_one_line_at_the_source(tmp_path, code, files, line):
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(tmp_path, code, "k", files=files))
    assert str(err.value) == line


def test_a_bad_instantiation_is_an_error_at_the_function(tmp_path):
    with pytest.raises(PatternError, match="^kernel.function line 2, column .*: "):
        compile_kernel(write_pattern(tmp_path, TEMPLATE, "scale<float>"))


def test_a_template_explosion_ends_in_one_line(tmp_path):
    code = ("template <int N> struct Fib { static constexpr long v = Fib<N - 1>::v + "
            "Fib<N - 2>::v; };\ntemplate <> struct Fib<1> { static constexpr long v = 1; };\n"
            "template <> struct Fib<0> { static constexpr long v = 0; };\n"
            "__global__ void k(long *a) { a[0] = Fib<100000>::v; }\n")
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(tmp_path, code, "k"))
    assert str(err.value).startswith("kernel.cu line 1, column 57: excessive recursion at "
                                     "instantiation of member")


def test_a_compile_past_its_time_ends_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(bounded, "COMPILE_SECONDS", 0.01)
    with pytest.raises(PatternError, match=r"^kernel: the compile took over 0.01 s and was "
                                           r"stopped \(a template"):
        compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy"))


def test_a_compile_past_its_memory_ends_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(bounded, "COMPILE_MEMORY_BYTES", 64 * 2**20)
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy"))
    assert str(err.value) == ("kernel: the compiler crashed or ran out of its memory limit "
                              "(0.0625 GiB per process; a template or macro expansion that "
                              "does not end?)")


def test_no_compiler_is_one_line_saying_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_module, "find_compiler", lambda: None)
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy"))
    assert str(err.value) == ("kernel: no CUDA compiler found (nvcc on PATH, under CUDA_HOME "
                              "or CUDA_PATH, or NVRTC's wheels): install nvcc (NVIDIA's CUDA "
                              "toolkit) or NVRTC (pip install nvidia-cuda-nvrtc "
                              "nvidia-cuda-runtime nvidia-cuda-cccl)")


def test_the_compiler_is_found_under_cuda_home(tmp_path, monkeypatch):
    found = compiler.find_compiler()
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "none"))
    (tmp_path / "toolkit" / "bin").mkdir(parents=True)
    (tmp_path / "toolkit" / "bin" / "nvcc").symlink_to(found.path)
    monkeypatch.setenv("CUDA_PATH", str(tmp_path / "toolkit"))
    monkeypatch.setattr(compiler, "find_nvrtc", lambda: None)
    compiler.compiler_named.cache_clear()
    try:
        assert compiler.find_compiler() == compiler.Toolchain(
            str(tmp_path / "toolkit" / "bin" / "nvcc"), found.version)
        monkeypatch.delenv("CUDA_PATH")
        compiler.compiler_named.cache_clear()
        assert compiler.find_compiler() is None
    finally:
        compiler.compiler_named.cache_clear()


@needs_nvcc
def test_an_error_while_running_an_included_line_names_that_header(tmp_path, monkeypatch):
    """The branch on `m`, a parameter the pattern does not give, lies in inc/put.h line 3
    (inlined into the kernel): the line names the header, not the pattern file."""
    monkeypatch.setenv("SECTORVIZ_ENGINE", "compiled")
    header = ("__device__ void put(float *y, int i, int m)\n{\n    if (i < m) y[i] = 0;\n}\n")
    code = ('#include "inc/put.h"\n__global__ void k(float *y, int m)\n'
            '{\n    put(y, threadIdx.x, m);\n}\n')
    pattern = write_pattern(tmp_path, code, "k", files={"inc/put.h": header})
    with pytest.raises(PatternError) as err:
        analyze(pattern)
    assert err.value.file == str(tmp_path / "inc" / "put.h") and err.value.place == "line 3"
    assert "depends on the kernel parameter 'm'" in err.value.message


HAS_OPT = ('#if __has_include("opt.h")\n#define SCALE 2.0f\n#else\n#define SCALE 1.0f\n#endif\n'
           '__global__ void k(float *y) { y[threadIdx.x] = SCALE; }\n')


def test_a_header_created_since_the_compile_is_a_miss(tmp_path):
    """Issue 28, item 5: a cached answer of __has_include is checked again."""
    before = compile_kernel(write_pattern(tmp_path, HAS_OPT, "k"))
    assert "1065353216;" in before.ptx  # 1.0f
    (tmp_path / "opt.h").write_text("\n")
    after = compile_kernel(write_pattern(tmp_path, HAS_OPT, "k"))
    assert "1073741824;" in after.ptx  # 2.0f


def test_an_entry_whose_ptx_was_replaced_is_a_miss(tmp_path, ptx_cache):
    first = compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy"))
    (entry,) = ptx_cache.iterdir()
    doc = json.loads(entry.read_text())
    doc["ptx"] = doc["ptx"].replace("ld.global", "ld.global.nc")
    entry.write_text(json.dumps(doc))
    assert compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy")).ptx == first.ptx


@pytest.mark.parametrize("damage", [
    lambda d: [d], lambda d: {**d, "files": 3}, lambda d: {**d, "params": [1]},
    lambda d: {**d, "lookups": {"/x": "yes"}}, lambda d: {**d, "sass": "x"},
    lambda d: {k: v for k, v in d.items() if k != "entry"}, lambda d: {**d, "ptx": None},
    lambda d: {**d, "files": {"/nonexistent/x.h": None}, "lookups": {"/": True}}])
def test_a_malformed_entry_is_a_miss_never_an_error(tmp_path, ptx_cache, damage):
    first = compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy"))
    (entry,) = ptx_cache.iterdir()
    entry.write_text(json.dumps(damage(json.loads(entry.read_text()))))
    assert compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy")) == first


def test_entries_are_private(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(folder))
    compile_kernel(write_pattern(tmp_path, SAXPY, "saxpy"))
    (entry,) = folder.iterdir()
    assert folder.stat().st_mode & 0o777 == 0o700 and entry.stat().st_mode & 0o777 == 0o600


def test_an_entry_made_without_the_assembler_gets_its_sass_once_it_is_found(
        tmp_path, ptx_cache, monkeypatch):
    """A compile cached where ptxas or nvdisasm was missing keeps a null "sass"; the next
    run that finds them adds it to that same entry (this run read it: it is still ours to
    rewrite), and later runs assemble nothing."""
    if sass.assembler_tools(compiler.find_compiler()) is None:
        pytest.skip("no assembler and nvdisasm here")
    pattern = write_pattern(tmp_path, SAXPY, "saxpy")
    with monkeypatch.context() as without:
        without.setattr(sass, "assembler_tools", lambda toolchain: None)
        assert compile_kernel(pattern).sass is None
    (entry,) = ptx_cache.iterdir()
    assert json.loads(entry.read_text())["sass"] is None
    assert compile_kernel(pattern).sass is not None
    assert json.loads(entry.read_text())["sass"] is not None
    monkeypatch.setattr(compile_module, "machine_code", lambda *a: 1 / 0)
    assert compile_kernel(pattern).sass is not None


def test_a_hit_touches_its_entry_at_most_daily(tmp_path, ptx_cache):
    """A hit marks an entry used only when it was last used over TOUCH_AFTER_S ago: the
    entry is an input of what was computed from it, and a touch at every hit would make
    another process's results (the app's workers) stale."""
    pattern = write_pattern(tmp_path, SAXPY, "saxpy")
    compile_kernel(pattern)
    entry = next(ptx_cache.iterdir())
    recent = entry.stat().st_mtime_ns - 3600 * 10**9  # used an hour ago
    os.utime(entry, ns=(recent, recent))
    compile_kernel(pattern)
    assert entry.stat().st_mtime_ns == recent
    os.utime(entry, (1, 1))  # long unused
    compile_kernel(pattern)
    assert entry.stat().st_mtime > ptxcache.TOUCH_AFTER_S
