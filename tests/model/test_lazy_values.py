"""One warp's detail reads only the readable values its lanes index (values.expr, arange,
constant): no n-element array is built for it, and its numbers are those of the whole array."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model import analyze, load_pattern, pattern_from_dict, warp_detail
from sectorviz.model.frontend import kernel_for
from sectorviz.paths import examples_dir

N = 2**24
KINDS = {"expr": {"kind": "expr", "expr": "(i * 7 + i * i / 3) % 1000"},
         "arange": {"kind": "arange"}, "constant": {"kind": "constant", "value": 5}}


def gather(values, n=N, grid=64, name="lazy"):
    """Equal patterns share one cached kernel: `name` tells two apart."""
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": name, "launch": {"grid": [grid], "block": [128]},
        "params": {"n": n},
        "arrays": {"x": {"dtype": "float32", "length": 1024},
                   "idx": {"dtype": "int32", "length": "n", "values": values}},
        "let": {"t": "blockIdx.x * blockDim.x + threadIdx.x"},
        "accesses": [{"name": "gather", "op": "load", "array": "x",
                      "index": "idx[(t * 131071) % n] % 1024"}]})


def numbers(detail):
    return [(e.element.tolist(), e.address.tolist(), e.active.tolist(), e.sectors)
            for runs in detail.executions for e in runs]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_warp_detail_evaluates_only_the_values_it_reads(kind):
    lazy, whole = gather(KINDS[kind]), gather(KINDS[kind], name="whole")
    kernel_for(whole).values["idx"].whole()
    for warp in (0, 77, 255):
        assert numbers(warp_detail(lazy, warp)) == numbers(warp_detail(whole, warp))
    assert kernel_for(lazy).values["idx"]._whole is None  # never built for one warp


def test_the_grid_analysis_builds_the_whole_array_once():
    p = gather(KINDS["expr"], n=4096, grid=4)
    first = warp_detail(p, 3)
    a = analyze(p)
    values = kernel_for(p).values["idx"]
    assert values._whole is not None and len(values) == 4096
    i = np.arange(4096)
    assert values._whole.tolist() == ((i * 7 + i * i // 3) % 1000).tolist()
    other = gather(KINDS["expr"], n=4096, grid=4, name="other")
    assert numbers(first) == numbers(warp_detail(other, 3))  # lazily, before its analysis
    assert kernel_for(other).values["idx"]._whole is None
    assert a.instructions == analyze(other).instructions


@settings(max_examples=25, deadline=None)
@given(a=st.integers(-50, 50), b=st.integers(1, 9), warp=st.integers(0, 15))
def test_lazy_and_whole_values_agree(a, b, warp):
    """Against the whole array (a brute-force reference): any values.expr, any warp."""
    values = {"kind": "expr", "expr": f"(i * {a} + i / {b}) & 1023"}
    lazy, whole = gather(values, n=5000, grid=4), gather(values, n=5000, grid=4, name="whole")
    kernel_for(whole).values["idx"].whole()
    assert numbers(warp_detail(lazy, warp)) == numbers(warp_detail(whole, warp))


def test_a_cuda_kernel_reads_its_index_array_lazily_for_one_warp():
    path = examples_dir() / "gather-distinct-cuda.sectorviz.json"
    lazy = load_pattern(path)
    whole = pattern_from_dict({**lazy.to_dict(), "name": "whole"}, lazy.base_dir)
    for values in kernel_for(whole).values.values():
        values.whole()
    assert numbers(warp_detail(lazy, 5)) == numbers(warp_detail(whole, 5))
    assert kernel_for(lazy).values["index"]._whole is None
