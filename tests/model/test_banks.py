"""The bank model (model/banks.py) against a per-lane reference written from the rules."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import reference

from sectorviz.export.formats import diagram_svg
from sectorviz.model import PatternError, load_pattern
from sectorviz.model.banks import bank_rows, phase_lanes
from sectorviz.model.listing import listing_of
from sectorviz.paths import examples_dir
from sectorviz.scene.banks import bank_grid
from sectorviz.scene.spec import DiagramSpec


def check(rows: list[list[int]], width: int, active: list[list[bool]]) -> None:
    got = bank_rows(np.array(rows, dtype=np.int64), width, np.array(active, dtype=bool))
    want = [reference(r, width, a) for r, a in zip(rows, active)]
    assert list(zip(got.wavefronts.tolist(), got.ideal.tolist(), got.ways.tolist())) == want


WIDTHS = st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16, 24, 32])


@settings(max_examples=150, deadline=None)
@given(width=WIDTHS, data=st.data())
def test_bank_rows_match_the_per_lane_reference(width, data):
    n = data.draw(st.integers(1, 3))
    # small address ranges, so that lanes share words and banks often
    top = data.draw(st.sampled_from([64, 512, 8192]))
    rows = [data.draw(st.lists(st.integers(0, top), min_size=32, max_size=32)) for _ in range(n)]
    active = [data.draw(st.lists(st.booleans(), min_size=32, max_size=32)) for _ in range(n)]
    check(rows, width, active)


@settings(max_examples=100, deadline=None)
@given(width=st.sampled_from([1, 2, 4, 8, 16]), stride=st.integers(0, 40),
       start=st.integers(0, 64), active=st.lists(st.booleans(), min_size=32, max_size=32))
def test_strided_rows_match_the_reference(width, stride, start, active):
    check([[start + stride * width * lane for lane in range(32)]], width, [active])


@pytest.mark.parametrize("width, stride_words, wavefronts, ideal, ways", [
    (4, 1, 1, 1, 1), (4, 2, 2, 1, 2), (4, 3, 1, 1, 1), (4, 32, 32, 1, 32), (4, 0, 1, 1, 1),
    (8, 2, 2, 2, 1), (8, 4, 4, 2, 2), (16, 4, 4, 4, 1), (16, 8, 8, 4, 2), (1, 0, 1, 1, 1),
])
def test_canonical_rows(width, stride_words, wavefronts, ideal, ways):
    """Stride 1 and 3 words conflict-free, 2 two-way, 32 (a column of tile[32][32]) 32-way,
    0 a broadcast; 8- and 16-byte lanes ideally take 2 and 4 wavefronts."""
    address = np.arange(32, dtype=np.int64)[None, :] * 4 * stride_words
    rows = bank_rows(address, width, np.ones((1, 32), dtype=bool))
    assert (rows.wavefronts[0], rows.ideal[0], rows.ways[0]) == (wavefronts, ideal, ways)


def test_inactive_phases_take_no_wavefront():
    active = np.zeros((2, 32), dtype=bool)
    active[0, 20] = True  # one lane of the second half-warp
    rows = bank_rows(np.zeros((2, 32), dtype=np.int64), 8, active)
    assert (rows.wavefronts.tolist(), rows.ideal.tolist(), rows.ways.tolist()) == (
        [1, 0], [1, 0], [1, 0])


def test_phase_lanes():
    assert [phase_lanes(w) for w in (1, 2, 4, 8, 12, 16, 32)] == [32, 32, 32, 16, 8, 8, 8]


# ---------------------------------------------------------------- the lane-to-bank grid


@settings(max_examples=80, deadline=None)
@given(width=st.sampled_from([1, 2, 4, 8, 16]), data=st.data())
def test_bank_grid_cells_agree_with_the_counts(width, data):
    """Per phase and bank, the wavefront indices of the cells are 0..n-1 for n distinct
    words; the largest n per phase, summed, is the model's wavefront count."""
    address = np.array(data.draw(st.lists(st.integers(0, 600), min_size=32, max_size=32)))
    active = np.array(data.draw(st.lists(st.booleans(), min_size=32, max_size=32)))
    grid = bank_grid(address, width, active)
    served: dict[tuple[int, int], set[tuple[int, int]]] = {}
    for c in grid.cells:
        served.setdefault((c.phase, c.bank), set()).add((c.word, c.wavefront))
        assert c.bank == c.word % 32 and active[c.lane]
    for pairs in served.values():
        assert sorted(w for _, w in pairs) == list(range(len(pairs)))
    most: dict[int, int] = {}
    for (phase, _), pairs in served.items():
        most[phase] = max(most.get(phase, 0), len(pairs))
    assert grid.wavefronts == sum(most.values())
    assert {c.lane for c in grid.cells} == set(np.nonzero(active)[0])


def test_bank_grid_marks_conflicts_and_broadcasts():
    address = np.array([0] * 16 + [128 * k for k in range(16)])  # 16 lanes on one word, 16-way
    grid = bank_grid(address, 4, np.ones(32, dtype=bool))
    broadcast = [c.lane for c in grid.cells if c.broadcast]
    conflict = [c.lane for c in grid.cells if c.conflict]
    assert broadcast == list(range(17)) and conflict == list(range(32))
    assert (grid.wavefronts, grid.ideal, grid.ways) == (16, 1, 16)


def test_banks_diagram_svg_of_the_transpose_lesson():
    """A column of tile[32][32]: the 32 lanes in one bank, wavefronts 0..31; padded: one per
    bank, all in wavefront 0."""
    p = load_pattern(examples_dir() / "shared-tile-column.sectorviz.json")
    hits = {}
    for k in (1, 3):  # load tile[tx][ty], load padded[tx][ty]
        svg = diagram_svg(p, DiagramSpec(kind="banks", warp=3, instruction=k))
        hits[k] = [(int(lane), int(bank), int(wave)) for lane, bank, wave in re.findall(
            r'class="hit[^"]*" data-lane="(\d+)" data-bank="(\d+)" data-word="\d+" '
            r'data-phase="\d+" data-wavefront="(\d+)"', svg)]
    assert hits[1] == [(lane, 3, lane) for lane in range(32)]
    padded = 32 * 32  # words of tile before it
    assert hits[3] == [(lane, (padded + lane * 33 + 3) % 32, 0) for lane in range(32)]


def test_banks_diagram_indexes_the_shared_instructions():
    p = load_pattern(examples_dir() / "shared-tile-column.sectorviz.json")
    with pytest.raises(PatternError, match=r"^--instruction: instruction 4 outside \[0, 4\) "
                                           r"of the shared ones"):
        diagram_svg(p, DiagramSpec(kind="banks", instruction=4))
    assert listing_of(p).index("load padded[tx][ty]", "shared") == 3
    assert listing_of(p).index("load padded[tx][ty]", "all") == 4  # after "load in[row][tx]"
