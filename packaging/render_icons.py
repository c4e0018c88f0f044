"""Render resources/icons/sectorviz.svg to the PNG sizes desktops ask for.

    python packaging/render_icons.py

writes resources/icons/hicolor/<N>x<N>/apps/sectorviz.png (the freedesktop icon theme layout,
so the folder can be copied into ~/.local/share/icons/) for every N in SIZES.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SOURCE = ICONS / "sectorviz.svg"
SIZES = (16, 24, 32, 48, 64, 128, 256)


def png_path(size: int) -> Path:
    """Where the `size` x `size` rendering of the icon lives."""
    return ICONS / "hicolor" / f"{size}x{size}" / "apps" / "sectorviz.png"


def render(sizes: tuple[int, ...] = SIZES) -> list[Path]:
    """Draw the SVG at each size with QSvgRenderer (antialiased, transparent corners)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise ValueError(f"{SOURCE}: not a valid SVG")
    written = []
    for size in sizes:
        image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        path = png_path(size)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(path), "PNG"):
            raise OSError(f"{path}: could not write")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in render():
        print(p.relative_to(ICONS.parent.parent))
