"""The sector primitive: exact seed cases, edge rules and a brute-force reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model import sector_counts
from sectorviz.model.sectors import useful_bytes

LANES = np.arange(32)


def row(addresses):
    return np.asarray(addresses, dtype=np.int64)[None, :]


@pytest.mark.parametrize("addresses, width, expected", [
    (4 * LANES, 4, 4),                      # aligned 4i: 4 sectors, 128 B
    (4 + 4 * LANES, 4, 5),                  # shifted 4 + 4i: 5 sectors, 160 B
    (8 * LANES, 4, 8),                      # stride 2 words: 8 sectors
    (32 * LANES, 4, 32),                    # 32i: 32 sectors, 1024 B
    (128 * LANES, 4, 32),                   # 128 B apart: 32 sectors
    (np.random.default_rng(1).permutation(32) * 4, 4, 4),  # permutation in one 128 B span
    (np.zeros(32, dtype=int), 4, 1),        # every lane the same word
    (8 * LANES, 8, 8),                      # float2
    (16 * LANES, 16, 16),                   # float4
    (12 * LANES, 12, 12),                   # 12-byte structs cross sectors: 384 B in 12
    (4096 * LANES, 4, 32),                  # transpose store, m = 1024
])
def test_seed_cases(addresses, width, expected):
    assert sector_counts(row(addresses), width).tolist() == [expected]


def test_half_warp_active():
    active = row(LANES < 16).astype(bool)
    assert sector_counts(row(4 * LANES), 4, active).tolist() == [2]


def test_no_active_lane_counts_zero_and_one_lane_counts_one():
    none = np.zeros((1, 32), dtype=bool)
    one = none.copy()
    one[0, 7] = True
    assert sector_counts(row(4 * LANES), 4, none).tolist() == [0]
    assert sector_counts(row(4 * LANES), 4, one).tolist() == [1]


def test_crossing_access_counts_both_sectors():
    addresses = np.full(32, 30)
    assert sector_counts(row(addresses), 4).tolist() == [2]


def test_rows_are_independent():
    addresses = np.stack([4 * LANES, 4 + 4 * LANES, 32 * LANES])
    assert sector_counts(addresses, 4).tolist() == [4, 5, 32]


def test_other_sector_sizes():
    assert sector_counts(row(4 * LANES), 4, sector_bytes=128).tolist() == [1]
    assert sector_counts(row(4 * LANES), 4, sector_bytes=64).tolist() == [2]


@pytest.mark.parametrize("kwargs, message", [
    (dict(addresses=row(4 * LANES - 8), width=4), "negative"),
    (dict(addresses=row(4 * LANES), width=0), "width"),
    (dict(addresses=row(4 * LANES), width=4, sector_bytes=24), "power of two"),
    (dict(addresses=row(4 * LANES), width=4, active=np.ones((2, 32), bool)), "shape"),
    (dict(addresses=4 * LANES, width=4), "2-D"),
    (dict(addresses=(4.0 * LANES)[None, :], width=4), "integers"),
])
def test_bad_arguments_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sector_counts(**kwargs)


def brute_force(addresses, width, active, sb):
    counts, useful = [], []
    for r in range(addresses.shape[0]):
        sectors, used = set(), set()
        for lane in range(addresses.shape[1]):
            if active[r, lane]:
                a = int(addresses[r, lane])
                sectors.update(range(a // sb, (a + width - 1) // sb + 1))
                used.update(range(a, a + width))
        counts.append(len(sectors))
        useful.append(len(used))
    return counts, useful


warps = st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.lists(st.lists(st.one_of(st.integers(0, 600), st.integers(0, 2**40)),
                      min_size=32, max_size=32), min_size=n, max_size=n),
    st.lists(st.lists(st.booleans(), min_size=32, max_size=32), min_size=n, max_size=n),
    st.sampled_from([1, 2, 3, 4, 8, 12, 16, 33, 100]),
    st.sampled_from([16, 32, 64, 128]),
))


@settings(max_examples=300, deadline=None)
@given(warps)
def test_matches_brute_force(case):
    addresses, active, width, sb = case
    addresses, active = np.array(addresses, dtype=np.int64), np.array(active, dtype=bool)
    counts, useful = brute_force(addresses, width, active, sb)
    assert sector_counts(addresses, width, active, sb).tolist() == counts
    assert useful_bytes(addresses, width, active).tolist() == useful


@settings(max_examples=100, deadline=None)
@given(st.permutations(list(range(32))), st.integers(0, 8), st.sampled_from([1, 4, 8, 16]))
def test_lane_order_does_not_matter(order, start_word, width):
    addresses = (start_word + np.arange(32)) * width
    assert (sector_counts(row(addresses), width).tolist()
            == sector_counts(row(addresses[list(order)]), width).tolist())


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2000), min_size=32, max_size=32))
def test_sorted_fast_path_agrees_with_sort_path(addresses):
    addresses = np.sort(np.array(addresses, dtype=np.int64))
    active = np.ones((1, 32), dtype=bool)
    active_with_one_off = active.copy()
    active_with_one_off[0, 0] = False
    # the fast path (all active, ordered) and the slow path (a lane off) must agree on the rest
    expected = brute_force(row(addresses[1:].tolist() + [addresses[-1]]), 4, active, 32)[0]
    assert sector_counts(row(addresses), 4, active_with_one_off).tolist() == expected
