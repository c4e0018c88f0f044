"""Review: loop variables, loop refusal, and memory of wide-element accesses."""

import tracemalloc

import pytest

from sectorviz.model import PatternError, analyze, pattern_from_dict, warp_detail
from sectorviz.model.detail import warp_json
from sectorviz.model.frontend import kernel_for

F = "sectorviz.pattern/1"


def test_loop_variable_does_not_leak_into_later_instructions():
    p = pattern_from_dict({
        "format": F, "launch": {"grid": [1], "block": [32]},
        "arrays": {"x": {"dtype": "float32", "length": 1024}},
        "accesses": [
            {"name": "loop", "op": "load", "array": "x", "index": "k * 32 + threadIdx.x",
             "loops": [{"var": "k", "start": 0, "stop": 2}]},
            {"name": "plain", "op": "store", "array": "x", "index": "threadIdx.x"},
            {"name": "inner", "op": "load", "array": "x", "index": "j * 32 + m",
             "loops": [{"var": "j", "start": 0, "stop": 2},
                       {"var": "m", "start": "j", "stop": "j + 1"}]},
            {"name": "after", "op": "load", "array": "x", "index": "threadIdx.x"}]})
    doc = warp_json(p, warp_detail(p, 0))
    iterations = {ins["name"]: [e["iteration"] for e in ins["executions"]]
                  for ins in doc["instructions"]}
    assert iterations == {"loop": [{"k": 0}, {"k": 1}], "plain": [{}],
                          "inner": [{"j": 0, "m": 0}, {"j": 1, "m": 1}], "after": [{}]}


def test_an_overlong_loop_is_refused_before_it_runs():
    p = pattern_from_dict({
        "format": F, "launch": {"grid": [1], "block": [32]},
        "arrays": {"x": {"dtype": "float32", "length": 1024}},
        "accesses": [{"op": "load", "array": "x", "index": "threadIdx.x",
                      "loops": [{"var": "k", "start": "threadIdx.x", "stop": "1 << 40",
                                 "step": 1}]}]})
    trace = kernel_for(p).trace(0, 1)
    with pytest.raises(PatternError, match=r"accesses\[0\].loops\[0\]: this loop of "
                                           r"1,099,511,627,776 iterations over 32 lanes asks"):
        next(trace)


def test_a_loop_with_huge_bounds_is_refused_without_overflow():
    p = pattern_from_dict({
        "format": F, "launch": {"grid": [1], "block": [32]},
        "arrays": {"x": {"dtype": "float32", "length": 1024}},
        "accesses": [{"op": "load", "array": "x", "index": "threadIdx.x",
                      "loops": [{"var": "k", "start": 96, "stop": -9223372036854775807,
                                 "step": -32}]}]})
    with pytest.raises(PatternError, match=r"accesses\[0\].loops\[0\]: this loop of "
                                           r"288,230,376,151,711,\d+ iterations"):
        next(kernel_for(p).trace(0, 1))


def peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("block", [32, 33])
def test_wide_elements_are_streamed_in_small_chunks(block):
    """32 KiB elements touch 1,025 sectors per lane: chunks must shrink with the width."""
    p = pattern_from_dict({
        "format": F, "launch": {"grid": [64], "block": [block]},
        "arrays": {"x": {"dtype": {"bytes": 32768}, "length": 2 * 64 * block}},
        "accesses": [{"op": "load", "array": "x",
                      "index": "2 * (blockIdx.x * blockDim.x + threadIdx.x)"}]})
    kernel_for(p)
    s = analyze(p).instructions[0]
    assert s.sectors == 64 * block * 1024 and s.unique_sectors == s.sectors
    assert peak_bytes(lambda: analyze(p)) < 48 * 2**20


@pytest.mark.parametrize("values", [{"kind": "permutation", "seed": 3}, {"kind": "arange"},
                                    {"kind": "uniform", "low": 0, "high": 9, "seed": 1}])
