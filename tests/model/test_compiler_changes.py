"""What the compiler changed (model.compiler_changes): small kernels in the style of public
ones, each read by both engines through the real driver (nvcc -O3), each change named and its
figures derived by hand from the PTX that the failure message prints (its memory
instructions, branches and labels, with the .loc lines in force)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from oracles import GEMM

import sectorviz.engine.readings  # noqa: F401  (registers the engines)
from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.export.report_json import report_json
from sectorviz.gather.sheet import accounting_sheet
from sectorviz.model import load_pattern
from sectorviz.model.analysis import analyzed
from sectorviz.model.compiler_changes import (
    CompilerChanges,
    cached_compiler_changes,
    compiler_changes,
)
from sectorviz.model.memo import MEMO
from sectorviz.model.pattern import with_kernel

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")


@pytest.fixture(autouse=True)
def _fresh(tmp_path_factory, monkeypatch):
    """A PTX cache folder of the test's own, and an empty one cache."""
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(tmp_path_factory.mktemp("ptx")))
    MEMO.clear()


def _pattern(folder: Path, code: str, function: str, arrays: dict, params: dict | None = None,
             grid=(2,), block=(32,)):
    (folder / "kernel.cu").write_text(code)
    doc = {"format": "sectorviz.pattern/1", "params": params or {},
           "launch": {"grid": list(grid), "block": list(block)}, "arrays": arrays,
           "kernel": {"source": "kernel.cu", "function": function, "engine": "compiled"}}
    (folder / "p.sectorviz.json").write_text(json.dumps(doc))
    return load_pattern(folder / "p.sectorviz.json")


def _ptx(pattern) -> str:
    """The PTX lines the figures are derived from."""
    keep = re.compile(r"^\s*(\.loc|ld\.|st\.|@%p\d+ bra|bra|\$L__)")
    return "\n".join(line for line in compile_kernel(pattern).ptx.splitlines()
                     if keep.match(line) and "ld.param" not in line)


def _changes(pattern) -> tuple[CompilerChanges, str]:
    changes = compiler_changes(pattern)
    assert changes is not None and changes.note is None
    return changes, "PTX:\n" + _ptx(pattern)


def _summary(changes: CompilerChanges) -> list[tuple]:
    return [(c.kind, c.line, c.array, c.written, c.compiled) for c in changes.changes]


F32 = {"dtype": "float32"}


@needs_nvcc
def test_forwarding_and_a_removed_store(tmp_path):
    """x[i] = x[i] * 2; x[i] = x[i] + 1; (2 warps). As written: a load and a store of x on
    each line, one request of 4 sectors per warp each. PTX: `ld.global.f32` under .loc 5,
    `st.global.f32` under .loc 6: the store of line 5 is gone (line 6's replaces it), the
    load of line 6 forwarded (the value is in a register)."""
    pattern = _pattern(tmp_path, """\
__global__ void twice(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    x[i] = x[i] * 2.0f;
    x[i] = x[i] + 1.0f;
}
""", "twice", {"x": {**F32, "length": "n"}}, {"n": 64})
    changes, ptx = _changes(pattern)
    assert _summary(changes) == [("removed store", 5, "x", (2, 8), (0, 0)),
                                 ("forwarded", 6, "x", (2, 8), (0, 0))], ptx
    # each is said by the compiled instruction of its line: the load (5), the store (6)
    assert [c.instructions for c in changes.changes] == [(0,), (1,)], ptx
    assert changes.changes[1].words == (
        "the compiler kept `x[i]` in a register (the value an earlier load or store of it "
        "left): 2 loads fewer than as written (0 instead of 2; 8 sectors fewer)")


