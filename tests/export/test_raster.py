"""PNG and PDF are rendered from the SVG: sizes follow the scale, bytes are reproducible."""

import re
import shutil
import subprocess

import pytest
from PySide6.QtGui import QImage

from sectorviz.export.formats import diagram_bytes, diagram_svg
from sectorviz.gather.diagrams import diagram_scene
from sectorviz.scene.diagrams import DiagramSpec


def image(data: bytes) -> QImage:
    img = QImage()
    assert img.loadFromData(data, "PNG")
    return img


@pytest.mark.parametrize("scale", [1, 2, 3, 4])
def test_png_size_follows_the_scale(crossing, scale):
    scene = diagram_scene(crossing, DiagramSpec())
    img = image(diagram_bytes(crossing, [DiagramSpec()], ".png", scale))
    assert (img.width(), img.height()) == (scene.width * scale, scene.height * scale)


def test_png_is_reproducible(crossing):
    spec = [DiagramSpec(kind="warp", theme="dark")]
    assert diagram_bytes(crossing, spec, ".png", 2) == diagram_bytes(crossing, spec, ".png", 2)


def test_png_draws_the_diagram(crossing):
    img = image(diagram_bytes(crossing, [DiagramSpec()], ".png", 1))
    colours = {img.pixel(x, y) & 0xFFFFFF for x in range(0, img.width(), 3)
               for y in range(0, img.height(), 3)}
    assert 0xFFFFFF in colours and 0x0072B2 in colours and 0xD55E00 in colours


def test_transparent_png(crossing):
    img = image(diagram_bytes(crossing, [DiagramSpec()], ".png", 1, transparent=True))
    assert img.hasAlphaChannel() and img.pixelColor(1, 1).alpha() == 0
    opaque = image(diagram_bytes(crossing, [DiagramSpec()], ".png", 1))
    assert opaque.pixelColor(1, 1).alpha() == 255


def test_pdf_is_reproducible_and_has_a_page_per_warp(partial):
    specs = [DiagramSpec(warp=w) for w in (29, 30, 31)]
    pdf = diagram_bytes(partial, specs, ".pdf")
    assert pdf.startswith(b"%PDF") and pdf == diagram_bytes(partial, specs, ".pdf")
    assert len(re.findall(rb"/Type\s*/Page(?!s)", pdf)) == 3


@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="pdftoppm (poppler-utils) missing")
def test_pdf_renders(tmp_path, crossing):
    scene = diagram_scene(crossing, DiagramSpec())
    path = tmp_path / "d.pdf"
    path.write_bytes(diagram_bytes(crossing, [DiagramSpec(), DiagramSpec(theme="dark")], ".pdf"))
    subprocess.run(["pdftoppm", "-r", "96", "-png", str(path), str(tmp_path / "page")],
                   check=True, capture_output=True)
    pages = sorted(tmp_path.glob("page-*.png"))
    assert len(pages) == 2
    img = QImage(str(pages[0]))
    assert abs(img.width() - scene.width) <= 1 and abs(img.height() - scene.height) <= 1
    colours = {img.pixel(x, y) & 0xFFFFFF for x in range(0, img.width(), 3)
               for y in range(0, img.height(), 3)}
    assert 0x0072B2 in colours
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(path), "-"], check=True,
                              capture_output=True, text=True).stdout
        assert "12-byte structs" in text and "crosses" in text


def test_svg_is_what_the_png_draws(crossing):
    """The PNG comes from the same SVG text the .svg file holds."""
    from sectorviz.export.raster import png_bytes
    svg = diagram_svg(crossing, DiagramSpec())
    assert png_bytes(svg, 2) == diagram_bytes(crossing, [DiagramSpec()], ".png", 2)
