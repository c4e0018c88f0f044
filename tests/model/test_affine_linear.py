"""Accesses that follow the global thread index are counted a chunk of warps at a time; the
numbers, per-warp counts and errors are the lane path's, in chunks of any size."""

from contextlib import contextmanager

from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import lane_path_only

from sectorviz.model import PatternError, affine, analysis, analyze, pattern_from_dict


@contextmanager
def chunks_of(warps: int):
    """Closed forms taken `warps` warps at a time (lanes per chunk, for the lane path)."""
    saved = analysis.chunk_lanes
    analysis.chunk_lanes = lambda memory, lane_bytes=0: warps
    try:
        yield
    finally:
        analysis.chunk_lanes = saved


@contextmanager
def warp_loops():
    """Whether each chunk was counted as one warp repeated over its warps (a list of bools,
    one per call of affine._as_warp_loop)."""
    taken: list[bool] = []
    saved = affine._as_warp_loop

    def spy(plan, coords):
        batch = saved(plan, coords)
        taken.append(batch is not None)
        return batch

    affine._as_warp_loop = spy
    try:
        yield taken
    finally:
        affine._as_warp_loop = saved


@settings(max_examples=150, deadline=None)
@given(bx=st.sampled_from([32, 64, 128]), by=st.integers(1, 2), gx=st.integers(1, 4),
       gy=st.integers(1, 2), step=st.one_of(st.sampled_from([-1, 0, 1]), st.integers(-3, 20)),
       shift=st.integers(0, 40),
       dtype=st.sampled_from(["uint8", "float32", "float4", {"bytes": 12}]),
       offset=st.integers(0, 33), n=st.integers(0, 1100),
       guard=st.sampled_from(["i < n", "i >= n", "n > i", "i <= n && 3 * i >= n", "1"]),
       chunk=st.integers(1, 5))
def test_linear_forms_match_the_lane_path(bx, by, gx, gy, step, shift, dtype, offset, n, guard,
                                          chunk):
    threads = bx * by * gx * gy
    low = max(0, -step) * (threads - 1)
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1",
        "params": {"n": n, "low": low + shift},
        "launch": {"grid": [gx, gy], "block": [bx, by]},
        "arrays": {"x": {"dtype": dtype, "length": low + max(step, 0) * (threads - 1) + shift + 1,
                         "offset_bytes": offset}},
        "let": {"t": "threadIdx.y * blockDim.x + threadIdx.x",
                "b": "blockIdx.y * gridDim.x + blockIdx.x",
                "i": "b * (blockDim.x * blockDim.y) + t"},
        "guard": guard,
        "accesses": [{"op": "load", "array": "x", "index": f"low + {step} * i"}]})
    kernel = analysis.kernel_for(p)
    assert affine._thread_step(kernel.closed_forms[0].address, kernel.block,
                               kernel.grid) is not None
    with chunks_of(chunk):
        fast = analyze(p, per_warp=True)
    slow = lane_path_only(p, per_warp=True)
    assert fast.instructions == slow.instructions and fast.totals == slow.totals
    assert (fast.per_warp_sectors == slow.per_warp_sectors).all()
    assert (fast.per_warp_requests == slow.per_warp_requests).all()
    with chunks_of(chunk), warp_loops() as taken:  # without per-warp counts: a warp repeated
        whole = analyze(p)
    assert whole.instructions == slow.instructions and whole.totals == slow.totals
    if guard == "1":  # every lane of every warp active and in range
        assert taken and all(taken)


def test_an_index_out_of_range_is_the_lane_paths_error():
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [8], "block": [64]},
        "arrays": {"x": {"dtype": "float32", "length": 500}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
        "accesses": [{"op": "load", "array": "x", "index": "i"}]})
    errors = []
    for run in (analyze, lane_path_only):
        try:
            with chunks_of(3):
                run(p)
        except PatternError as err:
            errors.append(str(err))
    assert errors == ["accesses[0].index: element index 500 outside [0, 500) "
                      "at warp 15 lane 20"] * 2


def test_forms_off_the_thread_index_take_the_per_warp_path():
    kernel = analysis.kernel_for(pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [4, 2], "block": [64]},
        "arrays": {"x": {"dtype": "float32", "length": 4096}},
        "accesses": [{"name": "row", "op": "load", "array": "x",
                      "index": "blockIdx.y * 1024 + blockIdx.x * 64 + threadIdx.x"},
                     {"name": "column", "op": "load", "array": "x",
                      "index": "threadIdx.x * 64 + blockIdx.x"}]}))
    steps = [affine._thread_step(kernel.closed_forms[k].address, kernel.block, kernel.grid)
             for k in (0, 1)]
    assert steps == [None, None]  # blockIdx.y steps 1024 bytes / 4, not 4 * 64 * 4 threads
