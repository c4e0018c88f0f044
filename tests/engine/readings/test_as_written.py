"""The as-written reading (issue 29): the "source" engine is the kernel's debug compile (-G)
read by the PTX engine; the compiled engine's reading is the optimized compile (-O3). Without
a compiler, a CUDA kernel is refused in one line that says what to install."""

import json

import pytest

from sectorviz.cli import main
from sectorviz.engine.compiled import ptxcache
from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.engine.compiled.compiler import Toolchain, find_compiler
from sectorviz.engine.ptx.kernel import CompiledKernel
from sectorviz.model import PatternError, load_pattern
from sectorviz.model.frontend import Reading, kernel_for, reading_of
from sectorviz.model.pattern import with_kernel
from sectorviz.paths import examples_dir

needs_nvcc = pytest.mark.skipif(find_compiler() is None or find_compiler().kind != "nvcc",
                                reason="no nvcc on this machine")
VECTOR_ADD = examples_dir() / "vector-add-cuda.sectorviz.json"




def test_the_source_engine_is_a_debug_compile(monkeypatch):
    monkeypatch.setattr("sectorviz.engine.compiled.compiler.find_compiler",
                        lambda: Toolchain("/opt/cuda/bin/nvcc", "12.8"))
    reading = reading_of(load_pattern(VECTOR_ADD))
    assert reading == Reading("source", "nvcc 12.8 for sm_90 at -G")
    assert reading.words == "as written (debug compile by nvcc 12.8 for sm_90 at -G)"
    # the compiled engine keeps -O3
    compiled = with_kernel(load_pattern(VECTOR_ADD), "--engine", engine="compiled")
    assert (reading_of(compiled).engine, reading_of(compiled).compiler) == (
        "compiled", "nvcc 12.8 for sm_90 at -O3")


@pytest.mark.parametrize("engine", ["source", "compiled"])
def test_without_a_compiler_a_cuda_kernel_is_one_line_saying_what_to_install(monkeypatch,
                                                                               engine):
    monkeypatch.setattr("sectorviz.engine.compiled.compiler.find_compiler", lambda: None)
    pattern = with_kernel(load_pattern(VECTOR_ADD), "--engine", engine=engine)
    with pytest.raises(PatternError, match="^kernel.engine: reading a CUDA kernel needs a "
                                           "compiler: no CUDA compiler found; install "):
        reading_of(pattern)
    monkeypatch.setenv("SECTORVIZ_ENGINE", engine)  # not asked by the pattern: at `kernel`
    with pytest.raises(PatternError, match="^kernel: reading a CUDA kernel needs a compiler"):
        reading_of(load_pattern(VECTOR_ADD))


@needs_nvcc
def test_the_debug_compile_has_its_own_flags_and_cache_entry(tmp_path):
    pattern = load_pattern(VECTOR_ADD)
    optimized, debug = compile_kernel(pattern), compile_kernel(pattern, as_written=True)
    assert ("-O3" in optimized.flags, "-G" in optimized.flags) == (True, False)
    assert ("-O3" in debug.flags, "-G" in debug.flags, "-lineinfo" in debug.flags) == \
        (False, True, False)
    assert debug.compiler.endswith("at -G") and debug.ptx != optimized.ptx
    assert len(list(ptxcache.cache_dir().glob("*.json"))) == 2


@needs_nvcc
def test_report_reads_the_debug_compile_through_the_product_path(capsys, monkeypatch):
    assert main(["report", str(VECTOR_ADD), "--json", "--engine", "source"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["engine"], doc["compiler"]) == \
        ("source", f"nvcc {find_compiler().version} for sm_90 at -G")
    # the debug compile loads and stores through generic addresses: a[i], b[i], c[i] at
    # 4 sectors per warp request, as the interpreter counts them (golden data)
    assert [(i["ptx"], i["sectors_per_request"]) for i in doc["instructions"]] == \
        [("ld.f32", 4.0), ("ld.f32", 4.0), ("st.f32", 4.0)]
    assert isinstance(kernel_for(load_pattern(VECTOR_ADD)), CompiledKernel)


@needs_nvcc
def test_report_leaves_frame_slots_out_and_says_so(tmp_path, capsys, monkeypatch):
    """`x` has its address taken (bump): -G keeps it at a fixed slot of the frame, where the
    source keeps it in a register; `v`, indexed by the thread, is local memory in both."""
    (tmp_path / "k.cu").write_text("""
__device__ void bump(int &x, int by) { x += by; }
__global__ void k(float* out) {
    int x = threadIdx.x;
    bump(x, 3);
    float v[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    out[x] = v[threadIdx.x % 4];
}
""")
    (tmp_path / "k.sectorviz.json").write_text(json.dumps({
        "format": "sectorviz.pattern/1", "name": "frame slots",
        "launch": {"grid": [1], "block": [32]},
        "arrays": {"out": {"dtype": "float32", "length": 64}},
        "kernel": {"source": "k.cu", "function": "k"}}))
    assert main(["report", str(tmp_path / "k.sectorviz.json"), "--json", "--engine",
                 "source"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # out[t + 3]: bytes 12..139, sectors 0-4
    assert [(i["ptx"], i["sectors"]) for i in doc["instructions"]] == [("st.f32", 5)]
    # v[t % 4], indexed by the thread, is counted: lane L reads word w0 + L % 4 of its frame,
    # the 8 lanes of each word spread over its 128-byte row of interleaved words: 4 x 4
    assert [(i["ptx"], i["sectors"]) for i in doc["local"]] == [("ld.f32", 16)]
    # left out, at fixed offsets: st x, bump's ld / st through &x, ld x for out[x], and the
    # 4 stores of v's initializer (v[0] .. v[3])
    loads = next(b for b in doc["boundaries"] if b["name"] == "L1 request side, loads")
    assert "As written: 8 local memory instructions of variables -G keeps in its stack " \
           "frame (a fixed frame slot, not indexed at run time) are left out; the source " \
           "keeps them in registers." in loads["assumption"]
