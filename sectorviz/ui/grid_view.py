"""The lane-to-sector grid of the selected warp instruction, drawn as ONE pre-rendered item.

Rows are the 32 lanes; columns are the touched sectors in address order, with a narrow
continuation column for each run of untouched sectors. Inside a cell, the horizontal axis is
the sector's bytes 0..sector_bytes: the coloured span is [cell_lo, cell_hi) of that lane.
Item coordinates are view pixels (pg.GraphicsView keeps a 1:1 pixel range), so text stays
crisp; the picture is re-recorded when the data, the size or the theme changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics, QPainter, QPen, QPicture

from ..model.detail import lane_records
from ..model.grid import GapColumn, GridLayout, SectorColumn
from ..model.sectors import WARP_SIZE
from .accounting import lane_spacing, sectors_text
from .document import Change, Document, WarpView
from .theme import LIGHT, Theme

MAX_CELL = 128.0  # px: widest sector column (4 px per byte of a 32 B sector)
MIN_ROW, MAX_ROW = 8.0, 20.0  # px: lane row height
GAP_FRACTION = 0.5  # a continuation column's width, relative to a sector column
PAD = 8.0


@dataclass(frozen=True)
class Geometry:
    """Where things are, in view pixels: lane i occupies y in [top + i*row, top + (i+1)*row);
    column c of `layout.columns` occupies x in [xs[c], xs[c] + widths[c])."""

    left: float
    top: float
    row: float
    xs: tuple[float, ...]
    widths: tuple[float, ...]
    sector_cols: tuple[int, ...]  # indices into columns of the sector columns, in order

    @property
    def bottom(self) -> float:
        return self.top + WARP_SIZE * self.row

    @property
    def right(self) -> float:
        return self.xs[-1] + self.widths[-1] if self.xs else self.left


def _fonts() -> tuple[QFont, QFont, QFont]:
    base = QFont()
    base.setPointSizeF(9)
    small = QFont(base)
    small.setPointSizeF(8)
    bold = QFont(base)
    bold.setBold(True)
    return base, small, bold


def _lane_label(view: WarpView, lane: int) -> str:
    t = [int(a[lane]) for a in view.detail.thread]
    dims = sum(1 for d in view.kernel.block if d > 1) or 1
    return f"{lane:2d}  ({', '.join(str(v) for v in t[:max(dims, 1)])})"


class GridItem(pg.GraphicsObject):
    """One QPicture: caption, column headers, 32 lane rows of cells, used-bytes row, legend."""

    def __init__(self):
        super().__init__()
        self.view: WarpView | None = None
        self.theme: Theme = LIGHT
        self.size = (800.0, 600.0)
        self.geometry: Geometry | None = None
        self._picture = QPicture()
        self.setAcceptHoverEvents(True)

    # ------------------------------------------------------------ inputs

    def set_view(self, view: WarpView) -> None:
        self.view = view
        self._render()

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._render()

    def set_size(self, width: float, height: float) -> None:
        self.size = (width, height)
        self._render()

    # ------------------------------------------------------------ queries

    def cell_rect(self, lane: int, j: int) -> QRectF:
        """The rectangle of lane `lane` in the j-th sector column (item = view pixels)."""
        g = self.geometry
        c = g.sector_cols[j]
        return QRectF(g.xs[c], g.top + lane * g.row, g.widths[c], g.row)

    def hit_at(self, pos: QPointF) -> tuple[int, int] | None:
        """(lane, column index in layout.columns) under `pos`; column -1 over the lane labels;
        None outside the rows."""
        g = self.geometry
        if g is None or not g.top <= pos.y() < g.bottom:
            return None
        lane = int((pos.y() - g.top) // g.row)
        for c, (x, w) in enumerate(zip(g.xs, g.widths)):
            if x <= pos.x() < x + w:
                return lane, c
        return (lane, -1) if pos.x() < g.left else None

    def tooltip_at(self, pos: QPointF) -> str:
        """Lane, thread, block, element, address and sectors of the lane under `pos`."""
        where = self.hit_at(pos)
        v = self.view
        if where is None or v is None or v.execution is None:
            return ""
        lane, c = where
        if not v.detail.valid[lane]:
            return f"lane {lane}: no such thread (the block ends in a partial warp)"
        rec = lane_records(v.pattern, v.detail, v.selection.instruction, v.selection.run)[lane]
        head = (f"lane {lane}, thread {tuple(rec['thread'])}, block {tuple(rec['block'])}")
        if not rec["active"]:
            return head + "\ninactive: the guard or a loop bound leaves this lane out"
        elem = (f"element ({rec['row']}, {rec['col']}) = [{rec['element']}]" if "row" in rec
                else f"element [{rec['element']}]")
        address0 = v.kernel.arrays[v.instruction.first_array].address0
        lines = [head, elem,
                 f"address 0x{rec['address']:x} (array + {rec['address'] - address0} B), "
                 f"{v.instruction.width} B",
                 "sectors " + ", ".join(str(s) for s in rec["sectors"])]
        col = v.layout.columns[c] if c >= 0 else None
        if isinstance(col, SectorColumn):
            j = self.geometry.sector_cols.index(c)
            lo, hi = int(v.layout.cell_lo[lane, j]), int(v.layout.cell_hi[lane, j])
            used = f"bytes [{lo}, {hi}) of" if hi > lo else "does not use"
            lines.append(f"{used} sector {col.sector} at 0x{col.address:x}")
        elif isinstance(col, GapColumn):
            lines.append(f"⋯ {col.skipped_bytes:,} B here that no lane touches")
        if v.layout.crossing[lane]:
            lines.append("crosses a sector boundary: counts in both sectors")
        if v.layout.shared[lane]:
            lines.append("shares bytes with another lane (same word, one transfer)")
        return "\n".join(lines)

    def hoverEvent(self, ev) -> None:
        self.setToolTip("" if ev.isExit() else self.tooltip_at(ev.pos()))

    # ------------------------------------------------------------ drawing

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, *self.size)

    def paint(self, painter: QPainter, *args) -> None:
        painter.drawPicture(0, 0, self._picture)

    def _render(self) -> None:
        self.prepareGeometryChange()
        self._picture = QPicture()
        painter = QPainter(self._picture)
        try:
            if self.view is not None:
                self._draw(painter)
        finally:
            painter.end()
        self.update()

    def _draw(self, p: QPainter) -> None:
        v, th = self.view, self.theme
        base, small, bold = _fonts()
        fm, fs = QFontMetrics(base), QFontMetrics(small)
        w, h = self.size
        p.setFont(bold)
        p.setPen(QColor(th.text))
        p.drawText(QPointF(PAD, PAD + fm.ascent()), self._title())
        p.setFont(base)
        p.drawText(QPointF(PAD, PAD + fm.height() + fm.ascent() + 2), self._subtitle())
        y0 = PAD + 2 * fm.height() + 10
        if v.layout is None:
            self.geometry = None
            p.setPen(QColor(th.bad if v.error else th.muted))
            p.drawText(QRectF(PAD, y0, w - 2 * PAD, h - y0 - PAD), Qt.AlignCenter | Qt.TextWordWrap,
                       v.error or "No lane of this warp runs this instruction.")
            return
        lay = v.layout
        header = fs.horizontalAdvance("+0x00000000 B") + 6
        label_w = max(max(fs.horizontalAdvance(_lane_label(v, i)) for i in range(WARP_SIZE)) + 26,
                      fs.horizontalAdvance("sector at array +") + 8)
        footer = fs.height() * 3 + 18
        row = float(np.clip((h - y0 - header - footer - PAD) / WARP_SIZE, MIN_ROW, MAX_ROW))
        g = self._geometry(lay, PAD + label_w, y0 + header, row, w - PAD)
        self.geometry = g
        self._draw_headers(p, g, small, fs)
        self._draw_rows(p, g, small, fs)
        self._draw_footer(p, g, small, fs)

    def _title(self) -> str:
        v = self.view
        s = v.selection
        block = "" if v.detail is None else f", block {tuple(v.detail.block)}"
        run = ""
        if v.runs > 1:
            its = ", ".join(f"{name} = {int(np.asarray(x).flat[0])}"
                            for name, x in v.execution.iteration.items())
            run = f", execution {s.run + 1} of {v.runs}" + (f" ({its})" if its else "")
        return f"{v.instruction.name}  ·  warp {s.warp}{block}{run}"

    def _subtitle(self) -> str:
        v = self.view
        if v.execution is None:
            return ""
        ex, sb = v.execution, v.pattern.sector_bytes
        ideal = -(-ex.useful_bytes // sb)
        return (f"{lane_spacing(ex)}: {sectors_text(ex.sectors)} of {sb} B, ideal {ideal}  ·  "
                f"{int(np.count_nonzero(ex.active))} active lanes × {v.instruction.width} B")

    @staticmethod
    def _geometry(lay: GridLayout, left: float, top: float, row: float, right: float) -> Geometry:
        weights = [1.0 if isinstance(c, SectorColumn) else GAP_FRACTION for c in lay.columns]
        unit = min(MAX_CELL, max(right - left, 1.0) / max(sum(weights), 1.0))
        xs, x = [], left
        for wgt in weights:
            xs.append(x)
            x += wgt * unit
        sector_cols = tuple(i for i, c in enumerate(lay.columns) if isinstance(c, SectorColumn))
        return Geometry(left, top, row, tuple(xs), tuple(wgt * unit for wgt in weights), sector_cols)

    def _draw_headers(self, p: QPainter, g: Geometry, font: QFont, fm: QFontMetrics) -> None:
        """Rotated column labels: a sector's offset in the array (and its address when the
        column is wide enough), a gap's skipped bytes; labels that would overlap are left
        out, sector columns first."""
        v, th = self.view, self.theme
        p.setFont(font)
        line = fm.height()
        labels = []
        for col, x, w in zip(v.layout.columns, g.xs, g.widths):
            if isinstance(col, GapColumn):
                labels.append((1, x + w / 2, [(f"⋯ {col.skipped_bytes:,} B", th.muted)]))
            else:
                texts = [(f"{col.relative:+,} B", th.text), (f"0x{col.address:x}", th.muted)]
                labels.append((0, x + w / 2, texts[: 2 if w >= 2 * line + 2 else 1]))
        placed: list[tuple[float, float]] = []
        for _, centre, texts in sorted(labels, key=lambda t: t[0]):
            lo, hi = centre - len(texts) * line / 2, centre + len(texts) * line / 2
            if any(lo < b and a < hi for a, b in placed):
                continue
            placed.append((lo, hi))
            p.save()
            p.translate(hi - fm.descent(), g.top - 4)
            p.rotate(-90)
            for i, (text, colour) in enumerate(texts):
                p.setPen(QColor(colour))
                p.drawText(QPointF(0, -i * line), text)
            p.restore()
        p.setPen(QColor(th.muted))
        p.drawText(QRectF(PAD, g.top - line * 2 - 4, g.left - PAD - 6, line * 2),
                   Qt.AlignRight | Qt.AlignBottom, "sector at array +\nlane (thread)")

    def _draw_rows(self, p: QPainter, g: Geometry, font: QFont, fm: QFontMetrics) -> None:
        """Lane labels and marks, then every cell: rectangles are batched per colour."""
        v, th, lay = self.view, self.theme, self.view.layout
        sb = lay.sector_bytes
        p.setFont(font)
        fills: dict[str, list[QRectF]] = {}
        hatched: list[QRectF] = []
        for lane in range(WARP_SIZE):
            y = g.top + lane * g.row
            valid, active = bool(lay.valid[lane]), bool(lay.active[lane])
            p.setPen(QColor(th.text if active else th.muted))
            label = _lane_label(v, lane) if valid else f"{lane:2d}  —"
            p.drawText(QRectF(PAD, y, g.left - PAD - 22, g.row), Qt.AlignRight | Qt.AlignVCenter,
                       label)
            marks = [(th.crossing, "×")] * bool(lay.crossing[lane]) + \
                    [(th.shared, "=")] * bool(lay.shared[lane])
            for i, (colour, glyph) in enumerate(marks):
                p.setPen(QColor(colour))
                p.drawText(QRectF(g.left - 20 + i * 9, y, 9, g.row), Qt.AlignCenter, glyph)
            if not valid or not active:
                row = QRectF(g.left, y + 1, g.right - g.left, g.row - 2)
                fills.setdefault(th.inactive if valid else th.missing, []).append(row)
                if valid:
                    hatched.append(row)
                continue
            hit = th.crossing if lay.crossing[lane] else th.shared if lay.shared[lane] else th.hit
            for j, c in enumerate(g.sector_cols):
                x, w = g.xs[c], g.widths[c]
                fills.setdefault(th.cell, []).append(QRectF(x + 1, y + 1, w - 2, g.row - 2))
                lo, hi = lay.cell_lo[lane, j], lay.cell_hi[lane, j]
                if hi > lo:
                    fills.setdefault(hit, []).append(QRectF(
                        x + 1 + (w - 2) * lo / sb, y + 1, max((w - 2) * (hi - lo) / sb, 1.5),
                        g.row - 2))
        p.setPen(Qt.NoPen)
        for colour in (th.inactive, th.missing, th.cell, th.hit, th.crossing, th.shared):
            if fills.get(colour):
                p.setBrush(QColor(colour))
                p.drawRects(fills[colour])
        if hatched:
            p.setBrush(QBrush(QColor(th.muted), Qt.BDiagPattern))
            p.drawRects(hatched)
        self._draw_gaps(p, g)
        self._draw_byte_ticks(p, g, sb)

    def _draw_gaps(self, p: QPainter, g: Geometry) -> None:
        pen = QPen(QColor(self.theme.muted), 1, Qt.DashLine)
        p.setPen(pen)
        for col, x, w in zip(self.view.layout.columns, g.xs, g.widths):
            if isinstance(col, GapColumn):
                for dx in (w * 0.35, w * 0.65):
                    p.drawLine(QPointF(x + dx, g.top), QPointF(x + dx, g.bottom))

    def _draw_byte_ticks(self, p: QPainter, g: Geometry, sb: int) -> None:
        """Hairlines every 4 bytes inside sector columns wide enough to show them."""
        step = 4
        if not g.sector_cols or g.widths[g.sector_cols[0]] * step / sb < 5:
            return
        ticks = [QRectF(g.xs[c] + 1 + (g.widths[c] - 2) * b / sb - 0.5, g.top, 1, g.bottom - g.top)
                 for c in g.sector_cols for b in range(step, sb, step)]
        p.setPen(Qt.NoPen)
        p.setBrush(QColor(self.theme.base))
        p.drawRects(ticks)

    def _draw_footer(self, p: QPainter, g: Geometry, font: QFont, fm: QFontMetrics) -> None:
        th, lay = self.theme, self.view.layout
        p.setFont(font)
        y = g.bottom + 3
        p.setPen(QColor(th.muted))
        p.drawText(QRectF(PAD, y, g.left - PAD - 6, fm.height()), Qt.AlignRight, "used B")
        for col, x, w in zip(lay.columns, g.xs, g.widths):
            if isinstance(col, SectorColumn):
                full = col.used_bytes == lay.sector_bytes
                p.setPen(QColor(th.text if full else th.bad))
                p.drawText(QRectF(x, y, w, fm.height()), Qt.AlignHCenter, str(col.used_bytes))
        y += fm.height() + 8
        x = g.left
        items = [(th.hit, "bytes a lane uses"), (th.crossing, "× crosses a sector boundary"),
                 (th.shared, "= shares bytes with another lane"), (th.inactive, "inactive lane"),
                 (th.missing, "no such lane")]
        for colour, text in items:
            if x + 14 + fm.horizontalAdvance(text) > self.size[0] - PAD and x > g.left:
                x, y = g.left, y + fm.height() + 2
            p.setPen(Qt.NoPen)
            p.setBrush(QColor(colour))
            p.drawRect(QRectF(x, y + 2, 10, fm.height() - 4))
            p.setPen(QColor(th.muted))
            p.drawText(QPointF(x + 14, y + fm.ascent()), text)
            x += 14 + fm.horizontalAdvance(text) + 16


class GridView(pg.GraphicsView):
    """Listens to the document and shows its current warp instruction."""

    def __init__(self, document: Document, parent=None):
        super().__init__(parent, background=LIGHT.base)
        self.setObjectName("gridView")
        self.setAntialiasing(False)  # cells are axis-aligned rectangles; text stays smooth
        self.document = document
        self.item = GridItem()
        self.addItem(self.item)
        document.changed.connect(self._on_changed)
        self.item.set_view(document.view())

    @property
    def layout(self) -> GridLayout | None:
        """The GridLayout on screen (None when the warp does not run the instruction)."""
        return self.item.view.layout if self.item.view else None

    def set_theme(self, theme: Theme) -> None:
        self.setBackground(theme.base)
        self.item.set_theme(theme)

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        if hasattr(self, "item"):  # pg.GraphicsView resizes once while it is being built
            self.item.set_size(float(self.width()), float(self.height()))

    def _on_changed(self, flags: int) -> None:
        if flags & (Change.PATTERN | Change.SELECTION):
            self.item.set_view(self.document.view())
