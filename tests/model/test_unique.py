"""The union of sector ids kept as runs, strided runs and a bitmap, against Python's set()."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model.budget import Budget, work_budget
from sectorviz.model.errors import PatternError
from sectorviz.model.unique import SectorSet, _merged_intervals

sector = st.integers(0, 400)
ids_1d = st.lists(sector, min_size=1, max_size=40)
consecutive = st.tuples(sector, st.integers(1, 60)).map(lambda t: list(range(t[0], t[0] + t[1])))
rows_2d = st.tuples(st.lists(sector, min_size=1, max_size=6), st.integers(2, 8),
                    st.integers(-9, 9))
runs = st.lists(st.tuples(sector, st.integers(0, 50)), min_size=1, max_size=10)
strided = st.tuples(st.lists(sector, min_size=1, max_size=6), st.integers(1, 12),
                    st.integers(2, 9))
op = st.one_of(
    st.tuples(st.just("ids"), st.one_of(ids_1d, consecutive)),
    st.tuples(st.just("rows"), rows_2d),
    st.tuples(st.just("runs"), runs),
    st.tuples(st.just("strided"), strided),
    st.tuples(st.just("count"), st.none()))


def apply(ops, seen: SectorSet, reference: set) -> None:
    """Run `ops` on both; at each "count" the two must agree."""
    for kind, arg in ops:
        if kind == "ids":
            seen.add(np.array(arg))
            reference.update(arg)
        elif kind == "rows":
            firsts, lanes, step = arg
            ids = np.array(firsts)[:, None] + step * np.arange(lanes)
            ids = np.maximum(ids, 0)  # a row clipped at 0 is no longer evenly spaced
            seen.add(ids)
            reference.update(ids.ravel().tolist())
        elif kind == "runs":
            first = np.array([a for a, _ in arg])
            seen.add_runs(first, first + np.array([n for _, n in arg]))
            reference.update(s for a, n in arg for s in range(a, a + n + 1))
        elif kind == "strided":
            firsts, count, stride = arg
            seen.add_strided(np.array(firsts), count, stride)
            reference.update(f + j * stride for f in firsts for j in range(count))
        else:
            assert seen.count() == len(reference)


@settings(max_examples=300, deadline=None)
@given(st.lists(op, min_size=1, max_size=12))
def test_count_matches_a_set(ops):
    seen, reference = SectorSet(), set()
    apply(ops, seen, reference)
    assert seen.count() == len(reference)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(op, max_size=8), min_size=1, max_size=4))
def test_union_count_matches_the_union_of_sets(per_set):
    sets, references = [], []
    for ops in per_set:
        seen, reference = SectorSet(), set()
        apply(ops, seen, reference)
        sets.append(seen)
        references.append(reference)
    expected = len(set().union(*references))
    assert sets[0].union_count(sets) == expected
    assert [s.count() for s in sets] == [len(r) for r in references]  # unchanged by the union


def union_runs(points: set[int]) -> list[tuple[int, int]]:
    """Sector ids -> the maximal runs [start, end) they form, ascending."""
    runs: list[tuple[int, int]] = []
    for p in sorted(points):
        if runs and runs[-1][1] == p:
            runs[-1] = (runs[-1][0], p + 1)
        else:
            runs.append((p, p + 1))
    return runs


intervals = st.lists(st.tuples(sector, st.integers(-2, 30)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(intervals, min_size=1, max_size=4))
def test_merged_intervals_are_the_maximal_runs_of_their_union(parts):
    """Overlapping, touching, empty and out-of-order intervals, as raw pushes or as several
    ascending parts (what a union concatenates)."""
    ordered = [sorted(part) for part in parts]
    for lists in (parts, ordered):
        flat = [iv for part in lists for iv in part]
        q0 = np.array([a for a, _ in flat], dtype=np.int64)
        q1 = q0 + np.array([n for _, n in flat], dtype=np.int64)
        merged = _merged_intervals(q0, q1)
        points = {x for a, n in flat for x in range(a, a + n)}
        assert list(zip(merged[0].tolist(), merged[1].tolist())) == union_runs(points)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=1, max_size=30))
def test_ascending_runs_merge_when_added(steps):
    """Runs whose firsts and lasts both ascend (overlapping or not) are merged on arrival:
    nothing is left pending, and the kept runs are the union's maximal runs."""
    first = np.cumsum([a for a, _ in steps])
    last = first + np.cumsum([b for _, b in steps])
    seen = SectorSet()
    seen.add_runs(first, last)
    assert not seen._pending
    points = {x for a, b in zip(first.tolist(), last.tolist()) for x in range(a, b + 1)}
    assert list(zip(seen._rects[0].tolist(), seen._rects[1].tolist())) == union_runs(points)