@needs_nvcc
def test_a_loop_invariant_load_is_hoisted_to_the_line_before_its_loop(tmp_path):
    """s += a[i] * b[k] over k < 64, restrict (2 warps). As written a[i] runs 64 times per
    warp: 128 requests of 4 sectors (512). PTX: one `ld.global.nc.f32` of a under .loc 4,
    before the loop: once per warp, 2 requests, 8 sectors. b[k] (4 copies x 16 trips x 2
    warps = 128 requests of 1 sector; the remainder loop never runs) is unchanged."""
    pattern = _pattern(tmp_path, """\
__global__ void dot_rows(const float *__restrict__ a, const float *__restrict__ b,
                         float *__restrict__ out, int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s = 0.0f;
    for (int k = 0; k < m; k++)
        s += a[i] * b[k];
    out[i] = s;
}
""", "dot_rows", {"a": {**F32, "length": "n"}, "b": {**F32, "length": "m"},
                  "out": {**F32, "length": "n"}}, {"n": 64, "m": 64})
    changes, ptx = _changes(pattern)
    assert _summary(changes) == [("hoisted", 8, "a", (128, 512), (2, 8))], ptx
    assert changes.changes[0].compiled_line == 4, ptx
    assert "loaded at line 4" in changes.changes[0].words
    assert "126 loads fewer than as written (2 instead of 128; 504 sectors fewer)" in \
        changes.changes[0].words


MATRICES = {x: {**F32, "length": "n*n"} for x in "abc"}


@pytest.mark.parametrize("restrict", [False, True])
@needs_nvcc
def test_gemm_keeps_c_in_a_register_and_with_restrict_sinks_its_store(tmp_path, restrict):
    """The textbook GEMM, n = 64, 128 warps (one row of 32 columns each). As written c is
    loaded and stored 64 times per warp: 8,192 requests of 4 sectors (32,768) each. PTX: one
    `ld.global.f32` of c before the loop (128 requests, 512 sectors); without restrict a
    `st.global.f32` in each of the 4 unrolled copies (16 trips: 8,192 requests, unchanged),
    with restrict one store after the loop (128, 512)."""
    code = GEMM if not restrict else GEMM.replace("const float *a, const float *b, float *c",
                                                  "const float *__restrict__ a, const float "
                                                  "*__restrict__ b, float *__restrict__ c")
    pattern = _pattern(tmp_path, code, "gemm", MATRICES, {"n": 64}, grid=(2, 64), block=(32, 1))
    changes, ptx = _changes(pattern)
    expected = [("hoisted", 7, "c", (8192, 32768), (128, 512))]
    if restrict:
        expected.append(("sunk", 7, "c", (8192, 32768), (128, 512)))
    assert _summary(changes) == expected, ptx
    assert "8,064 loads fewer than as written (128 instead of 8,192" in changes.changes[0].words


@needs_nvcc
def test_an_unrolled_loop_groups_lanes_into_requests_differently(tmp_path):
    """for k < len[i]: s += a[k * 32 + i], one warp, len = 1 on lanes 0-15 and 4 on lanes
    16-31. As written: k = 0 all lanes (4 sectors), k = 1..3 lanes 16-31 (2 sectors each): 4
    requests, 10 sectors. PTX: the loop unrolled by 4 (`ld.global.f32 [%rd+0/128/256/384]`),
    then a remainder loop of one load: lanes 16-31 make one unrolled trip (4 requests of 2
    sectors), lanes 0-15 one remainder trip (1 request of 2 sectors): 5 requests, 10
    sectors. len[i], re-read by each loop test as written (5 requests: 4 + 4 + 3 x 2 = 14
    sectors), is loaded once (1 request, 4 sectors)."""
    pattern = _pattern(tmp_path, """\
__global__ void ragged_sum(const float *a, const int *len, float *out)
{
    int i = threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < len[i]; k++)
        s += a[k * 32 + i];
    out[i] = s;
}
""", "ragged_sum", {"a": {**F32, "length": 256}, "out": {**F32, "length": 32},
                    "len": {"dtype": "int32", "length": 32,
                            "values": {"kind": "expr", "expr": "1 + 3 * (i / 16)"}}},
        grid=(1,))
    changes, ptx = _changes(pattern)
    assert _summary(changes) == [("hoisted", 5, "len", (5, 14), (1, 4)),
                                 ("unrolled remainder", 6, "a", (4, 10), (5, 10))], ptx
    assert "1 load more than as written (5 instead of 4; the same sectors)" in \
        changes.changes[1].words


