"""Issue 22, item 2: a drawing's size and shape count are checked before anything is drawn
(16,384 px a side, 2^28 pixels), and a page range before any page is made."""

from __future__ import annotations

import json

import pytest

from sectorviz.cli import main
from sectorviz.export import formats
from sectorviz.model import PatternError
from sectorviz.scene.shapes import Scene


def wide_pattern(folder, element_bytes=16384):
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"dtype": {"bytes": element_bytes}, "length": 64}},
           "accesses": [{"name": "l", "op": "load", "array": "a", "index": "threadIdx.x"}]}
    path = folder / "wide.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


def scene(width, height, shapes=0):
    return Scene(width, height, "#fff", "sans-serif", "t", tuple(range(shapes)))


@pytest.mark.parametrize("w, h, scale, ok", [
    (16384, 100, 1, True), (16385, 100, 1, False), (8192, 100, 2, True), (8193, 100, 2, False),
    (16384, 16384, 1, True), (16384, 16385, 1, False)])
def test_sides_and_pixels_are_bounded(w, h, scale, ok):
    if ok:
        formats.check_drawable(scene(w, h), scale)
    else:
        with pytest.raises(PatternError, match=r"^diagram: it would be [\d,]+ x [\d,]+ px; at "
                                               r"most 16,384 px a side and 268,435,456 pixels"):
            formats.check_drawable(scene(w, h), scale)


def test_shapes_are_bounded():
    formats.check_drawable(scene(10, 10, formats.MAX_SHAPES))
    with pytest.raises(PatternError, match="^diagram: it holds 250,001 shapes; at most"):
        formats.check_drawable(scene(10, 10, formats.MAX_SHAPES + 1))


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf", ".tex"])
def test_a_huge_diagram_is_refused_before_it_is_drawn(tmp_path, capsys, monkeypatch, suffix):
    def never(*_args, **_kwargs):
        raise AssertionError("drawn")
    monkeypatch.setattr(formats, "scene_svg", never)
    monkeypatch.setattr(formats, "scene_tikz", never)
    path = wide_pattern(tmp_path)
    out = tmp_path / f"w{suffix}"
    assert main(["export", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: diagram: it would be ") and err.count("\n") == 1
    assert not out.exists()


def test_a_page_range_is_bounded_before_any_page(tmp_path, capsys):
    path = wide_pattern(tmp_path, 4)
    assert main(["export", str(path), "-o", str(tmp_path / "w.pdf"),
                 "--warps", "0:1000000"]) == 2
    assert capsys.readouterr().err == ("sectorviz export: --warps 0:1000000 asks for 1,000,000 "
                                       "diagrams; at most 256 pages or files per export\n")


def test_the_rasterizer_refuses_before_allocating(qapp):
    from sectorviz.export.raster import render_image
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="20000" height="10" '
           'viewBox="0 0 20000 10"></svg>')
    with pytest.raises(ValueError, match=r"^diagram: it would be 40,000 x 20 px"):
        render_image(svg, 2)
    assert render_image(svg.replace("20000", "8000"), 2).width() == 16000
