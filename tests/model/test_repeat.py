"""Closed-form accounting of repeated accesses against executing them one by one: each warp,
each iteration vector, each active lane's bytes -> Python sets of sectors."""

from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model import repeat
from sectorviz.model.repeat import RepeatedBatch, account_repeated, sector_runs
from sectorviz.model.sectors import WARP_SIZE, account_rows

SB = 32
lane = np.arange(WARP_SIZE, dtype=np.int64)


@st.composite
def class_offsets(draw, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(classes, 32) lane offsets and valid lanes: progressions, broadcasts and scatters,
    some classes a whole number of sectors away from an earlier one."""
    offsets, valid = [], []
    for c in range(classes):
        if c and draw(st.booleans()):  # like an earlier class, some sectors along
            k = draw(st.integers(0, c - 1))
            offsets.append(offsets[k] + SB * draw(st.integers(-3, 3)))
            valid.append(valid[k])
            continue
        kind = draw(st.sampled_from(["progression", "scatter"]))
        if kind == "progression":
            step = draw(st.sampled_from([0, 1, 4, 8, 12, 36, -4]))
            row = draw(st.integers(-40, 40)) + step * lane
        else:
            row = np.array(draw(st.lists(st.integers(-64, 400), min_size=32, max_size=32)))
        offsets.append(row.astype(np.int64))
        valid.append(lane < draw(st.sampled_from([32, 32, 17, 1, 0])))
    return np.array(offsets), np.array(valid)


@st.composite
def batches(draw) -> RepeatedBatch:
    """A chunk of 1-4 warps, full or mixed (lanes among the valid ones), over 0-2 loops."""
    classes = draw(st.integers(1, 3))
    offsets, valid = draw(class_offsets(classes))
    warps = draw(st.integers(1, 4))
    cls = np.array(draw(st.lists(st.integers(0, classes - 1), min_size=warps, max_size=warps)))
    base = np.array(draw(st.lists(st.integers(512, 4096), min_size=warps, max_size=warps)),
                    dtype=np.int64)
    full = np.array(draw(st.lists(st.booleans(), min_size=warps, max_size=warps)))
    full &= valid[cls].any(axis=1)  # a full warp has a valid lane
    mixed = np.flatnonzero(~full)
    lanes = np.array([valid[cls[w]] & np.array(draw(st.lists(st.booleans(), min_size=32,
                                                              max_size=32))) for w in mixed],
                     dtype=bool).reshape(len(mixed), WARP_SIZE)
    loops = tuple(draw(st.lists(st.tuples(st.integers(1, 4),
                                          st.sampled_from([0, 4, 32, 100, 256, -64, 1024])),
                                max_size=2)))
    return RepeatedBatch(base, offsets, cls, valid, full, mixed, lanes, loops)


def executed(batch: RepeatedBatch, width: int):
    """(warp, sectors of one execution, useful bytes) for every execution, one by one."""
    lanes_of = {int(w): batch.lanes[i] for i, w in enumerate(batch.mixed)}
    for w in range(len(batch.base)):
        on = batch.valid[batch.cls[w]] if batch.full[w] else lanes_of.get(w)
        if on is None:
            continue
        for j in product(*(range(trips) for trips, _ in batch.loops)):
            shift = sum(i * stride for i, (_, stride) in zip(j, batch.loops))
            starts = [int(batch.base[w] + batch.offsets[batch.cls[w], n]) + shift
                      for n in np.flatnonzero(on)]
            touched = {b for s in starts for b in range(s, s + width)}
            yield w, {b // SB for b in touched}, len(touched), bool(on.any())


@settings(max_examples=300, deadline=None)
@given(batches(), st.sampled_from([1, 4, 8, 12, 16]))
def test_account_repeated_matches_executing_every_iteration(batch, width):
    acc = account_repeated(batch, width, SB)
    sectors = np.zeros(len(batch.base), dtype=np.int64)
    requests = np.zeros(len(batch.base), dtype=np.int64)
    histogram: dict[int, int] = {}
    useful = ideal = 0
    seen: set[int] = set()
    for w, touched, nbytes, asked in executed(batch, width):
        sectors[w] += len(touched)
        requests[w] += asked
        if asked:
            histogram[len(touched)] = histogram.get(len(touched), 0) + 1
        useful += nbytes
        ideal += -(-nbytes // SB)
        seen |= touched
    assert acc.sectors.tolist() == sectors.tolist()
    assert acc.requests.tolist() == requests.tolist()
    assert (acc.useful, acc.ideal) == (useful, ideal)
    assert {k: int(v) for k, v in enumerate(acc.histogram) if v} == histogram
    pieces = list(acc.runs)
    assert all((f[1:] >= f[:-1]).all() and (s[1:] >= s[:-1]).all() for f, s in pieces)
    assert {s for f, last in pieces for a, b in zip(f.tolist(), last.tolist())
            for s in range(a, b + 1)} == seen


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6).flatmap(class_offsets), st.sampled_from([1, 4, 12, 16]))
def test_class_tables_count_each_distinct_class_once(classes, width):
    offsets, valid = classes
    batch = RepeatedBatch(np.zeros(1, np.int64), offsets, np.zeros(1, np.int64), valid,
                          np.ones(1, bool), np.zeros(0, np.int64),
                          np.zeros((0, WARP_SIZE), bool), ())
    calls = []

    def spy(addresses, *args):
        calls.append(len(addresses))
        return account_rows(addresses, *args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(repeat, "account_rows", spy)
        counts, useful = repeat._class_tables(batch, width, SB)
    for c in range(len(offsets)):
        on = offsets[c][valid[c]].tolist()
        for phase in range(SB):
            starts = [o + phase for o in on]
            assert counts[c, phase] == len({b // SB for s in starts for b in range(s, s + width)})
        assert useful[c] == len({b for o in on for b in range(o, o + width)})
    # one call: SB rows (one per phase) for each class up to whole sectors and invalid lanes
    alike = {tuple(np.where(v, o - (o[v].min() // SB * SB if v.any() else 0), -1))
             for o, v in zip(offsets, valid)}
    assert calls == [SB * len(alike)]


def test_a_warp_tiled_column_walk_comes_ascending():
    """32 warps 16 KiB apart, a loop of 147 steps of 112 bytes nested in one of 128 steps of
    512 KiB (a row-major matrix walked by tiles): 32 x 147 x 128 = 602,112 one-sector runs in
    one ascending piece: a warp's 147 runs (sectors 0, 3, 7, ..., 511) below the next warp's
    (16384 / 32 = sector 512 on)."""
    warps = 32
    batch = RepeatedBatch(16384 * np.arange(warps, dtype=np.int64),
                          np.zeros((1, WARP_SIZE), np.int64), np.zeros(warps, np.int64),
                          np.ones((1, WARP_SIZE), bool), np.ones(warps, bool),
                          np.zeros(0, np.int64), np.zeros((0, WARP_SIZE), bool),
                          ((128, 524288), (147, 112)))
    (first, last), = sector_runs(batch, 4, SB)
    assert len(first) == 602112 and (first == last).all()
    assert (first[1:] >= first[:-1]).all()
    assert first[:3].tolist() == [0, 112 // SB, 224 // SB]
    assert first[147] == 16384 // SB  # the next warp's row follows the first row's 147


def test_classes_with_the_same_lanes_are_clustered_once(monkeypatch):
    """A block of 32 warps 128 bytes apart whose lanes read 4-byte words in a row: one kind
    of warp, one clustering; two kinds once the last class reads every other word."""
    offsets = np.tile(4 * lane, (32, 1))
    calls = []

    def spy(offsets, *args):
        calls.append(offsets)
        return clusters(offsets, *args)

    clusters = repeat._clusters
    monkeypatch.setattr(repeat, "_clusters", spy)
    batch = RepeatedBatch(128 * np.arange(32, dtype=np.int64), offsets, np.arange(32),
                          np.ones((32, WARP_SIZE), bool), np.ones(32, bool),
                          np.zeros(0, np.int64), np.zeros((0, WARP_SIZE), bool), ())
    (first, last), = sector_runs(batch, 4, SB)
    assert (first.tolist(), last.tolist()) == ([0], [127])  # 32 warps x 128 bytes, 128 sectors
    assert len(calls) == 1
    offsets[31] *= 2  # warp 31 reads bytes 3968 to 4219: sectors 124 to 131
    (first, last), = sector_runs(batch, 4, SB)
    assert (first.tolist(), last.tolist()) == ([0], [131])
    assert len(calls) == 3
