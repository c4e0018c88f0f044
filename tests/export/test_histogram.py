"""The histogram kind: bars equal a brute-force count of sectors per request over the warps."""

import xml.etree.ElementTree as ET
from collections import Counter

import numpy as np
import pytest

from sectorviz.command.export import run_export
from sectorviz.export.formats import diagram_svg
from sectorviz.model import analyze, pattern_from_dict
from sectorviz.model.analysis import analyzed
from sectorviz.model.frontend import kernel_for
from sectorviz.scene.diagrams import DiagramSpec
from sectorviz.scene.histogram import histogram_bars

GATHER = {
    "format": "sectorviz.pattern/1", "name": "small gather",
    "params": {"n": 1000},
    "launch": {"grid": [4], "block": [256]},
    "arrays": {"index": {"dtype": "int32", "length": "n",
                         "values": {"kind": "expr", "expr": "(i * 7) % (i % 5 + 3)"}},
               "data": {"dtype": "float32", "length": "n"}},
    "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
    "guard": "i < n",
    "accesses": [{"name": "load index[i]", "op": "load", "array": "index", "index": "i"},
                 {"name": "load data[index[i] * 37]", "op": "load", "array": "data",
                  "index": "(index[i] * 37 + i) % n"}],
}


def brute_force(pattern) -> list[Counter]:
    """Per instruction: sectors per request -> requests, from each active lane's bytes."""
    kernel = kernel_for(pattern)
    sb = pattern.sector_bytes
    counts = [Counter() for _ in kernel.instructions]
    for k, batch in kernel.trace(0, kernel.warps):
        width = kernel.instructions[k].width
        address = np.broadcast_to(batch.address, batch.active.shape)
        for row, active in zip(address, batch.active):
            if active.any():
                counts[k][len({s for a in row[active].tolist()
                               for s in range(a // sb, (a + width - 1) // sb + 1)})] += 1
    return counts


def bars_of(analysis, k) -> dict[int, int]:
    bars = histogram_bars(analysis, k)
    return dict(zip(bars.sectors.tolist(), bars.requests.tolist()))


@pytest.mark.parametrize("which", ["partial-warp", "gather"])
def test_bars_equal_brute_force(example, which):
    pattern = example("partial-warp") if which == "partial-warp" else pattern_from_dict(
        GATHER, None)
    analysis = analyze(pattern)
    expected = brute_force(pattern)
    assert len(analysis.histograms) == len(expected)
    for k, counter in enumerate(expected):
        assert bars_of(analysis, k) == dict(counter)
    if which == "partial-warp":  # 31 full warps of 4 sectors, the last one's 8 lanes in 1
        assert bars_of(analysis, 0) == {1: 1, 4: 31}
    else:
        assert len(bars_of(analysis, 1)) > 1  # the gather is uneven


def test_svg_bars_carry_sectors_and_requests(example):
    pattern = example("partial-warp")
    root = ET.fromstring(diagram_svg(pattern, DiagramSpec(kind="histogram", instruction=1))
                         .encode())
    bars = [e for e in root.iter() if "bar" in e.get("class", "").split()]
    assert [(e.get("data-sectors"), e.get("data-requests"), e.get("data-waste"))
            for e in bars] == [("1", "1", "ideal"), ("4", "31", "ideal")]
    heights = [float(e.get("height")) for e in bars]
    assert heights[1] == pytest.approx(31 * heights[0], abs=0.2)  # two decimals in SVG
    ideal = [e for e in root.iter() if "ideal" in e.get("class", "").split()]
    assert any(e.text == "ideal 4, warps 1 to 4" for e in ideal)  # not the average, 3.91
    band = [e for e in root.iter() if e.get("class") == "ideal-band"]
    assert [(e.get("data-low"), e.get("data-high")) for e in band] == [("1", "4")]
    x = lambda e: float(e.get("x"))  # noqa: E731
    assert x(band[0]) == pytest.approx(x(bars[0]), abs=0.02)  # from the 1-sector bar's edge
    assert x(band[0]) + float(band[0].get("width")) == pytest.approx(
        x(bars[1]) + float(bars[1].get("width")), abs=0.02)  # to the 4-sector bar's edge


def brute_force_ideals(pattern, k: int) -> list[tuple[float, int]]:
    """(ideal sectors per request, requests) of each warp running instruction k: the whole
    sectors each request's distinct used bytes need, averaged over the warp's requests."""
    kernel = kernel_for(pattern)
    sb, width = pattern.sector_bytes, kernel.instructions[k].width
    per_warp = []
    for warp in range(kernel.warps):
        ideal = requests = 0
        for j, batch in kernel.trace(warp, warp + 1):
            address, active = np.broadcast_to(batch.address, batch.active.shape)[0], \
                batch.active[0]
            if j == k and active.any():
                used = {b for a in address[active].tolist() for b in range(a, a + width)}
                ideal, requests = ideal + -(-len(used) // sb), requests + 1
        if requests:
            per_warp.append((round(ideal / requests, 2), requests))
    return per_warp


@pytest.mark.parametrize("name, k, ideal, low, high", [
    ("partial-warp", 1, 4, 1, 4), ("gather-distinct", 1, 4, 4, 4), ("row-sum-loop", 0, 4, 4, 4)])
def test_the_ideal_is_the_typical_warps_with_the_band_of_the_others(example, name, k, ideal,
                                                                    low, high):
    pattern = example(name)
    bars = histogram_bars(analyzed(pattern, per_warp=True), k)
    counted = Counter()
    for value, requests in brute_force_ideals(pattern, k):
        counted[value] += requests
    assert (bars.ideal, bars.low, bars.high) == (counted.most_common(1)[0][0], min(counted),
                                                 max(counted)) == (ideal, low, high)
    assert bars.band == (None if low == high else (low - 0.4, high + 0.4))
    assert histogram_bars(analyze(pattern), k).band is None  # no per-warp counts: the average


def test_gather_bars_are_coloured_by_waste():
    pattern = pattern_from_dict(GATHER, None)
    root = ET.fromstring(diagram_svg(pattern, DiagramSpec(kind="histogram", instruction=1))
                         .encode())
    bars = [e for e in root.iter() if "bar" in e.get("class", "").split()]
    assert {int(e.get("data-sectors")): int(e.get("data-requests")) for e in bars} == dict(
        brute_force(pattern)[1])
    assert len({e.get("fill") for e in bars}) > 1


def test_export_histogram_files(example, tmp_path):
    path = "resources/examples/partial-warp.sectorviz.json"
    for suffix in (".svg", ".png", ".pdf"):
        out = tmp_path / f"h{suffix}"
        assert run_export([path, "-o", str(out), "--kind", "histogram"]) == 0
        assert out.stat().st_size > 0
    assert run_export([path, "-o", str(tmp_path / "w.svg"), "--kind", "histogram",
                       "--warps", "0:2"]) == 2
