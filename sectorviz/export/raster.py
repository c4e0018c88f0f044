"""SVG text -> PNG or PDF bytes through Qt's SVG renderer, so all formats show one drawing.

Units: one SVG unit is one CSS pixel; a PNG at scale s is (s * width) x (s * height) pixels
and a PDF page is width x height pixels at 96 per inch (0.75 pt each). Output is reproducible
byte for byte: no timestamps, a document id derived from the content.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import uuid
from pathlib import Path
from typing import Callable, Iterable, cast

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QHashSeed,
    QIODevice,
    QLibraryInfo,
    QMarginsF,
    QRectF,
    QSizeF,
    Qt,
    QUuid,
)
from PySide6.QtGui import QGuiApplication, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from ..model.errors import printable
from .formats import size_problem

CSS_DPI = 96
FIXED_PDF_DATE = b"D:20000101000000Z"  # stand in for Qt's creation time; see _fix_dates
FIXED_XMP_DATE = b"2000-01-01T00:00:00+00:00"


class NoPlatform(ValueError):
    """QT_QPA_PLATFORM names no Qt platform that can start here (Qt would abort)."""


def platform_plugins() -> set[str]:
    """The names of the Qt platform plugins installed (offscreen, xcb, wayland, ...)."""
    folders = [Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms"]
    folders += [Path(p) for p in os.environ.get("QT_QPA_PLATFORM_PLUGIN_PATH", "").split(
        os.pathsep) if p]
    names = set()
    for folder in folders:
        for path in folder.glob("*q*.*") if folder.is_dir() else ():
            stem = path.name.split(".")[0].removeprefix("lib").removeprefix("q")
            names.add(stem.removesuffix("-generic"))
    return names


def check_platform() -> None:
    """NoPlatform (one line) when QT_QPA_PLATFORM is set but none of the platforms it
    names ("a;b", each maybe with ":options") is installed, or xcb / wayland is named with
    no display to connect to: Qt would abort with several lines instead."""
    wanted = os.environ.get("QT_QPA_PLATFORM")
    if not wanted:
        return
    installed = platform_plugins()
    displays = {"xcb": "DISPLAY", "wayland": "WAYLAND_DISPLAY", "wayland-egl": "WAYLAND_DISPLAY"}
    for part in wanted.split(";"):
        name = part.split(":")[0].strip()
        if name in installed and (name not in displays or os.environ.get(displays[name])):
            return
    raise NoPlatform(f"QT_QPA_PLATFORM={printable(wanted)} names no Qt platform that can "
                     f"start here (installed: {', '.join(sorted(installed))}; offscreen "
                     "needs no display)")


def ensure_app() -> QGuiApplication:
    """The running Qt application, or a new one (offscreen without a display). A widgets
    QApplication, so that a process which exports first can still open windows later.
    NoPlatform before Qt starts when QT_QPA_PLATFORM cannot work (check_platform)."""
    app = cast("QGuiApplication | None", QGuiApplication.instance())  # typed QCoreApplication
    if app is None:
        if "QT_QPA_PLATFORM" not in os.environ and not os.environ.get("DISPLAY") \
                and not os.environ.get("WAYLAND_DISPLAY"):
            os.environ["QT_QPA_PLATFORM"] = "offscreen"
        check_platform()
        app = QApplication(["sectorviz-export"])
    return app


def _renderer(svg: str) -> tuple[QSvgRenderer, float, float]:
    ensure_app()
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        raise ValueError("the SVG text does not parse")
    box = renderer.viewBoxF()
    return renderer, box.width(), box.height()


def svg_size(svg: str) -> tuple[float, float]:
    """(width, height) of an SVG in units (its viewBox)."""
    _, w, h = _renderer(svg)
    return w, h


def render_image(svg: str, scale: float = 1, transparent: bool = False) -> QImage:
    """SVG -> an ARGB image `scale` times its size in units; the SVG's own background is kept
    unless `transparent` (then the SVG should be written without one). ValueError, before
    any pixel is allocated, for an image over formats.size_problem's bounds."""
    renderer, w, h = _renderer(svg)
    problem = size_problem(w, h, scale)
    if problem is not None:
        raise ValueError(f"diagram: {problem}")
    image = QImage(math.ceil(w * scale), math.ceil(h * scale),
                   QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent if transparent else Qt.GlobalColor.white)
    dots = round(scale * CSS_DPI / 0.0254)
    image.setDotsPerMeterX(dots)
    image.setDotsPerMeterY(dots)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    renderer.render(painter, QRectF(0, 0, w * scale, h * scale))
    painter.end()
    return image


