"""A pattern's own PTX (`"kernel": {"ptx": ...}`): run by the PTX engine with no compiler, its
file and its sources read only inside the pattern's root, its numbers those of the .cu
compiled by nvcc; where there is no compiler a .cu pattern says what to install."""

import json
from pathlib import Path

import pytest
from compiled_helpers import needs_nvcc

from sectorviz.cli import main
from sectorviz.engine.compiled import compile as compile_module
from sectorviz.engine.compiled import compiler, ptxfile
from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.engine.kernel_text import kernel_source
from sectorviz.model import PatternError, load_pattern
from sectorviz.model import files as files_module
from sectorviz.model.analysis import analyze
from sectorviz.model.frontend import kernel_for, read_as
from sectorviz.model.memo import MEMO

VADD = """\
__global__ void vecAdd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""
# what `nvcc -ptx -lineinfo -arch=sm_90` (13.0) emits for VADD, its source named SOURCE
VADD_PTX = """\
.version 9.0
.target sm_90
.address_size 64

.visible .entry _Z6vecAddPKfS0_Pfi(
    .param .u64 _Z6vecAddPKfS0_Pfi_param_0,
    .param .u64 _Z6vecAddPKfS0_Pfi_param_1,
    .param .u64 _Z6vecAddPKfS0_Pfi_param_2,
    .param .u32 _Z6vecAddPKfS0_Pfi_param_3
)
{
    .reg .pred %p<2>;
    .reg .f32 %f<4>;
    .reg .b32 %r<6>;
    .reg .b64 %rd<11>;
    .loc 1 1 0
    ld.param.u64 %rd1, [_Z6vecAddPKfS0_Pfi_param_0];
    ld.param.u64 %rd2, [_Z6vecAddPKfS0_Pfi_param_1];
    ld.param.u64 %rd3, [_Z6vecAddPKfS0_Pfi_param_2];
    ld.param.u32 %r2, [_Z6vecAddPKfS0_Pfi_param_3];
    .loc 1 3 5
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %ntid.x;
    mov.u32 %r5, %tid.x;
    mad.lo.s32 %r1, %r3, %r4, %r5;
    .loc 1 4 5
    setp.ge.s32 %p1, %r1, %r2;
    @%p1 bra $L__BB0_2;
    cvta.to.global.u64 %rd4, %rd1;
    mul.wide.s32 %rd5, %r1, 4;
    add.s64 %rd6, %rd4, %rd5;
    cvta.to.global.u64 %rd7, %rd2;
    add.s64 %rd8, %rd7, %rd5;
    ld.global.f32 %f1, [%rd8];
    ld.global.f32 %f2, [%rd6];
    add.f32 %f3, %f2, %f1;
    cvta.to.global.u64 %rd9, %rd3;
    add.s64 %rd10, %rd9, %rd5;
    st.global.f32 [%rd10], %f3;
$L__BB0_2:
    .loc 1 5 1
    ret;
}
    .file 1 "SOURCE"
