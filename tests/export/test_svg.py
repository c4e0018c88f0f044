"""The SVG is written from the model: its hit cells are exactly GridLayout.hits."""

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sectorviz.export.formats import diagram_svg
from sectorviz.model import PatternError, pattern_from_dict, warp_detail
from sectorviz.model.frontend import kernel_for
from sectorviz.scene.diagrams import DiagramSpec
from sectorviz.scene.grid import GapColumn, grid_layout
from sectorviz.scene.palette import THEMES

NS = "{http://www.w3.org/2000/svg}"
GOLDEN = Path(__file__).parent / "golden"


def layout_of(pattern, warp, k, execution=0):
    kernel = kernel_for(pattern)
    ins = kernel.instructions[k]
    detail = warp_detail(pattern, warp)
    return grid_layout(detail.executions[k][execution], ins.width, pattern.sector_bytes,
                       kernel.arrays[ins.array].address0, detail.valid)


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode())


def classed(root: ET.Element, css: str) -> list[ET.Element]:
    return [e for e in root.iter() if css in e.get("class", "").split()]


def hits(root: ET.Element) -> list[tuple[int, int]]:
    return sorted((int(e.get("data-lane")), int(e.get("data-sector")))
                  for e in classed(root, "hit"))


def texts(root: ET.Element) -> list[str]:
    return [e.text for e in root.iter(f"{NS}text")]


@pytest.mark.parametrize("name, warp, k", [
    ("struct12-crossing", 0, 0), ("partial-warp", 31, 0), ("partial-warp", 31, 1),
    ("gather-distinct", 0, 1), ("gather-distinct", 5, 0), ("row-sum-loop", 3, 0),
    ("transpose-naive", 7, 1), ("float4-load", 0, 0),
])
def test_hits_are_the_models(example, name, warp, k):
    pattern = example(name)
    root = parse(diagram_svg(pattern, DiagramSpec(warp=warp, instruction=k)))
    assert hits(root) == sorted(layout_of(pattern, warp, k).hits)


def test_broadcast_is_one_sector_shared_by_all_lanes(broadcast):
    root = parse(diagram_svg(broadcast, DiagramSpec()))
    assert hits(root) == [(lane, 0) for lane in range(32)]
    assert all("shared" in e.get("class") for e in classed(root, "hit"))
    assert len(classed(root, "sector")) == 1
    assert "1 sector (ideal 1)" in " ".join(texts(root))


def test_crossing_lanes_are_marked(crossing):
    layout = layout_of(crossing, 0, 0)
    root = parse(diagram_svg(crossing, DiagramSpec()))
    marked = {int(e.get("data-lane")) for e in classed(root, "hit") if "crossing" in e.get("class")}
    assert marked == {lane for lane in range(32) if layout.crossing[lane]} and marked
    assert texts(root).count("crosses") == len(marked)


def test_inactive_lanes_are_greyed(partial):
    layout = layout_of(partial, 31, 0)
    root = parse(diagram_svg(partial, DiagramSpec(warp=31)))
    bands = {int(e.get("data-lane")) for e in classed(root, "inactive")}
    assert bands == {lane for lane in range(32) if not layout.active[lane]} == set(range(8, 32))
    assert "lanes 8-31 inactive" in texts(root)


def test_labels_name_sectors_offsets_and_used_bytes(crossing):
    layout = layout_of(crossing, 0, 0)
    root = parse(diagram_svg(crossing, DiagramSpec()))
    words = texts(root)
    assert [e.text for e in classed(root, "address")] == \
        [f"0x{c.address:x}" for c in layout.columns]
    assert [e.text for e in classed(root, "offset")] == [f"{c.relative:,}" for c in layout.columns]
    assert [e.text for e in classed(root, "used-bytes")] == [str(c.used_bytes)
                                                             for c in layout.columns]
    assert [str(lane) for lane in range(32)] == [e.text for e in classed(root, "lane")]
    caption = " ".join(e.text for e in classed(root, "caption"))
    for part in ("12-byte structs", "warp 0", "load p[lane]", "12 sectors", "ideal 12",
                 "useful 100.0%"):
        assert part in caption
    assert "lane spans two sectors" in words


def test_gap_columns_show_the_skipped_bytes(example):
    pattern = example("row-sum-loop")
    layout = layout_of(pattern, 0, 0)
    gaps = [c for c in layout.columns if isinstance(c, GapColumn)]
    root = parse(diagram_svg(pattern, DiagramSpec()))
    assert [e.text for e in classed(root, "gap-bytes")] == [f"{g.skipped_bytes:,} B" for g in gaps]
    assert len(classed(root, "gap")) == 2 * len(gaps)


def test_warp_kind_draws_every_instruction(gather):
    root = parse(diagram_svg(gather, DiagramSpec(kind="warp", warp=2)))
    expected = sorted(h for k in range(3) for h in layout_of(gather, 2, k).hits)
    assert hits(root) == expected
    assert [e.text.split(":")[0] for e in classed(root, "panel-title")] == \
        [i.name for i in kernel_for(gather).instructions]