def test_a_union_keeps_its_first_set_as_it_is():
    """The union of {0..9} and {20..29} starts from the first set's runs, not a copy."""
    first, second = SectorSet(), SectorSet()
    first.add_runs(np.array([0]), np.array([9]))
    second.add_runs(np.array([20]), np.array([29]))
    union = SectorSet()
    union._absorb(first)
    assert union._rects[0] is first._rects[0]
    assert first.union_count([first, second]) == 20


def test_warps_of_a_huge_array_coalesce_into_one_run():
    """2^30 threads of 4 bytes: 2^22 warp runs of 4 sectors each fold into one run."""
    seen = SectorSet()
    for lo in range(0, 2**22, 2**18):
        first = 4 * np.arange(lo, lo + 2**18, dtype=np.int64) + 2**40
        seen.add_runs(first, first + 3)
    assert seen.count() == 2**24
    assert len(seen._rects[0]) == 1


def test_a_lattice_stays_one_rectangle_per_phase():
    """Lanes 64 sectors apart (a column of a row-major matrix), every phase in turn: the
    union is 8 phases x 2^20 rows, kept as at most 8 rectangles, however many warps."""
    seen = SectorSet()
    for phase in range(8):
        seen.add_strided(64 * 32 * np.arange(2**15, dtype=np.int64) + phase, 32, 64)
    assert seen.count() == 8 * 2**20
    assert len(seen._rects[0]) <= 8


def test_scattered_ids_fill_a_bitmap_over_their_span_only():
    seen = SectorSet()
    ids = np.random.default_rng(1).integers(2**40, 2**40 + 1000, 5000)
    seen.add(ids)
    assert seen.count() == len(np.unique(ids))
    assert seen._bits is not None and len(seen._bits) <= 1001


def test_a_bitmap_past_the_memory_cap_is_one_line_naming_the_limit():
    seen = SectorSet()
    with work_budget(Budget(memory=2**20)), pytest.raises(PatternError) as err:
        seen.add(np.array([0, 2**22, 17, 5, 2**21, 99, 3, 2**23]))
    assert str(err.value) == (
        "arrays: a bitmap of the 8,388,609 sectors that scattered accesses span (one byte per "
        "sector) needs 0.01 GiB, with 0.00 GiB already held past the memory cap of 0.00 GiB "
        "for one run; use smaller lengths or a smaller grid")


def test_arrays_of_terabytes_are_counted_exactly():
    """A 4 TiB array read at both ends and a 64 GiB strided one: no limit on the span."""
    from sectorviz.model import analyze, pattern_from_dict
    result = analyze(pattern_from_dict({
        "format": "sectorviz.pattern/1", "params": {"n": 2**40},
        "launch": {"grid": [64], "block": [256]},
        "arrays": {"x": {"dtype": "int32", "length": "n"},
                   "y": {"dtype": "float64", "length": 2**33}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
        "accesses": [{"name": "front", "op": "load", "array": "x", "index": "i"},
                     {"name": "back", "op": "load", "array": "x", "index": "n - 1 - i"},
                     {"op": "store", "array": "y", "index": "i * 131072"}]}))
    lanes = 64 * 256
    assert [s.unique_sectors for s in result.instructions] == [lanes // 8, lanes // 8, lanes]
    assert result.totals.unique_sectors == 2 * lanes // 8 + lanes


def test_a_long_run_holds_its_largest_need_not_every_merge():
    """4,096 runs merged 200 times: about 0.5 MiB at once, 100 MiB if every merge were kept."""
    first = 3 * np.arange(4096, dtype=np.int64)
    with work_budget(Budget(memory=2**21)) as budget:
        seen = SectorSet()
        for _ in range(200):
            seen.add_runs(first, first)
            assert seen.count() == 4096
    assert budget.held <= 2**20
