"""A scene (sectorviz.scene.shapes) drawn with QPainter, shape by shape: the window shows the
same drawing as the SVG, PDF, PNG and TikZ exports. Coordinates are diagram units."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen

from ..scene.shapes import Line, Rect, Scene, Text


@lru_cache(maxsize=64)
def scene_font(families: str, size: float, bold: bool) -> QFont:
    """The font of a Text: the first of the CSS family list Qt has, `size` units (pixels)."""
    font = QFont()
    font.setFamilies([f.strip() for f in families.split(",")])
    font.setPixelSize(max(1, round(size)))
    font.setBold(bold)
    return font


def _text(p: QPainter, t: Text, families: str) -> None:
    font = scene_font(families, t.size, t.bold)
    p.setFont(font)
    p.setPen(QColor(t.fill))
    advance = QFontMetricsF(font).horizontalAdvance(t.text)
    dx = {"start": 0.0, "middle": -advance / 2, "end": -advance}[t.anchor]
    if t.rotate:
        p.save()
        p.translate(t.x, t.y)
        p.rotate(-90)
        p.drawText(QPointF(dx, 0), t.text)
        p.restore()
    else:
        p.drawText(QPointF(t.x + dx, t.y), t.text)


def paint_scene(p: QPainter, scene: Scene, background: bool = True) -> None:
    """Every shape of `scene`, in order, at scene coordinates."""
    if background:
        p.fillRect(QRectF(0, 0, scene.width, scene.height), QColor(scene.background))
    for s in scene.shapes:
        if isinstance(s, Rect):
            rect = QRectF(s.x, s.y, s.w, s.h)
            p.fillRect(rect, QColor(s.fill))
            if s.stroke:
                p.setPen(QPen(QColor(s.stroke), 0.75))
                p.setBrush(Qt.NoBrush)
                p.drawRect(rect)
        elif isinstance(s, Line):
            pen = QPen(QColor(s.stroke), s.width)
            if s.dash:
                pen.setDashPattern([2.0, 2.0])
            p.setPen(pen)
            p.drawLine(QPointF(s.x1, s.y1), QPointF(s.x2, s.y2))
        else:
            _text(p, s, scene.font_family)