def half_idle():
    """Two blocks of 64 threads; only the first warp of each block passes the guard."""
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "half idle",
        "launch": {"grid": [2], "block": [64]}, "guard": "threadIdx.x < 32",
        "arrays": {"x": {"dtype": "float32", "length": 128}},
        "accesses": [{"name": "load x", "op": "load", "array": "x",
                      "index": "blockIdx.x * 64 + threadIdx.x"},
                     {"name": "store x", "op": "store", "array": "x",
                      "index": "blockIdx.x * 64 + threadIdx.x"}]}, None)


def test_warp_kind_marks_instructions_a_warp_does_not_run():
    root = parse(diagram_svg(half_idle(), DiagramSpec(kind="warp", warp=1)))
    assert hits(root) == [] and len(classed(root, "not-run")) == 2


def test_overview_has_one_cell_per_warp_and_instruction():
    pattern = half_idle()
    root = parse(diagram_svg(pattern, DiagramSpec(kind="overview", warp=2)))
    cells = classed(root, "bin")
    assert len(cells) == 2 * kernel_for(pattern).warps == 8
    idle = {e.get("data-warps") for e in cells if "idle" in e.get("class")}
    assert idle == {"1:2", "3:4"}
    assert {e.get("data-sectors-per-request") for e in cells} == {None, "4.00"}
    assert "warp 2" in texts(root)


def test_overview_bins_many_warps(gather):
    root = parse(diagram_svg(gather, DiagramSpec(kind="overview")))
    cells = classed(root, "bin")
    assert len(cells) % 3 == 0 and len(cells) // 3 < kernel_for(gather).warps
    assert {e.get("data-sectors-per-request") for e in cells
            if e.get("data-instruction") == "1"} == {"32.00"}


@pytest.mark.parametrize("name", sorted(THEMES))
@pytest.mark.parametrize("kind", ["grid", "warp", "overview"])
def test_every_theme_and_kind_parses(name, kind, crossing):
    svg = diagram_svg(crossing, DiagramSpec(kind=kind, theme=name))
    root = parse(svg)
    assert root.get("viewBox").startswith("0 0 ")
    assert svg == diagram_svg(crossing, DiagramSpec(kind=kind, theme=name))


def test_legend_and_caption_are_optional(crossing):
    root = parse(diagram_svg(crossing, DiagramSpec(legend=False, caption=False)))
    assert not classed(root, "legend") and not classed(root, "caption")
    assert len(hits(root)) == len(layout_of(crossing, 0, 0).hits)


def test_transparent_svg_has_no_background(crossing):
    assert not classed(parse(diagram_svg(crossing, DiagramSpec(), transparent=True)), "background")


def test_out_of_range_names_the_option(crossing):
    for spec, option in ((DiagramSpec(warp=1), "--warp"),
                         (DiagramSpec(instruction=3), "--instruction"),
                         (DiagramSpec(execution=1), "--execution"),
                         (DiagramSpec(kind="pie"), "--kind")):
        with pytest.raises(PatternError, match=option):
            diagram_svg(crossing, spec)


def test_golden_svg(one_load):
    """A strided load of four lanes: gaps, missing lanes; compared byte for byte."""
    pattern = one_load("threadIdx.x * 16", block=4, name="golden: stride 64 B")
    svg = diagram_svg(pattern, DiagramSpec())
    path = GOLDEN / "stride64-grid.svg"
    if os.environ.get("SECTORVIZ_UPDATE_GOLDEN"):
        path.write_text(svg)
    assert svg == path.read_text()


@pytest.mark.parametrize("name, wasted_bytes", [("float4-load", 0), ("struct12-crossing", 0),
                                                ("stride-32B", 28), ("shifted", None)])
def test_wasted_bytes_are_shaded(example, name, wasted_bytes):
    """Bytes of a fetched sector that no lane uses get the waste colour in every hit cell of
    that sector; a perfectly used sector has none."""
    pattern = example(name)
    layout = layout_of(pattern, 0, 0)
    root = parse(diagram_svg(pattern, DiagramSpec()))
    wasted = classed(root, "wasted")
    columns = {c.sector: c for c in layout.columns if not isinstance(c, GapColumn)}
    unused = {s: sum(b - a for a, b in c.unused) for s, c in columns.items()}
    expected = sum(len(columns[sector].unused) for _, sector in layout.hits)  # runs per cell
    assert len(wasted) == expected
    assert all(e.get("fill") == THEMES["light"].wasted for e in wasted)
    if wasted_bytes is not None:
        assert set(unused.values()) == {wasted_bytes}
    legend = [e.text for e in classed(root, "legend")]
    assert ("fetched, no lane uses (wasted)" in legend) == bool(wasted)