def png_bytes(svg: str, scale: float = 1, transparent: bool = False) -> bytes:
    """SVG text -> PNG file bytes at `scale` (1 to 4)."""
    if not 1 <= scale <= 4:
        raise ValueError(f"scale {scale} outside [1, 4]")
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    # PySide6's stub types the format as bytes; the binding takes only a str
    render_image(svg, scale, transparent).save(buffer, "PNG")  # type: ignore[call-overload]
    return bytes(buffer.data().data())


def pdf_bytes(svgs: Callable[[], Iterable[str]], title: str) -> bytes:
    """SVG pages -> one PDF, each page the size of its drawing, text kept as text. `svgs()`
    yields the pages; it is called twice (a digest for the document id, then the drawing) so
    that only one page's SVG is held at a time.

    Qt keeps the embedded fonts in a hash, and writes them in its iteration order; the hash
    seed is made deterministic while the document is drawn so that order, and so the bytes,
    do not change from run to run."""
    digest = hashlib.sha1(uuid.NAMESPACE_URL.bytes + b"sectorviz:")
    for i, svg in enumerate(svgs()):
        digest.update(b"\n" * bool(i) + svg.encode("utf-8"))
    document_id = uuid.UUID(bytes=digest.digest()[:16], version=5)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    QHashSeed.setDeterministicGlobalSeed()
    try:
        writer = QPdfWriter(buffer)
        writer.setCreator("sectorviz")
        writer.setTitle(title)
        writer.setDocumentId(QUuid(str(document_id)))
        writer.setResolution(CSS_DPI)
        painter = None
        for renderer, w, h in map(_renderer, svgs()):
            size = QPageSize(QSizeF(w * 72 / CSS_DPI, h * 72 / CSS_DPI), QPageSize.Unit.Point,
                             "", QPageSize.SizeMatchPolicy.ExactMatch)
            writer.setPageLayout(QPageLayout(size, QPageLayout.Orientation.Portrait,
                                             QMarginsF(0, 0, 0, 0)))
            if painter is None:
                painter = QPainter(writer)
            else:
                writer.newPage()
            renderer.render(painter, QRectF(0, 0, w, h))
        assert painter is not None  # svgs() gives at least one page
        painter.end()
        del painter, writer
    finally:
        QHashSeed.resetRandomGlobalSeed()
    return _fix_dates(bytes(buffer.data().data()))


def _fix_dates(pdf: bytes) -> bytes:
    """Replace Qt's creation timestamps by fixed ones of the same length (so cross-reference
    offsets and stream lengths stay right): the info dictionary's /CreationDate and /ModDate,
    and the xmp:*Date attributes of the metadata stream."""
    pdf = re.sub(rb"(/(?:Creation|Mod)Date \()(D:\d{14}[^)]{0,8})(\))",
                 lambda m: m.group(1) + FIXED_PDF_DATE.ljust(len(m.group(2))) + m.group(3), pdf)
    return re.sub(rb'(xmp:(?:Create|Modify|Metadata)Date=")([^"]{0,40})(")',
                  lambda m: m.group(1) + FIXED_XMP_DATE[:len(m.group(2))].ljust(len(m.group(2)))
                  + m.group(3), pdf)
