"""Shared arrays in pattern files: placement, the shared examples against a brute-force
reference written here (lane by lane from the kernels they describe), report and JSON."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict

import numpy as np
import pytest
from oracles import reference

from sectorviz.cli import main
from sectorviz.model import PatternError, analyze, load_pattern, pattern_from_dict
from sectorviz.model.budget import Budget
from sectorviz.model.frontend import kernel_for
from sectorviz.model.shared_stats import SharedCounter
from sectorviz.paths import examples_dir

EXAMPLES = examples_dir()
FIELDS = ("requests", "active_lanes", "wavefronts", "ideal_wavefronts", "bank_conflicts",
          "min", "max", "mode")


def tally(executions) -> tuple[int, ...]:
    """(width, 32 addresses, 32 active flags) per warp execution -> the FIELDS, by
    reference(): a request is an execution with an active lane."""
    requests = lanes = waves = ideal = 0
    ways: Counter[int] = Counter()
    for width, address, active in executions:
        if any(active):
            w, i, n = reference(address, width, active)
            requests, lanes, waves, ideal = requests + 1, lanes + sum(active), waves + w, ideal + i
            ways[n] += 1
    return (requests, lanes, waves, ideal, waves - ideal, min(ways), max(ways),
            max(sorted(ways), key=ways.__getitem__))


def warps(bx: int, by: int = 1):
    """A block's warps: 32 (tx, ty) per warp, thread t = tx + ty * bx."""
    threads = [(t % bx, t // bx) for t in range(bx * by)]
    return [threads[w:w + 32] for w in range(0, len(threads), 32)]


def shared_of(name: str) -> dict[str, tuple[int, ...]]:
    return {s.name: tuple(getattr(s, f) for f in FIELDS)
            for s in analyze(load_pattern(EXAMPLES / f"{name}.sectorviz.json")).shared}


def times(blocks: int, row: tuple[int, ...]) -> tuple[int, ...]:
    """A block's figures -> the launch's: every block sees the same shared offsets."""
    return tuple(v * blocks for v in row[:5]) + row[5:]


def test_tile_column_32_way_against_padded():
    def run(at, ld, base):
        return tally((4, [base + 4 * at(tx, ty, ld) for tx, ty in warp], [True] * 32)
                     for warp in warps(32, 32))
    row = lambda tx, ty, ld: ty * ld + tx  # noqa: E731 - tile[ty][tx]
    col = lambda tx, ty, ld: tx * ld + ty  # noqa: E731 - tile[tx][ty]
    got = shared_of("shared-tile-column")
    padded = 32 * 32 * 4  # placed right after tile (a multiple of 16 bytes)
    assert got == {"store tile[ty][tx]": times(4, run(row, 32, 0)),
                   "load tile[tx][ty]": times(4, run(col, 32, 0)),
                   "store padded[ty][tx]": times(4, run(row, 33, padded)),
                   "load padded[tx][ty]": times(4, run(col, 33, padded))}
    assert got["load tile[tx][ty]"] == (128, 4096, 4096, 128, 3968, 32, 32, 32)
    assert got["load padded[tx][ty]"] == (128, 4096, 128, 128, 0, 1, 1, 1)


def test_tiled_transpose_whole():
    a = analyze(load_pattern(EXAMPLES / "transpose-tiled.sectorviz.json"))
    assert [(s.name, s.sectors // s.requests) for s in a.instructions] == [
        ("load a[row][col]", 4), ("store c[out_row][out_col]", 4)]
    assert a.totals.sectors == 8 * a.warps
    ref = {"store tile[ty][tx]": lambda tx, ty: ty * 33 + tx,
           "load tile[tx][ty]": lambda tx, ty: tx * 33 + ty}
    want = {name: times(32 * 32, tally((4, [4 * f(tx, ty) for tx, ty in warp], [True] * 32)
                                       for warp in warps(32, 32)))
            for name, f in ref.items()}
    assert {s.name: tuple(getattr(s, f) for f in FIELDS) for s in a.shared} == want
    assert [s.wavefronts // s.requests for s in a.shared] == [1, 1]


def test_tiled_transpose_kernel_matches_the_pattern():
    pattern = analyze(load_pattern(EXAMPLES / "transpose-tiled.sectorviz.json"))
    kernel = analyze(load_pattern(EXAMPLES / "transpose-tiled-cuda.sectorviz.json"))
    figures = lambda a: [(s.op, *(getattr(s, f) for f in FIELDS)) for s in a.shared]  # noqa: E731
    assert figures(kernel) == figures(pattern)
    assert asdict(kernel.shared_totals) == asdict(pattern.shared_totals)


def test_strides_and_broadcast():
    offsets = {"load s[tid]": 1, "load s[2 * tid]": 2, "load s[3 * tid]": 3, "load s[0]": 0}
    want = {name: times(2, tally((4, [4 * k * tx for tx, _ in warp], [True] * 32)
                                 for warp in warps(256)))
            for name, k in offsets.items()}
    got = shared_of("shared-strides")
    assert got == want
    assert [got[n][2] // got[n][0] for n in offsets] == [1, 2, 1, 1]  # wavefronts per request


def test_wide_accesses():
    v4 = 2 * 128 * 8  # v4 follows v2's 256 8-byte elements
    cases = {"load v2[tid]": (8, lambda t: 8 * t), "load v4[tid]": (16, lambda t: v4 + 16 * t),
             "load v2[2 * tid]": (8, lambda t: 16 * t)}
    want = {name: times(2, tally((w, [f(tx) for tx, _ in warp], [True] * 32)
                                 for warp in warps(128)))
            for name, (w, f) in cases.items()}
    got = shared_of("shared-wide")
    assert got == want
    assert [(got[n][3] // got[n][0], got[n][4]) for n in cases] == [(2, 0), (4, 0), (2, 16)]


def test_reduction_interleaved_against_sequential():
    def run(steps):
        return times(4, tally((4, [addr(s, tx) for tx, _ in warp], [live(s, tx) for tx, _ in warp])
                              for addr, live, s in steps for warp in warps(256)))
    interleaved = [1 << j for j in range(8)]
    sequential = [128 >> j for j in range(8)]
    i_live = lambda s, t: 2 * s * t < 256  # noqa: E731
    s_live = lambda s, t: t < s  # noqa: E731
    want = {
        "interleaved: load sdata[2*s*tid]": run([(lambda s, t: 8 * s * t, i_live, s)
                                                 for s in interleaved]),
        "interleaved: load sdata[2*s*tid + s]": run([(lambda s, t: 4 * (2 * s * t + s), i_live, s)
                                                     for s in interleaved]),
        "sequential: load sdata[tid]": run([(lambda s, t: 4 * t, s_live, s) for s in sequential]),
        "sequential: load sdata[tid + s]": run([(lambda s, t: 4 * (t + s), s_live, s)
                                                for s in sequential]),
    }
    want["interleaved: store sdata[2*s*tid]"] = want["interleaved: load sdata[2*s*tid]"]
    want["sequential: store sdata[tid]"] = want["sequential: load sdata[tid]"]
    want["store sdata[tid]"] = run([(lambda s, t: 4 * t, lambda s, t: True, 0)])
    assert shared_of("shared-reduction") == want
    assert want["interleaved: load sdata[2*s*tid]"][4] == 140  # 2-, 4-, then 8-way
    assert want["sequential: load sdata[tid]"][4] == 0


def test_matmul_tile():
    bs = 32 * 32 * 4  # Bs follows As
    tiles, ks = range(128 // 32), range(32)
    def run(addr, loops):  # noqa: E306
        return times(16, tally((4, [addr(tx, ty, *it) for tx, ty in warp], [True] * 32)
                               for it in loops for warp in warps(32, 32)))
    per_tile = [(t,) for t in tiles]
    per_k = [(t, k) for t in tiles for k in ks]
    want = {"store As[ty][tx]": run(lambda tx, ty, t: 4 * (ty * 32 + tx), per_tile),
            "store Bs[ty][tx]": run(lambda tx, ty, t: bs + 4 * (ty * 32 + tx), per_tile),
            "load As[ty][k]": run(lambda tx, ty, t, k: 4 * (ty * 32 + k), per_k),
            "load Bs[k][tx]": run(lambda tx, ty, t, k: bs + 4 * (k * 32 + tx), per_k)}
    got = shared_of("shared-matmul-tile")
    assert got == want
    assert got["load As[ty][k]"][:5] == (65536, 65536 * 32, 65536, 65536, 0)  # broadcast


def kernel_shared(name: str) -> dict[str, tuple[int, ...]]:
    """A CUDA example's shared instructions by (op, name: 'line L: source, PTX op') -> the
    FIELDS (as written: the debug compile reaches shared memory through generic addresses,
    `ld.f32` and `st.f32`)."""
    a = analyze(load_pattern(EXAMPLES / f"{name}.sectorviz.json"))
    return {(s.op, s.name): tuple(getattr(s, f) for f in FIELDS) for s in a.shared}


def test_matmul_tiled_kernel():
    """matmulTiled<16>: a warp is two half-rows (ty, ty + 1) of 16 lanes; n = 256."""
    bs, steps, blocks = 16 * 16 * 4, 256 // 16, (256 // 16) ** 2
    def run(addr, loops):  # noqa: E306
        return times(blocks, tally((4, [addr(tx, ty, *it) for tx, ty in warp], [True] * 32)
                                   for it in loops for warp in warps(16, 16)))
    per_step = [(t,) for t in range(steps)]
    per_k = [(t, k) for t in range(steps) for k in range(16)]
    assert kernel_shared("matmul-tiled-cuda") == {
        ("store", "line 21: As[ty][tx], st.f32"):
            run(lambda tx, ty, t: 4 * (ty * 16 + tx), per_step),
        ("store", "line 22: Bs[ty][tx], st.f32"):
            run(lambda tx, ty, t: bs + 4 * (ty * 16 + tx), per_step),
        ("load", "line 26: As[ty][k], ld.f32"):
            run(lambda tx, ty, t, k: 4 * (ty * 16 + k), per_k),
        ("load", "line 26: Bs[k][tx], ld.f32"):
            run(lambda tx, ty, t, k: bs + 4 * (k * 16 + tx), per_k)}


def test_reduction_kernel_sequential_addressing():
    """reduceSum: 256 threads, n / 512 blocks; for s = 128 .. 1, threads below s work."""
    steps = [128 >> j for j in range(8)]
    def run(addr, live, ss):  # noqa: E306
        return times(1048576 // 512, tally(
            (4, [addr(tx, s) for tx, _ in warp], [live(tx, s) for tx, _ in warp])
            for s in ss for warp in warps(256)))
    got = kernel_shared("reduction-cuda")
    assert got == {
        ("store", "line 17: sdata[tid], st.f32"):
            run(lambda t, s: 4 * t, lambda t, s: True, [0]),
        ("load", "line 22: sdata[tid + s], ld.f32"):
            run(lambda t, s: 4 * (t + s), lambda t, s: t < s, steps),
        ("store", "line 22: sdata[tid], st.f32"):
            run(lambda t, s: 4 * t, lambda t, s: t < s, steps)}
    assert sum(v[4] for v in got.values()) == 0


@pytest.mark.parametrize("name", ["transpose-tiled-cuda", "histogram-shared-cuda"])
def test_kernels_shared_figures_alike_with_and_without_closed_forms(name, monkeypatch):
    """Where the front end counts global accesses in closed form, the shared ones are run
    lane by lane for those warps: the same figures as the lane path's."""
    p = load_pattern(EXAMPLES / f"{name}.sectorviz.json")
    closed = analyze(p)
    monkeypatch.setenv("SECTORVIZ_LANE_PATH", "1")
    lanes = analyze(p)
    assert closed.shared == lanes.shared and closed.shared_totals == lanes.shared_totals
    assert closed.instructions == lanes.instructions


# ---------------------------------------------------------------- the format


def doc(**arrays) -> dict:
    return {"format": "sectorviz.pattern/1", "launch": {"grid": [2], "block": [64]},
            "arrays": {"g": {"dtype": "float32", "length": 128}, **arrays},
            "accesses": [{"op": "load", "array": name, "index": "threadIdx.x"}
                         for name in ("g", *arrays)]}


def test_shared_arrays_are_placed_per_block_from_byte_0():
    k = kernel_for(pattern_from_dict(doc(
        a={"space": "shared", "dtype": "int8", "length": 65},
        b={"space": "shared", "dtype": "float64", "length": 64},
        h={"dtype": "float32", "length": 64},
        c={"space": "shared", "dtype": "float32", "length": 64, "base": 1000},
        d={"space": "shared", "dtype": "float32", "length": 64, "offset_bytes": 4})))
    assert {n: a.address0 for n, a in k.arrays.items()} == {
        "g": 0, "a": 0, "b": 80, "h": 512, "c": 1000, "d": 1264 + 4}
    assert [i.name for i in k.instructions] == ["load g", "load h"]
    assert [i.name for i in k.shared_instructions] == ["load a", "load b", "load c", "load d"]


@pytest.mark.parametrize("change, message", [
    ({"space": "local"}, "arrays.s.space: expected 'global' or 'shared', got 'local'"),
])
def test_bad_space(change, message):
    with pytest.raises(PatternError) as err:
        pattern_from_dict(doc(s={"dtype": "float32", "length": 64, **change}))
    assert str(err.value) == message


def test_cuda_patterns_take_shared_arrays_from_the_source():
    d = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
         "arrays": {"s": {"space": "shared", "length": 32}},
         "kernel": {"code": "__global__ void k(float* s) {}", "function": "k"}}
    with pytest.raises(PatternError, match=r"^arrays\.s\.space: a CUDA kernel's shared arrays"):
        pattern_from_dict(d)


@pytest.mark.parametrize("stop, message", [
    (10**9, r"^launch: the launch of 128 threads x \(1,000,000,000 executions of accesses\[1\]\)"),
    ("1000000000 + threadIdx.x", r"^accesses\[1\]\.loops\[0\]: this loop"),
])
def test_shared_loops_spend_the_budget(stop, message):
    """Sized up front where the trips are constants, else where the loop starts."""
    d = doc(s={"space": "shared", "dtype": "float32", "length": 64})
    d["accesses"][1]["loops"] = [{"var": "j", "start": 0, "stop": stop}]
    with pytest.raises(PatternError, match=message):
        analyze(pattern_from_dict(d), budget=Budget(work=10**6))


def test_warps_the_global_pass_skipped_are_counted_for_their_shared_accesses():
    """A front end may count global accesses in closed form without running the kernel's
    events: the counter then runs those warps for their shared accesses alone."""
    p = load_pattern(EXAMPLES / "shared-reduction.sectorviz.json")
    whole = analyze(p)
    alone = SharedCounter(kernel_for(p), 3).added_to(whole)  # no global pass ran
    assert alone.shared == whole.shared and alone.shared_totals == whole.shared_totals


def test_closed_forms_and_lane_path_agree_with_shared_accesses():
    p = load_pattern(EXAMPLES / "transpose-tiled.sectorviz.json")
    kernel = kernel_for(p)
    assert sorted(kernel.closed_forms) == [0, 1]  # both global accesses, by global index
    closed = analyze(p)
    saved = kernel.__dict__.pop("closed_forms")
    kernel.__dict__["closed_forms"] = {}
    try:
        lanes = analyze(p)
    finally:
        kernel.__dict__["closed_forms"] = saved
    assert lanes.instructions == closed.instructions and lanes.shared == closed.shared


# ---------------------------------------------------------------- report


def test_json_keeps_instructions_global_and_adds_shared(capsys):
    path = str(EXAMPLES / "transpose-tiled.sectorviz.json")
    assert main(["report", "--json", "--quiet", path]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [i["name"] for i in out["instructions"]] == ["load a[row][col]",
                                                        "store c[out_row][out_col]"]
    assert out["totals"]["sectors"] == 8 * out["warps"]
    assert "32 different banks: 1 wavefront, conflict-free" in out["shared"][1].pop(
        "explanation")
    assert out["shared"][1] == {
        "name": "load tile[tx][ty]", "op": "load", "array": "tile", "width": 4, "line": None,
        "column": None, "source": None, "ptx": None, "sass": None, "sass_offset": None,
        "file": None, "requests": 32768,
        "active_lanes": 32768 * 32,
        "wavefronts": 32768, "ideal_wavefronts": 32768, "bank_conflicts": 0,
        "wavefronts_per_request": 1.0, "min": 1, "max": 1, "mode": 1}
    assert out["shared_totals"]["wavefronts"] == 65536


def test_report_prints_the_shared_step_after_the_global_ones(capsys):
    assert main(["report", "--quiet", str(EXAMPLES / "shared-tile-column.sectorviz.json")]) == 0
    text = capsys.readouterr().out
    shared = text.index("6. Shared memory")
    assert text.index("5. Traffic at named boundaries") < shared
    lines = text[shared:].splitlines()
    k = next(i for i, x in enumerate(lines) if x.strip().startswith("load tile[tx][ty]"))
    assert lines[k].split()[2:] == "4,096 wavefronts in 128 requests (32.00 per request), " \
                                   "ideal 128".split()
    assert lines[k + 1].strip().startswith("3,968 bank conflicts; n-way typical 32, min 32")
    for words in ("compute capability 5.0", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
                  "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "arbitration"):
        assert words in text[shared:]


def test_no_shared_section_without_shared_arrays(capsys):
    assert main(["report", "--quiet", str(EXAMPLES / "vector-add.sectorviz.json")]) == 0
    assert "6. Shared memory" not in capsys.readouterr().out
    assert analyze(load_pattern(EXAMPLES / "vector-add.sectorviz.json")).shared == ()


def test_reference_counts_inactive_lanes_out():
    assert tally([(4, list(range(0, 128, 4)), [False] * 32),
                  (4, [0] * 32, [True] + [False] * 31)]) == (1, 1, 1, 1, 0, 1, 1, 1)


def test_per_warp_wavefronts_and_the_overview_rows():
    """analyze(per_warp=True) keeps each warp's wavefronts, ideal and requests of every
    shared instruction; the overview bins them after the global rows."""
    from sectorviz.scene.overview import overview_bins

    p = load_pattern(EXAMPLES / "shared-reduction.sectorviz.json")
    a = analyze(p, per_warp=True)
    waves, ideal, requests = a.per_warp_shared
    assert [(int(w.sum()), int(i.sum()), int(r.sum())) for w, i, r in zip(waves, ideal, requests)] \
        == [(s.wavefronts, s.ideal_wavefronts, s.requests) for s in a.shared]
    # interleaved, first load: warp 0 of each block runs all 8 steps (2+4+8+8+8+4+2+1 = 37
    # wavefronts in 8 requests), warps 1-3 the first two or one, warps 4-7 none
    assert waves[1][:8].tolist() == [37, 6, 2, 2, 0, 0, 0, 0]
    assert requests[1][:8].tolist() == [8, 2, 1, 1, 0, 0, 0, 0]
    cells = overview_bins(a, a.warps, len(a.shared))
    assert cells.ratio.shape == (2 + 7, a.warps)
    assert cells.ratio[3, :4].tolist() == [37 / 8, 3.0, 2.0, 2.0]
    assert np.isnan(cells.ratio[3, 4])
    assert analyze(p).per_warp_shared is None



def test_closed_forms_count_the_shared_side_of_a_big_launch_within_a_small_budget():
    """The tiled transpose's shared tiles are counted from the closed forms' batches, so a
    budget far below the lane path's cost (about 36.5 M units as written) still gives every
    shared figure; as written the debug compile keeps `cta` in a stack-frame slot, whose
    accesses (not counted) the closed forms step over."""
    path = EXAMPLES / "transpose-tiled-cuda.sectorviz.json"
    small = analyze(load_pattern(path), budget=Budget(work=3_000_000))
    full = analyze(load_pattern(path))
    assert small == full and small.shared_note is None
    assert full.shared_totals.wavefronts == 65536


BYTE_STEPS = """
__global__ void k(float *out) {
    __shared__ unsigned char s[1024];
    for (int j = 0; j < 4; ++j) s[threadIdx.x * 4 + j] = j;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}
"""


def test_shared_accesses_past_the_budget_leave_a_note_and_the_global_figures(capsys, tmp_path):
    """Closed forms count the global side of a big launch cheaply; a shared side they cannot
    count (byte steps, which move lanes within their bank words) needs the lane path: past
    the budget it is not counted, says why, and the global numbers stand."""
    (tmp_path / "bytes.cu").write_text(BYTE_STEPS)
    doc = {"format": "sectorviz.pattern/1", "name": "bytes", "launch": {"grid": [4096],
           "block": [256]}, "arrays": {"out": {"dtype": "float32", "length": 4096 * 256}},
           "kernel": {"source": "bytes.cu", "function": "k"}}
    path = tmp_path / "bytes.sectorviz.json"
    path.write_text(json.dumps(doc))
    small = analyze(load_pattern(path), budget=Budget(work=3_000_000))
    full = analyze(load_pattern(path))
    assert small.shared == () and small.shared_totals is None
    assert small.shared_note.startswith("not counted: the shared accesses of 32,768 warps")
    assert small.totals == full.totals and full.shared_note is None
    assert full.shared_totals.requests == 32768 * 4
    assert main(["report", str(path), "--budget", "3000000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["shared_note"] == small.shared_note
    assert main(["report", str(path), "--budget", "3000000"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^  shared memory +not counted$", out, re.M)
    assert small.shared_note in " ".join(out.split())  # the note wraps at 100 columns
