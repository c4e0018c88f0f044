"""Kernels written in Python (Triton, Numba): compiled from what their file's syntax tree
holds (never run), counted by the PTX engine; the same requests and sectors as the CUDA
kernel that does the same accesses; Triton's launcher specialisation from the values given;
one line saying what to install where the compiler is not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sectorviz.engine.compiled.tritonkernel import integer_type, triton_arguments
from sectorviz.engine.ptx.parse import parse_module
from sectorviz.model import PatternError, load_pattern
from sectorviz.model.analysis import analyze
from sectorviz.model.frontend import kernel_for
from sectorviz.model.memo import MEMO
from sectorviz.paths import examples_dir

pytest.importorskip("triton")
pytest.importorskip("numba_cuda")  # numba-cuda itself, not numba's older numba.cuda

EXAMPLES = examples_dir()
MIB = 2**20


@pytest.fixture(autouse=True)
def ptx_cache(shared_cache, monkeypatch):
    """One PTX cache for this module's tests (each example compiles once)."""
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(shared_cache))
    return shared_cache


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("python-ptx-cache")


def example(name: str, folder: Path | None = None, **changes) -> Path:
    """The example pattern `name`, or a copy of it in `folder` with its kernel file and
    `changes` (top-level keys; `kernel` keys merged)."""
    path = EXAMPLES / f"{name}.sectorviz.json"
    if folder is None:
        return path
    doc = json.loads(path.read_text())
    kernel = {**doc["kernel"], **changes.pop("kernel", {})}
    doc.update(changes, kernel=kernel)
    source = next(doc["kernel"][k] for k in ("triton", "numba") if k in doc["kernel"])
    (folder / source).write_text((EXAMPLES / source).read_text())
    out = folder / f"{name}.sectorviz.json"
    out.write_text(json.dumps(doc))
    return out


def counts(path: Path) -> list[tuple[str, int, int]]:
    """(op, requests, sectors) of each global instruction."""
    return [(s.op, s.requests, s.sectors) for s in analyze(load_pattern(path)).instructions]


def test_the_ptx_reader_takes_tritons_pointer_parameter_qualifier():
    module = parse_module(".version 8.7\n.target sm_90a\n.address_size 64\n"
                          ".visible .entry k(\n.param .u64 .ptr .global .align 1 k_param_0,\n"
                          ".param .u32 k_param_1\n)\n{\nret;\n}\n")
    assert [(p.name, p.type) for p in module.entries["k"].params] == \
        [("k_param_0", "u64"), ("k_param_1", "u32")]


def test_triton_vector_add_is_vectorised_and_named_by_its_python_calls():
    """n = 1,048,576, BLOCK 1024, 4 warps: 1024 programs x 4 warps = 4096 warps; pointers
    and n divisible by 16, so 2 ld/st.global.v4.b32 per array: 4096 requests of 32 x 16 B
    = 16 sectors each; 24,576 requests and 393,216 sectors, 12 MiB. The loads are named by
    line 13 and 14 (the first .loc of each inline-asm chain 13, 14, 15, 16), not 16; counted
    in SASS, each ld.global.v4.b32 is one LDG.E.128."""
    analysis = analyze(load_pattern(example("triton-vector-add")))
    assert [s.name for s in analysis.instructions][:3] == [
        "line 13: tl.load(x_ptr + offs, mask=mask), LDG.E.128 (1 of 2)",
        "line 13: tl.load(x_ptr + offs, mask=mask), LDG.E.128 (2 of 2)",
        "line 14: tl.load(y_ptr + offs, mask=mask), LDG.E.128 (1 of 2)"]
    assert [s.ptx.split()[0] for s in analysis.instructions] == ["ld.global.v4.b32"] * 4 + \
        ["st.global.v4.b32"] * 2
    assert [(s.requests, s.sectors) for s in analysis.instructions] == [(4096, 65536)] * 6
    assert analysis.totals.sectors * 32 == 12 * MIB