@needs_nvcc
def test_a_per_thread_array_indexed_at_run_time_lives_in_local_memory(tmp_path):
    """float t[64] indexed by idx[i] = 7i % 64 (2 warps): local memory in both readings, so
    no change; the one change is idx[i], loaded under .loc 7 and forwarded to line 8.
    Local words interleave (lane l's byte o at 32 g (o / g) + g l + o % g, g the access
    width). As written (-G, the loop kept): line 6 is 64 `st.u32` per warp, word k of the
    lanes one 128 B row: 2 x 64 requests of 4 sectors (512); compiled: 16
    `st.local.v4.f32` per warp, each 32 lanes x 16 B = 16 sectors: 32 requests, 512 sectors.
    Line 7 (t[idx[i]] += 1: a load and a store) and line 8 (t[idx[i] / 2]), in both: 7i % 64
    and its half differ per lane, each lane's word in its own 128 B row, so 32 sectors per
    request: 4 requests, 128 sectors, and 2 requests, 64 sectors."""
    pattern = _pattern(tmp_path, """\
__global__ void histogram_rows(const int *idx, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float t[64];
    for (int k = 0; k < 64; k++)
        t[k] = 0.0f;
    t[idx[i]] += 1.0f;
    out[i] = t[idx[i] / 2];
}
""", "histogram_rows", {"idx": {"dtype": "int32", "length": "n",
                                "values": {"kind": "expr", "expr": "(i * 7) % 64"}},
                        "out": {**F32, "length": "n"}}, {"n": 64})
    changes, ptx = _changes(pattern)
    assert _summary(changes) == [("forwarded", 8, "idx", (2, 8), (0, 0))], ptx

    def local(p) -> dict[int, tuple[int, int]]:
        out: dict[int, tuple[int, int]] = {}
        for s in analyzed(p).local:
            r, n = out.get(s.line, (0, 0))
            out[s.line] = (r + s.requests, n + s.sectors)
        return out

    as_written = with_kernel(pattern, "--engine", engine="source")
    assert local(as_written) == {6: (128, 512), 7: (4, 128), 8: (2, 64)}, ptx
    assert local(pattern) == {6: (32, 512), 7: (4, 128), 8: (2, 64)}, ptx


@needs_nvcc
def test_two_members_of_a_float2_are_read_by_one_vector_load(tmp_path):
    """p[i].x and p[i].y (float2, 2 warps). As written (-G, which keeps repeated loads) four
    4-byte loads, p[i].x twice and p[i].y twice, lanes 8 bytes apart: each request spans
    256 B, 8 sectors: 8 requests, 64 sectors. PTX: one `ld.global.v2.f32`: 2 requests of 8
    sectors. Wider requests: "vector", though the bytes are fewer too."""
    pattern = _pattern(tmp_path, """\
__global__ void length2(const float2 *p, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = p[i].x * p[i].x + p[i].y * p[i].y;
}
""", "length2", {"p": {"dtype": "float2", "length": "n"}, "out": {**F32, "length": "n"}},
        {"n": 64})
    changes, ptx = _changes(pattern)
    assert _summary(changes) == [("vector", 5, "p", (8, 64), (2, 16))], ptx
    assert "`ld.global.v2.f32` (8 B per lane)" in changes.changes[0].words


@needs_nvcc
def test_the_explanations_say_the_change_and_report_json_lists_it(tmp_path):
    """The hoisted load's sentence ends the explanation of the instruction it names (the
    sheet's step 4 and report --json), the sheet's last step lists it, and report --json's
    "compiler_changes" holds its figures; the source reading has none (null)."""
    pattern = _pattern(tmp_path, GEMM, "gemm", MATRICES, {"n": 64}, grid=(2, 64), block=(32, 1))
    analysis = analyzed(pattern)
    changes = compiler_changes(pattern, analysis)
    assert changes is not None and cached_compiler_changes(pattern) is changes
    doc = report_json(pattern, analysis, None)
    assert [(c["kind"], c["line"], c["written"], c["compiled"])
            for c in doc["compiler_changes"]] == [
        ("hoisted", 7, {"requests": 8192, "sectors": 32768},
         {"requests": 128, "sectors": 512})]
    k = doc["compiler_changes"][0]["instructions"][0]
    assert doc["instructions"][k]["explanation"].endswith(changes.changes[0].sentence)
    sheet = accounting_sheet(pattern, analysis, changes=changes)
    last = sheet.steps[-1]
    assert last.title.startswith("What the compiler changed")
    assert [(r.label, r.value) for r in last.rows] == [("line 7: c[i * n + j]", "hoisted")]
    as_written = with_kernel(pattern, "--engine", engine="source")
    source = report_json(as_written, analyzed(as_written), None)
    assert source["compiler_changes"] is None and source["engine"] == "source"


