"""The window's histogram shows the selected instruction's bars, the export's numbers."""

import pytest

from sectorviz.model import analyze, load_pattern
from sectorviz.paths import examples_dir
from sectorviz.scene.histogram import histogram_bars
from sectorviz.scene.palette import LIGHT


def drawn(window) -> dict[int, int]:
    opts = window.histogram.bars.opts
    return dict(zip((int(x) for x in opts["x"]), (int(h) for h in opts["height"])))


def test_histogram_follows_the_selected_instruction(open_window):
    window = open_window("gather-distinct")
    analysis = analyze(load_pattern(examples_dir() / "gather-distinct.sectorviz.json"))
    for k in (1, 0):
        window.document.select(instruction=k)
        bars = histogram_bars(analysis, k)
        assert drawn(window) == dict(zip(bars.sectors.tolist(), bars.requests.tolist()))
        assert window.histogram.ideal.value() == bars.ideal
    assert drawn(window) == {4: 32768}  # load index[i]: every warp 4 sectors
    window.document.select(instruction=1)
    assert drawn(window) == {32: 32768}
    assert [b.color().name() for b in window.histogram.bars.opts["brushes"]] == [LIGHT.waste[-1]]


def test_the_axis_is_the_exports_whole_sectors_per_request(open_window):
    """gather-distinct's load index[i]: every request 4 sectors; the axis runs over slots
    0..4 with a label at each whole number (not a zoom into 3.6..4.4)."""
    window = open_window("gather-distinct")
    window.document.select(instruction=0)
    (lo, hi), _ = window.histogram.plot.getViewBox().viewRange()
    assert (lo, hi) == (-0.5, 4.5)
    ticks = window.histogram.plot.getAxis("bottom")._tickLevels[0]
    assert [value for value, _ in ticks] == [0, 1, 2, 3, 4]
    window.document.select(instruction=1)  # 32 sectors per request: a label every 3 slots
    assert window.histogram.plot.getViewBox().viewRange()[0] == [-0.5, 32.5]
    assert [v for v, _ in window.histogram.plot.getAxis("bottom")._tickLevels[0]][:3] == [0, 3, 6]


def test_partial_warp_shows_the_last_warp(open_window):
    window = open_window("partial-warp")
    window.document.select(warp=31, instruction=1)
    assert drawn(window) == {1: 1, 4: 31}
    assert "min 1, mode 4, max 4" in window.histogram.status.text()


def test_the_ideal_is_the_typical_warps_and_boundary_warps_shade_a_band(open_window,
                                                                         wait_analysis):
    """partial-warp: 31 warps ideal 4 sectors per request, the last one 1 (8 lanes): the line
    at 4 (not the average 3.91), the band over the bars from 1 to 4; vector-add: no band."""
    window = open_window("partial-warp")
    window.document.select(instruction=1)
    view = window.histogram
    assert view.ideal.value() == 4 and view.band.isVisible()
    assert view.band.getRegion() == pytest.approx((0.6, 4.4))
    assert "ideal 4, warps 1 to 4" in view.status.text()
    assert window.open_path(examples_dir() / "vector-add.sectorviz.json")
    wait_analysis(window)
    assert view.ideal.value() == 4 and not view.band.isVisible()
    assert view.status.text().endswith("ideal 4")


def test_a_shared_instruction_shows_no_empty_axes(open_window):
    """transpose-tiled: instruction 3 reads the shared tile, which has no sectors per request:
    the plot hides (no axes from 0 to 1) and the status points at the grid; a global one
    shows it again."""
    window = open_window("transpose-tiled")
    window.document.select(instruction=3)
    assert not window.histogram.plot.isVisible()
    assert "shared instruction" in window.histogram.status.text()
    window.document.select(instruction=0)
    assert window.histogram.plot.isVisible() and drawn(window) == {4: 32768}


def test_the_requests_axis_counts_whole_requests(open_window):
    """partial-warp's bars of 31 requests and 1 request: the axis reads 0 and 31 (whole
    requests, the export's labels), never 15.5 or 0.5."""
    window = open_window("partial-warp")
    window.document.select(instruction=1)
    ticks = window.histogram.plot.getAxis("left")._tickLevels[0]
    assert ticks == [(0, "0"), (31, "31")]
    window.document.select(instruction=0)
    assert all(float(label.replace(",", "")).is_integer()
               for _, label in window.histogram.plot.getAxis("left")._tickLevels[0])