def test_triton_and_numba_vector_add_count_as_the_cuda_kernel(tmp_path):
    """The CUDA vector add (256 threads, n = 1,048,576) is 32,768 warps x 3 requests of 4
    sectors. Triton with BLOCK 256 and 8 warps holds one element per thread, so its PTX
    does the same accesses; so does Numba's. Triton's vectorised example (BLOCK 1024)
    fetches the same 393,216 sectors in 24,576 requests."""
    cuda = counts(example("vector-add-cuda"))
    assert cuda == [("load", 32768, 131072)] * 2 + [("store", 32768, 131072)]
    one_each = example("triton-vector-add", tmp_path, params={"n": 2**20, "block": 256},
                       kernel={"num_warps": 8})
    assert counts(one_each) == cuda
    assert counts(example("numba-vector-add")) == cuda
    assert sum(s for *_, s in counts(example("triton-vector-add"))) == 393216


@pytest.mark.parametrize("n, vector", [(1024, True), (1000, False)])
def test_tritons_specialisation_follows_divisibility_by_16(tmp_path, n, vector):
    """One program, BLOCK 1024, 4 warps. n = 1024: divisible, v4 accesses, 16 sectors per
    request. n = 1000: not divisible, 8 scalar accesses per array; lanes 16 B apart span
    512 B = 16 sectors, except past element 1000 in warp 3's second half (elements 896 +
    4 lane + j, lanes 0-25 active: 26 x 16 B = 416 B = 13 sectors): 16 x 3 + 13 = 61."""
    path = example("triton-vector-add", tmp_path, params={"n": n, "block": 1024},
                   launch={"grid": [1]})
    found = counts(path)
    if vector:
        assert found == [("load", 4, 64)] * 4 + [("store", 4, 64)] * 2
    else:
        per_array = [64] * 4 + [61] * 4
        assert [s for *_, s in found] == per_array * 3
    ptx = [s.ptx for s in analyze(load_pattern(path)).instructions]
    assert all(("v4.b32" in op) == vector for op in ptx)


def test_the_launcher_rule_on_values_and_its_override(tmp_path):
    """Pointers at 256-byte-aligned addresses, and n = 1,048,576, are divisible by 16; n =
    17 is not; n = 1 becomes the constexpr 1; `divisibility` false turns both off; an
    array 4 bytes off a 256-byte boundary is not divisible."""
    params = ("x_ptr", "y_ptr", "out_ptr", "n", "BLOCK")
    big = load_pattern(example("triton-vector-add"))
    assert triton_arguments(big, params) == (
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
         "BLOCK": "constexpr"}, {"BLOCK": 1024}, [0, 1, 2, 3])
    odd = load_pattern(example("triton-vector-add", tmp_path, params={"n": 17, "block": 1024},
                               launch={"grid": [1]}))
    assert triton_arguments(odd, params)[2] == [0, 1, 2]
    one = load_pattern(example("triton-vector-add", tmp_path, params={"n": 1, "block": 1024},
                               launch={"grid": [1]}))
    signature, constexprs, _ = triton_arguments(one, params)
    assert signature["n"] == "constexpr" and constexprs == {"BLOCK": 1024, "n": 1}
    told = load_pattern(example("triton-vector-add", tmp_path, params={"n": 1, "block": 1024},
                                launch={"grid": [1]},
                                kernel={"divisibility": {"n": False, "x_ptr": False}}))
    assert triton_arguments(told, params)[0]["n"] == "i32"
    assert triton_arguments(told, params)[2] == [1, 2]
    doc = json.loads(example("triton-vector-add").read_text())
    doc["arrays"]["y_ptr"]["offset_bytes"] = 4
    shifted = example("triton-vector-add", tmp_path, arrays=doc["arrays"])
    assert triton_arguments(load_pattern(shifted), params)[2] == [0, 2, 3]
    assert [integer_type(v) for v in (2**31 - 1, 2**31, -2**31 - 1, 2**63)] == \
        ["i32", "i64", "i64", "u64"]