@needs_nvcc
def test_a_kernel_the_compiler_leaves_as_written_has_no_changes(tmp_path):
    """y[i] = a * x[i] + y[i]: one load of x, one of y, one store of y, in both readings."""
    pattern = _pattern(tmp_path, """\
__global__ void saxpy(const float *x, float *y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
""", "saxpy", {"x": {**F32, "length": "n"}, "y": {**F32, "length": "n"}}, {"n": 64})
    changes, ptx = _changes(pattern)
    assert changes.changes == (), ptx


@needs_nvcc
def test_a_kernel_the_source_engine_refuses_says_why_in_one_line(tmp_path):
    """An unused load past the array: nvcc -O3 removes it, the debug compile keeps it, so as
    written lane 0 of warp 0 reads a[0 + 1000 x 64], byte 256,000, outside every array: no
    changes, and why."""
    pattern = _pattern(tmp_path, """\
__global__ void copy_rows(const float *a, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float unused = a[i + 1000 * n];
    out[i] = a[i];
}
""", "copy_rows", {"a": {**F32, "length": "n"}, "out": {**F32, "length": "n"}}, {"n": 64})
    changes = compiler_changes(pattern)
    assert changes is not None and changes.changes == ()
    assert changes.note == ("as written it could not be counted: 'line 4: a[i + 1000 * n], "
                            "ld.f32' reaches byte 256000, outside every array the pattern "
                            "places, at warp 0 lane 0")
    doc = report_json(pattern, analyzed(pattern), None)
    assert doc["compiler_changes"] == [] and doc["compiler_changes_note"] == changes.note


def _stats(line: int, op: str, array: str, requests: int, sectors: int, width: int = 4,
           lanes: int | None = None, source: str = "", ptx: str | None = None):
    """One instruction's figures (the fields diff reads; the rest 0)."""
    from sectorviz.model.results import InstructionStats
    lanes = 32 * requests if lanes is None else lanes
    return InstructionStats(requests=requests, active_lanes=lanes, logical_bytes=lanes * width,
                            useful_bytes=0, sectors=sectors, sector_bytes=32, ideal_sectors=0,
                            excess_sectors=0, sectors_per_request=0.0, useful_fraction=0.0,
                            min=0, max=0, mode=0, unique_sectors=0, name=source, op=op,
                            array=array, width=width, line=line, source=source, ptx=ptx)


def _analysis(*stats):
    from sectorviz.model.results import Analysis, Stats
    totals = Stats(*([0] * 8), 0.0, 0.0, 0, 0, 0, 0)
    return Analysis("t", 32, 1, 32, tuple(stats), totals, ())


def test_diff_names_an_added_access_and_one_run_more_often_without_a_compiler():
    """diff alone (no nvcc): a compiled load of a table the source does not show is "added"
    (as a cos() reads its coefficients); a load whose lanes read more bytes compiled is
    "more"; a written store matched at the nearest line of the same array is one change."""
    from sectorviz.model.compiler_changes import diff
    written = _analysis(_stats(3, "load", "x", 2, 8, source="x[i]"),
                        _stats(5, "store", "y", 4, 16, source="y[i]"))
    compiled = _analysis(_stats(3, "load", "x", 4, 16, ptx="ld.global.f32"),
                         _stats(3, "load", "table", 2, 2, ptx="ld.global.nc.f32"),
                         _stats(6, "store", "y", 2, 8, ptx="st.global.f32"))
    changes = diff(written, compiled)
    assert [(c.kind, c.line, c.array, c.written, c.compiled, c.compiled_line, c.instructions)
            for c in changes] == [
        ("more", 3, "x", (2, 8), (4, 16), 3, (0,)),
        ("added", 3, "table", (0, 0), (2, 2), 3, (1,)),
        ("sunk", 5, "y", (4, 16), (2, 8), 6, (2,))]
    assert changes[1].words == ("the compiled code has `ld.global.nc.f32` of `table` here, "
                                "which the source as written does not: 2 loads more than as "
                                "written (2 instead of 0; 2 sectors more)")
