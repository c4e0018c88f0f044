"""The histogram kind: bars equal a brute-force count of sectors per request over the warps."""

import xml.etree.ElementTree as ET
from collections import Counter

import numpy as np
import pytest

from sectorviz.export.command import run_export
from sectorviz.export.formats import diagram_svg
from sectorviz.model import analyze, pattern_from_dict
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
    assert any(e.text == "ideal 3.91" for e in ideal)


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