def test_numba_transpose_is_the_canonical_naive_transpose():
    """1024 x 1024 float32: per warp a 4-sector read and a 32-sector write (lanes 4 KiB
    apart); 32,768 warps."""
    assert counts(example("numba-transpose-naive")) == [("load", 32768, 131072),
                                                         ("store", 32768, 1048576)]


def test_fused_softmax_global_and_shared_numbers():
    """4,096 rows of 1,024 float32, one 4-warp program per row: 2 v4 loads and 2 v4 stores
    per warp of 16 sectors, 32 MiB; the max and sum cross warps through shared memory, one
    st.shared and one ld.shared per warp each, 1 wavefront each."""
    analysis = analyze(load_pattern(example("triton-softmax")))
    assert [(s.op, s.requests, s.sectors) for s in analysis.instructions] == \
        [("load", 16384, 262144)] * 2 + [("store", 16384, 262144)] * 2
    assert analysis.totals.sectors * 32 == 32 * MIB
    shared = analysis.shared
    assert [(s.requests, s.wavefronts) for s in shared] == [(16384, 16384)] * 4
    assert [s.name.split(",")[0] for s in shared] == ["line 15: tl.max(x", "line 15: tl.max(x",
                                                      "line 17: tl.sum(num",
                                                      "line 17: tl.sum(num"]


def test_the_reading_names_triton_its_architecture_and_warps():
    """Counted in the SASS of Triton's own cubin (test_python_kernels_sass.py)."""
    kernel = kernel_for(load_pattern(example("triton-vector-add")))
    assert kernel.assumptions[0].startswith("Counted in SASS: Triton's ptxas ")
    assert "for sm_90, each memory instruction carried from the PTX Triton " in \
        kernel.assumptions[0]
    assert "for sm_90, num_warps 4 emits" in kernel.assumptions[0]


@pytest.mark.parametrize("module, language, install", [
    ("triton", "triton", "pip install sectorviz[triton]"),
    ("numba_cuda", "numba", "pip install sectorviz[numba]")])
def test_without_the_compiler_a_python_kernel_is_refused_saying_what_to_install(
        monkeypatch, module, language, install):
    monkeypatch.setitem(sys.modules, module, None)
    name = "triton-vector-add" if language == "triton" else "numba-vector-add"
    with pytest.raises(PatternError) as err:
        analyze(load_pattern(example(name)))
    assert err.value.place == f"kernel.{language}" and install in err.value.message
    assert "\n" not in str(err.value)


DOT = '''\
import triton
import triton.language as tl


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs[:, None] * BLOCK + offs[None, :])
    b = tl.load(b_ptr + offs[:, None] * BLOCK + offs[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], c)
'''


def test_wgmma_is_refused_in_one_line_naming_the_python_line_and_the_instruction(tmp_path):
    """At sm_90 tl.dot emits wgmma, which the engine does not run."""
    (tmp_path / "dot.py").write_text(DOT)
    arrays = {"a_ptr": {"dtype": "float16", "length": 4096},
              "b_ptr": {"dtype": "float16", "length": 4096},
              "c_ptr": {"dtype": "float32", "length": 4096}}
    (tmp_path / "p.sectorviz.json").write_text(json.dumps(
        {"format": "sectorviz.pattern/1", "launch": {"grid": [1]}, "arrays": arrays,
         "kernel": {"triton": "dot.py", "function": "dot_kernel",
                    "constexprs": {"BLOCK": 64}}}))
    with pytest.raises(PatternError) as err:
        analyze(load_pattern(tmp_path / "p.sectorviz.json"))
    assert err.value.place == "line 10" and err.value.file == str(tmp_path / "dot.py")
    assert "`wgmma." in err.value.message and "\n" not in str(err.value)


@pytest.mark.parametrize("name, header", [
    ("triton-vector-add", "compiled by Triton"), ("triton-softmax", "compiled by Triton"),
    ("triton-layer-norm", "compiled by Triton"), ("triton-matmul", "compiled by Triton"),
    ("numba-vector-add", "compiled by Numba CUDA"),
    ("numba-transpose-naive", "compiled by Numba CUDA"),
    ("numba-transpose-tiled", "compiled by Numba CUDA")])
