"""Scene -> SVG text: one element per shape, real <text>, presentation attributes only.

Text is made safe for XML (export/escape.py: no lone surrogate or control character can break
the file). Only SVG Tiny 1.2 features are used (rect, line, text, transform) so Qt's
QSvgRenderer draws the file exactly as browsers do; PNG and PDF are rendered from this text. Classes
and data-* attributes let a reader restyle with CSS: `.hit.crossing { fill: red }`.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from ..scene.shapes import Line, Rect, Scene, Text, num
from .escape import xml_text


def _rect(r: Rect) -> str:
    attrs = f' class="{r.css}"' if r.css else ""
    attrs += "".join(f" data-{k}={quoteattr(xml_text(v))}" for k, v in r.data)
    stroke = f' stroke="{r.stroke}" stroke-width="0.75"' if r.stroke else ""
    return (f'<rect{attrs} x="{num(r.x)}" y="{num(r.y)}" width="{num(r.w)}" '
            f'height="{num(r.h)}" fill="{r.fill}"{stroke}/>')


def _line(ln: Line) -> str:
    attrs = f' class="{ln.css}"' if ln.css else ""
    dash = f' stroke-dasharray="{num(2 * ln.width)} {num(2 * ln.width)}"' if ln.dash else ""
    return (f'<line{attrs} x1="{num(ln.x1)}" y1="{num(ln.y1)}" x2="{num(ln.x2)}" '
            f'y2="{num(ln.y2)}" stroke="{ln.stroke}" stroke-width="{num(ln.width)}"{dash}/>')


def _text(t: Text) -> str:
    attrs = f' class="{t.css}"' if t.css else ""
    if t.anchor != "start":
        attrs += f' text-anchor="{t.anchor}"'
    if t.bold:
        attrs += ' font-weight="bold"'
    if t.rotate:
        attrs += f' transform="rotate(-90 {num(t.x)} {num(t.y)})"'
    return (f'<text{attrs} x="{num(t.x)}" y="{num(t.y)}" font-size="{num(t.size)}" '
            f'fill="{t.fill}">{escape(xml_text(t.text))}</text>')


def scene_svg(scene: Scene, transparent: bool = False) -> str:
    """The SVG document of a scene; `transparent` leaves out the background rectangle."""
    w, h = num(scene.width), num(scene.height)
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny" '
        f'width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        f'font-family={quoteattr(scene.font_family)}>',
        f"<title>{escape(xml_text(scene.title))}</title>",
    ]
    if not transparent:
        out.append(f'<rect class="background" x="0" y="0" width="{w}" height="{h}" '
                   f'fill="{scene.background}"/>')
    for shape in scene.shapes:
        if isinstance(shape, Rect):
            out.append(_rect(shape))
        elif isinstance(shape, Line):
            out.append(_line(shape))
        else:
            out.append(_text(shape))
    out.append("</svg>")
    return "\n".join(out) + "\n"