"""
N = 4096  # 128 warps


@pytest.fixture
def no_compiler(monkeypatch):
    """No nvcc and no NVRTC, wherever sectorviz looks for one."""
    for module in (compiler, compile_module, ptxfile):
        monkeypatch.setattr(module, "find_compiler", lambda: None)


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    """The path of every file sectorviz opens through files.read_bytes, in order."""
    opened: list[str] = []
    real = files_module.read_bytes

    def recording(path, *args, **kwargs):
        opened.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files_module, "read_bytes", recording)
    return opened


def write_ptx_pattern(folder: Path, ptx: str, arrays: tuple[str, ...] = ("a", "b", "c"),
                      **kernel) -> Path:
    """A pattern in `folder` running vecAdd from `ptx` (written as vadd.ptx) over N floats,
    its arrays named `arrays` -> the pattern file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vadd.ptx").write_text(ptx)
    doc = {"format": "sectorviz.pattern/1", "params": {"n": N},
           "launch": {"grid": [N // 256], "block": [256]},
           "arrays": {name: {"dtype": "float32", "length": "n"} for name in arrays},
           "kernel": {"ptx": "vadd.ptx", "function": "vecAdd", **kernel}}
    path = folder / "p.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


def vadd_beside(folder: Path) -> str:
    """VADD written as vadd.cu in `folder`, and VADD_PTX naming it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vadd.cu").write_text(VADD)
    return VADD_PTX.replace("SOURCE", str(folder / "vadd.cu"))


def counts(path: Path) -> list[tuple[str, str, int, int]]:
    """(name, op, requests, sectors) of each global instruction of the pattern at `path`."""
    return [(s.name, s.op, s.requests, s.sectors) for s in analyze(load_pattern(path))
            .instructions]


def test_a_ptx_file_runs_with_no_compiler_its_lines_from_its_source(tmp_path, no_compiler):
    """12 sectors per warp, 4 + 4 + 4; the parameter names, the line and its text from
    vadd.cu, which lies beside the pattern."""
    path = write_ptx_pattern(tmp_path, vadd_beside(tmp_path), level="ptx")
    assert counts(path) == [("line 4: b[i], ld.global.f32", "load", 128, 512),
                            ("line 4: a[i], ld.global.f32", "load", 128, 512),
                            ("line 4: c[i], st.global.f32", "store", 128, 512)]
    assert ptxfile.ptx_kernel(load_pattern(path)).params == ("a", "b", "c", "n")
    assert kernel_source(load_pattern(path)) == VADD  # what the app's Kernel tab shows


def test_a_ptx_file_with_no_compiler_is_counted_in_sass_by_nvjitlink(tmp_path, no_compiler):
    """Where NVIDIA's nvJitLink wheel is installed a PTX file is assembled without a toolkit:
    the same 12 sectors per warp, each instruction named with its SASS opcode."""
    from sectorviz.engine.compiled.sass import find_jitlink
    if find_jitlink() is None:
        pytest.skip("no nvJitLink wheel")
    found = counts(write_ptx_pattern(tmp_path, vadd_beside(tmp_path)))
    assert [(name, sectors) for name, _, _, sectors in found] == [
        ("line 4: b[i], LDG.E", 512), ("line 4: a[i], LDG.E", 512), ("line 4: c[i], STG.E", 512)]


def test_the_function_may_be_named_as_the_ptx_spells_it(tmp_path, no_compiler):
    path = write_ptx_pattern(tmp_path, vadd_beside(tmp_path), function="_Z6vecAddPKfS0_Pfi")
    assert sum(sectors for *_, sectors in counts(path)) == 12 * N // 32


@needs_nvcc
def test_a_ptx_file_counts_as_its_cu_compiled_by_nvcc(tmp_path):
    """The PTX nvcc emits for vector-add.cu, given as a file: the same instructions and
    numbers as the .cu pattern on the compiled engine."""
    cu = write_ptx_pattern(tmp_path / "cu", "")
    (tmp_path / "cu" / "vadd.cu").write_text(VADD)
    doc = json.loads(cu.read_text())
    doc["kernel"] = {"source": "vadd.cu", "function": "vecAdd", "engine": "compiled"}
    cu.write_text(json.dumps(doc))
    ptx = compile_kernel(load_pattern(cu)).ptx
    assert counts(write_ptx_pattern(tmp_path / "cu", ptx)) == counts(cu)
    assert [sectors for *_, sectors in counts(cu)] == [512, 512, 512]


def test_a_source_outside_the_root_is_named_never_read(tmp_path, no_compiler, reads):
    """The PTX names ../elsewhere/vadd.cu, whose line 4 would show: not opened, no text; the
    parameters take the PTX's names."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "vadd.cu").write_text("\n\n\nSECRET\n")
    params = [f"_Z6vecAddPKfS0_Pfi_param_{k}" for k in range(3)]
    path = write_ptx_pattern(tmp_path / "root", VADD_PTX.replace("SOURCE", "../elsewhere/vadd.cu"),
                             arrays=tuple(params), level="ptx")
    doc = json.loads(path.read_text())
    doc["params"]["_Z6vecAddPKfS0_Pfi_param_3"] = N
    path.write_text(json.dumps(doc))
    found = counts(path)
    assert [(op, sectors) for _, op, _, sectors in found] == [("load", 512)] * 2 + [("store", 512)]
    assert [name for name, *_ in found] == [f"vadd.cu line 4: ld.global.f32 [{params[1]}]",
                                            f"vadd.cu line 4: ld.global.f32 [{params[0]}]",
                                            "vadd.cu line 4: st.global.f32"]
    assert kernel_source(load_pattern(path)) == ""
    assert not any("elsewhere" in opened for opened in reads)


def test_a_ptx_file_outside_the_root_is_refused_unread(tmp_path, no_compiler, reads):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "vadd.ptx").write_text(VADD_PTX)
    path = write_ptx_pattern(tmp_path / "root", VADD_PTX)
    doc = json.loads(path.read_text())
    doc["kernel"]["ptx"] = "../elsewhere/vadd.ptx"
    path.write_text(json.dumps(doc))
    with pytest.raises(PatternError, match=r"^kernel.ptx: '?\.\./elsewhere/vadd.ptx'? lies "
                                           r"outside the pattern's root"):
        analyze(load_pattern(path))
    assert not any("elsewhere" in opened for opened in reads)


def test_an_unreadable_ptx_names_its_file_and_line(tmp_path, no_compiler):
    path = write_ptx_pattern(tmp_path, VADD_PTX.replace(".address_size 64", ".bogus 1"))
    with pytest.raises(PatternError, match=r"^PTX line 3: ") as err:
        analyze(load_pattern(path))
    assert err.value.file == str(tmp_path / "vadd.ptx")


def test_an_edited_ptx_file_is_read_again(tmp_path, no_compiler):
    path = write_ptx_pattern(tmp_path, vadd_beside(tmp_path))
    pattern = load_pattern(path)
    first = kernel_for(pattern)
    assert str(tmp_path / "vadd.ptx") in {s.path for s in MEMO.files("kernel", read_as(pattern))}
    assert kernel_for(pattern) is first
    (tmp_path / "vadd.ptx").write_text(vadd_beside(tmp_path) + "// edited\n")
    assert kernel_for(pattern) is not first


def test_report_reads_a_ptx_pattern_with_no_compiler(tmp_path, no_compiler, capsys):
    path = write_ptx_pattern(tmp_path, vadd_beside(tmp_path))
    assert main(["report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "compiled by the compiler of vadd.ptx" in out.splitlines()[0]
    assert "1,536 sectors" in out


def test_with_no_compiler_a_cu_pattern_says_what_to_install(tmp_path, no_compiler, capsys):
    path = write_ptx_pattern(tmp_path, "")
    (tmp_path / "vadd.cu").write_text(VADD)
    doc = json.loads(path.read_text())
    doc["kernel"] = {"source": "vadd.cu", "function": "vecAdd"}
    path.write_text(json.dumps(doc))
    assert main(["report", "--engine", "compiled", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nvcc" in err
    assert "pip install nvidia-cuda-nvrtc nvidia-cuda-runtime nvidia-cuda-cccl" in err
    with pytest.raises(PatternError, match="pip install nvidia-cuda-nvrtc nvidia-cuda-runtime "
                                           "nvidia-cuda-cccl"):
        compile_kernel(load_pattern(path))