def test_sectorviz_report_opens_each_example(name, header):
    done = subprocess.run([sys.executable, "-m", "sectorviz", "report", "--json",
                           str(example(name))], capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["engine"] == "compiled" and f"compiled by {doc['compiler']}".startswith(header)
    assert doc["totals"]["sectors"] == {"triton-vector-add": 393216,
                                        "triton-softmax": 1048576,
                                        "triton-layer-norm": 3147776,
                                        "triton-matmul": 147456,
                                        "numba-vector-add": 393216,
                                        "numba-transpose-naive": 1179648,
                                        "numba-transpose-tiled": 262144}[name]


def test_triton_matmul_report_counts_a_b_and_c_as_derived_from_the_block_sizes():
    """`sectorviz report --json` of the sm_80 tl.dot example, M = N = K = 512, 128 x 128 x 32
    blocks, 4 warps: 16 programs x 4 warps. A and B: per warp 16 K steps x 4 cp.async of
    512 contiguous-run bytes (16 sectors) = 64 requests, 4,096 requests and 65,536 sectors
    each (a program reads a 128 x 512 float16 strip, 128 KiB); the last 2 of the 16 loop
    iterations prefetch past K with src-size 0 and read nothing. C: 16 st.global.v4 per
    warp, 1,024 requests, 16,384 sectors (512 KiB). Shared: 18 x 8 cp.async writes, 2 x 132
    ldmatrix and 2 x 16 epilogue accesses per warp, 4 wavefronts each (conflict-free)."""
    done = subprocess.run([sys.executable, "-m", "sectorviz", "report", "--json",
                           str(example("triton-matmul"))], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["compiler"].startswith("Triton ")
    assert doc["compiler"].endswith(" for sm_80, num_warps 4")
    per_array: dict[str, list[int]] = {}
    for ins in doc["instructions"]:
        found = per_array.setdefault(ins["array"], [0, 0, ins["line"]])
        found[0] += ins["requests"]
        found[1] += ins["sectors"]
        assert ins["sectors_per_request"] == 16.0 and ins["line"] == found[2]
    assert per_array == {"a_ptr": [4096, 65536, 22], "b_ptr": [4096, 65536, 23],
                         "c_ptr": [1024, 16384, 29]}
    totals = doc["totals"]
    assert (totals["requests"], totals["sectors"], totals["unique_sectors"]) == \
        (9216, 147456, 49152)
    shared: dict[str, int] = {}
    for ins in doc["shared"]:
        kind = ins["ptx"].split(" ")[0]
        shared[kind] = shared.get(kind, 0) + ins["requests"]
        assert ins["wavefronts"] == 4 * ins["requests"]
    assert shared == {"cp.async.cg.shared.global": 9216,
                      "ldmatrix.sync.aligned.m8n8.x4.shared.b16": 8448,
                      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16": 8448,
                      "st.shared.v4.b32": 1024, "ld.shared.v4.b32": 1024}
    assert (doc["shared_totals"]["requests"], doc["shared_totals"]["wavefronts"]) == \
        (28160, 112640)


def test_numba_tiled_transpose_counts_as_the_cuda_tiled_transpose():
    """m = 1024: 32 x 32 blocks of 32 x 8 threads, each loop unrolled into 4 instructions of
    8,192 requests; the CUDA twin (32 x 32 threads, one element each) has the same totals:
    65,536 global requests of 4 sectors (262,144) and 65,536 shared requests of 1
    wavefront each (the 33-column tile is conflict-free)."""
    numba = analyze(load_pattern(example("numba-transpose-tiled")))
    assert [(s.requests, s.sectors) for s in numba.instructions] == [(8192, 32768)] * 8
    assert [(s.requests, s.wavefronts) for s in numba.shared] == [(8192, 8192)] * 8
    cuda = analyze(load_pattern(example("transpose-tiled-cuda")))
    for totals in (numba, cuda):
        assert (totals.totals.requests, totals.totals.sectors) == (65536, 262144)
        assert totals.shared_totals is not None
        assert (totals.shared_totals.requests, totals.shared_totals.wavefronts) == \
            (65536, 65536)


def test_layer_norm_reads_x_three_times_and_w_b_once_per_row(tmp_path):
    """Counted in PTX, 1,024 rows of 4,096: per v4 instruction 4,096 warps x 4 loop
    iterations = 16,384 requests of 16 sectors; 12 such instructions (x in 3 loops, w, b,
    y) and the mean and 1/std stored by one lane per program: 198,656 requests, 3,147,776
    sectors, 1,049,856 of them distinct (x, y 524,288 each; w, b 512; mean, rstd 128).
    Counted in SASS (the default), where ptxas unrolled the loops, the totals are the same;
    the n SASS copies of line 18's two v4 loads carry one copy mark each, (1 of n) to (n of
    n), not the PTX's (1 of 2) and the SASS's own."""
    analysis = analyze(load_pattern(example("triton-layer-norm", tmp_path,
                                            kernel={"level": "ptx"})))
    in_sass = analyze(load_pattern(example("triton-layer-norm")))
    assert in_sass.totals == analysis.totals
    head = "line 18: tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0), LDG.E.128"
    copies = [s.name for s in in_sass.instructions if s.name.startswith(head)]
    assert copies == [f"{head} ({k} of {len(copies)})" for k in range(1, len(copies) + 1)]
    assert len(copies) > 2
    wide = [(s.requests, s.sectors) for s in analysis.instructions if "v4" in s.name]
    assert wide == [(16384, 262144)] * 12
    lines = {s.name.split(":")[0] for s in analysis.instructions if "v4" in s.name}
    assert lines == {"line 18", "line 23", "line 32", "line 33", "line 34", "line 35"}
    totals = analysis.totals
    assert (totals.requests, totals.sectors, totals.unique_sectors) == \
        (198656, 3147776, 1049856)
    assert [(s.requests, s.wavefronts) for s in analysis.shared] == [(4096, 4096)] * 4


def test_a_sweep_compares_two_triton_block_sizes():
    """BLOCK is the param block. 256: 4,096 programs x 4 warps, one v2 access per array (32
    x 8 B = 8 sectors): 49,152 requests. 1024: 1,024 programs x 4 warps, two v4 accesses
    per array (16 sectors): 24,576 requests. The same 393,216 sectors either way."""
    done = subprocess.run([sys.executable, "-m", "sectorviz", "sweep", "--json", "--jobs", "1",
                           "--param", "block=256,1024", str(example("triton-vector-add"))],
                          capture_output=True, text=True, timeout=300,
                          cwd=Path(__file__).resolve().parents[3])
    assert done.returncode == 0, done.stderr
    points = json.loads(done.stdout)["points"]
    found = [(p["params"]["block"], p["report"]["totals"]["requests"],
              p["report"]["totals"]["sectors"],
              {i["sectors_per_request"] for i in p["report"]["instructions"]})
             for p in points]
    assert found == [(256, 49152, 393216, {8.0}), (1024, 24576, 393216, {16.0})]


def test_numbas_negative_index_wraparound_is_closed_without_lane_values(monkeypatch):
    """Numba indexes x[i] as x[i + (i >> 63 & shape)]: i = global thread index >= 0 over
    every warp, so the sign is 0 in closed form (closed_ops._sign), with no per-lane
    arithmetic (_concrete) and the whole grid as one box of blocks."""
    from sectorviz.engine.ptx import closed_ops

    kernel = kernel_for(load_pattern(example("numba-vector-add")))

    def no_lane_values(*args):
        raise AssertionError("per-lane arithmetic ran")

    monkeypatch.setattr(closed_ops, "_concrete", no_lane_values)
    found = kernel.closed_trace(0, 64, 32)
    assert found is not None and found[0] == kernel.warps == 32768


def test_the_triton_vector_add_is_one_box_of_blocks():
    """Triton computes the second v4 access's offset as `pid * 1024 | (tid * 4 & 508) |
    512`: bit 9 lies between the thread's bits (at most 508) and the block's (multiples of
    1024), so the or is a sum and the whole grid (4,096 warps, asked for 64) is one box of
    blocks, a batch row per warp of a block (4)."""
    kernel = kernel_for(load_pattern(example("triton-vector-add")))
    found = kernel.closed_trace(0, 64, 32)
    assert found is not None and found[0] == kernel.warps == 4096
    assert {len(batch.base) for _, _, batch in found[1]} == {4}


def test_the_softmax_reductions_shuffles_are_closed():
    """tl.max and tl.sum exchange partial results with shfl.sync.bfly: data the closed forms
    do not track, so the whole grid (16,384 warps) is counted in closed form (its numbers:
    test_fused_softmax_global_and_shared_numbers)."""
    pattern = load_pattern(example("triton-softmax"))
    kernel = kernel_for(pattern)
    found = kernel.closed_trace(0, 64, 32)
    assert found is not None and found[0] == kernel.warps == 16384


def test_the_triton_matmul_is_closed_and_counts_as_the_lane_path(monkeypatch, tmp_path):
    """cp.async (its src-size as lanes), ldmatrix, mma.sync and Triton's bfe.u32 of the
    thread index have closed forms: the whole grid (64 warps) is counted in closed form,
    with the lane path's numbers (test_triton_matmul_report_counts_...). The pipeline's
    stage indices cycle by selects (-1, then 0, 1, 0, 1): the K loop's first iteration runs
    as code, then pairs of iterations in closed form, and the last ones (prefetching past
    K, their masks false) as code: as many batches for K = 2048 (64 iterations) as for
    K = 512 (16)."""
    pattern = load_pattern(example("triton-matmul"))
    kernel = kernel_for(pattern)
    found = kernel.closed_trace(0, 64, 32)
    assert found is not None and found[0] == kernel.warps == 64
    params = {**dict(pattern.params), "K": 2048, "stride_am": 2048}
    longer = kernel_for(load_pattern(example("triton-matmul", tmp_path, params=params)))
    longer_found = longer.closed_trace(0, 64, 32)
    assert longer_found is not None and len(longer_found[1]) == len(found[1])
    closed = analyze(pattern)
    MEMO.clear()
    monkeypatch.setenv("SECTORVIZ_LANE_PATH", "1")
    assert analyze(pattern) == closed


def test_numba_passes_a_2d_array_as_9_parameters_with_byte_strides(tmp_path):
    """A 1024 x 512 float32 array: row-major strides (512 x 4, 4) bytes, col-major (4,
    1024 x 4); a scalar param is an int64, as Numba types a Python int."""
    from sectorviz.engine.compiled.numbakernel import numba_arguments

    arrays = {"a": {"dtype": "float32", "shape": [1024, 512]},
              "out": {"dtype": "float32", "shape": [1024, 512], "layout": "col-major"}}
    pattern = load_pattern(example("numba-transpose-naive", tmp_path, arrays=arrays))
    types, ptx = numba_arguments(pattern, ("a", "out", "m"))
    assert types == [["array", "float32", 2, "C"], ["array", "float32", 2, "F"],
                     ["scalar", "int64"]]
    a = [(name, value) for name, value in ptx if name.startswith("a")]
    assert a == [("a.meminfo", 0), ("a.parent", 0), ("a.nitems", 524288), ("a.itemsize", 4),
                 ("a", None), ("a.shape[0]", 1024), ("a.shape[1]", 512),
                 ("a.strides[0]", 2048), ("a.strides[1]", 4)]
    assert dict(ptx)["out.strides[0]"] == 4 and dict(ptx)["out.strides[1]"] == 4096
    assert ptx[-1] == ("m", None)