def test_readable_values_are_built_without_a_second_copy(values):
    n = 2**21
    p = pattern_from_dict({
        "format": F, "launch": {"grid": [1], "block": [32]},
        "arrays": {"idx": {"dtype": "int32", "length": n, "values": values}},
        "accesses": [{"op": "load", "array": "idx", "index": "idx[threadIdx.x] % 32"}]})
    kernel = kernel_for(p)
    assert peak_bytes(lambda: kernel.values) < 1.5 * n * 8


def test_an_element_too_wide_to_count_is_refused_before_allocating():
    """A 16 MiB element touches 2^19 sectors per lane: one warp alone would need 128 MiB of
    sector ids (and a 256 MiB element, 2 GiB); refuse it by name instead."""
    p = pattern_from_dict({
        "format": F, "launch": {"grid": [1], "block": [33]},
        "arrays": {"x": {"dtype": {"bytes": 2**24}, "length": 40}},
        "accesses": [{"op": "load", "array": "x", "index": "threadIdx.x"}]})
    with pytest.raises(PatternError, match=r"arrays\.x\.dtype"):
        peak = peak_bytes(lambda: analyze(p))
        pytest.fail(f"analyzed, peak {peak} bytes")
    with pytest.raises(PatternError, match=r"arrays\.x\.dtype"):
        warp_detail(p, 1)


def test_per_warp_counts_too_large_to_keep_are_refused_before_allocating():
    """2^29 warps x 2 instructions of per-warp counts would be 12 GiB."""
    from sectorviz.model.analysis import Cancelled

    def stop(done, total):
        raise Cancelled

    p = pattern_from_dict({
        "format": F, "launch": {"grid": [2**24], "block": [1024]},
        "arrays": {"x": {"dtype": "float32", "length": 1024}},
        "accesses": [{"op": "load", "array": "x", "index": "threadIdx.x"},
                     {"op": "store", "array": "x", "index": "threadIdx.x"}]})
    with pytest.raises(PatternError, match="launch"):
        analyze(p, per_warp=True, progress=stop)
    with pytest.raises(Cancelled):  # without per-warp counts the same launch is fine
        analyze(p, progress=stop)


@pytest.mark.parametrize("inner_stop, message", [
    (40, r"launch: the launch of 32 threads x \(1,600 executions of accesses\[0\]\) asks for "
         r"3,328,000 units of work .* over the budget of 208,000 left"),
    ("40 + threadIdx.x * 0",  # bounds that vary per lane are sized where the loop starts
     r"accesses\[0\].loops\[1\]: this loop of 40 iterations over 32 lanes asks for 83,200 "
     r"units .* over the budget of 41,600 left")])
def test_nested_loops_are_capped_together(inner_stop, message):
    """Each loop alone fits the budget of 100 executions of one warp; together they do not."""
    from sectorviz.model.budget import BATCH_UNITS, Budget
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
        "arrays": {"x": {"dtype": "float32", "length": 64}},
        "accesses": [{"op": "load", "array": "x", "index": "j",
                      "loops": [{"var": "i", "start": 0, "stop": 40},
                                {"var": "j", "start": 0, "stop": inner_stop}]}]})
    with pytest.raises(PatternError, match=message):
        analyze(p, budget=Budget(work=100 * (32 + BATCH_UNITS)))
    with pytest.raises(PatternError, match=message.replace("launch: ", "warp: ")):
        warp_detail(p, 0, Budget(work=100 * (32 + BATCH_UNITS)))


def test_a_values_file_that_is_not_npy_says_so(tmp_path):
    (tmp_path / "idx.npy").write_text("root:x:0:0:root:/root:/bin/bash\n")
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
        "arrays": {"idx": {"dtype": "int32", "length": 32,
                           "values": {"kind": "file", "path": "idx.npy"}},
                   "x": {"dtype": "float32", "length": 64}},
        "accesses": [{"op": "load", "array": "x", "index": "idx[threadIdx.x]"}]}, tmp_path)
    with pytest.raises(PatternError,
                       match=r"arrays.idx.values.path: cannot read idx.npy: not a .npy file"):
        analyze(p)
