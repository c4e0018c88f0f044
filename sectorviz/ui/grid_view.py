"""The lane-to-sector grid of the selected warp instruction: the export's grid scene
(sectorviz.scene.lanes) drawn in the window, so screen and files show one picture.

Rows are the 32 lanes, columns the touched sectors in address order; inside a cell the
horizontal axis is the sector's bytes, the lane's bytes in full colour and the sector's wasted
bytes tinted. The view fits the whole warp (the header, the 32 lane rows and the used bytes,
every sector column or bank; the legend may scroll) to the pane, both ways: the scene's columns
are sized for the pane's width at the scale its height allows, and where even the narrowest
columns are too wide the scale follows the width (GridView._fit); Ctrl+wheel, Ctrl+= and Ctrl+-
zoom about the cursor (MIN_ZOOM to MAX_ZOOM times the fit), Ctrl+0 fits again, and dragging
pans. The scene's caption is the pane's caption line (GridPane), in the window's font, so it
reads at the window's text size at any zoom; the scene's small text (lane numbers, addresses,
tags) is enlarged towards the window's font size when the fit draws it smaller
(DiagramSpec.text_scale).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontInfo, QPainter
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsScene,
    QGraphicsView,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ..gather.diagrams import diagram_scene, selected_spec
from ..gather.explain import explanations, shared_explanations
from ..model import PatternError
from ..model.banks import BANK_BYTES
from ..model.compiler_changes import cached_compiler_changes
from ..model.detail import lane_records
from ..scene.grid import GridLayout
from ..scene.lanes import ROW_H
from ..scene.parts import MARGIN
from ..scene.shapes import Rect, Scene, Text
from .document import Change, Document, WarpView
from .painter import paint_scene
from .theme import LIGHT, Theme
from .visible import html_label

ZOOM_STEP = 1.25
MAX_ZOOM = 16.0  # times the fitted scale
MIN_ZOOM = 0.25  # times the fitted scale: zooming out shows more than the fit
MAX_FIT = 1.5  # the fitted scale never enlarges more than this
SMALLEST_FIT = 0.25  # fitting never shrinks the scene below this scale; a tiny pane scrolls
TEXT_STEP = 0.05  # text_scale changes smaller than this keep the scene
FIT_ROUNDS = 5  # rounds of column width, text_scale and fit towards a fixed point
LEAST_GRID, MOST_GRID = 120.0, 20000.0  # units the sector columns (or banks) are offered
TOP_TRIM = MARGIN - 6.0  # of the scene's top margin, units: the pane starts at the caption


class GridItem(QGraphicsItem):
    """The grid scene of one WarpView, painted shape by shape; knows its cells for tooltips."""

    def __init__(self):
        super().__init__()
        self.view: WarpView | None = None
        self.theme: Theme = LIGHT
        self.scene_: Scene = Scene(1, 1, LIGHT.base, "", "")
        self.error = ""
        self.grid_width = 600.0  # units the sector columns aim to fill
        self.text_scale = 1.0  # the spec's text_scale: small text enlarged to stay readable
        self.setAcceptHoverEvents(True)

    # ------------------------------------------------------------ inputs

    def set_view(self, view: WarpView) -> None:
        self.view = view
        self._build()

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        self._build()

    def set_grid_width(self, width: float) -> None:
        if abs(width - self.grid_width) >= 1:
            self.grid_width = width
            self._build()

    def set_text_scale(self, factor: float) -> bool:
        """Enlarge the small text by `factor`; whether the scene changed (a change under
        TEXT_STEP is not worth a new scene)."""
        if abs(factor - self.text_scale) < TEXT_STEP:
            return False
        self.text_scale = factor
        self._build()
        return True

    def _build(self) -> None:
        """The scene of the current selection in the current theme (or an error line)."""
        self.prepareGeometryChange()
        v = self.view
        if v.detail is None and v.error and (v.instruction is not None or not v.kernel_known):
            # waiting (for the warp's details, or the kernel), or failed
            self.scene_, self.error = Scene(640, 80, self.theme.base, "", v.error), v.error
            self.update()
            return
        spec = selected_spec(v.pattern, v.selection.warp, v.selection.instruction,
                             v.selection.run, theme=self.theme.name, grid_width=self.grid_width,
                             caption=False, text_scale=self.text_scale)
        try:
            self.scene_, self.error = diagram_scene(v.pattern, spec), ""
        except PatternError as err:
            self.scene_, self.error = Scene(640, 80, self.theme.base, "", str(err)), str(err)
        self.update()

    # ------------------------------------------------------------ queries

    def caption(self) -> tuple[str, str]:
        """(title, stats) of the drawn diagram, the caption the exports draw in the scene;
        ('', '') for an error, which the item draws itself."""
        if self.error:
            return "", ""
        head, _, stats = self.scene_.title.rpartition("; ")
        return head, stats

    def warp_bottom(self) -> float:
        """Scene y below the lane rows and their used-bytes labels: the top of the legend,
        or the scene's foot without one."""
        tops = [s.y - s.size for s in self.scene_.shapes
                if isinstance(s, Text) and s.css == "legend"]
        return min(tops, default=self.scene_.height)

    def span_units(self) -> float:
        """Scene width of the sector columns (gaps included) or of the banks; 0 for none."""
        spans = [(r.x, r.x + r.w) for r in self.scene_.shapes if isinstance(r, Rect)
                 and r.css in ("sector", "banks")]
        return max(b for _, b in spans) - min(a for a, _ in spans) if spans else 0.0

    def columns(self) -> list[Rect]:
        """The sector columns drawn, left to right (Rects of class 'sector')."""
        return [s for s in self.scene_.shapes if isinstance(s, Rect) and s.css == "sector"]

    def hits(self) -> list[tuple[int, int]]:
        """(lane, sector) of every hit cell drawn."""
        return sorted((int(dict(s.data)["lane"]), int(dict(s.data)["sector"]))
                      for s in self.scene_.shapes
                      if isinstance(s, Rect) and "hit" in s.css.split())

    def cell_rect(self, lane: int, j: int) -> QRectF:
        """The cell of lane `lane` in the j-th sector column, in item (scene) units."""
        c = self.columns()[j]
        return QRectF(c.x, c.y + lane * ROW_H, c.w, ROW_H)

    def hit_at(self, pos: QPointF) -> tuple[int, int] | None:
        """(lane, j) of the cell under `pos` (j: sector column, -1 left of the columns)."""
        cols = self.columns()
        if not cols or not cols[0].y <= pos.y() < cols[0].y + cols[0].h:
            return None
        lane = int((pos.y() - cols[0].y) // ROW_H)
        for j, c in enumerate(cols):
            if c.x <= pos.x() < c.x + c.w:
                return lane, j
        return (lane, -1) if pos.x() < cols[0].x else None

    def tooltip_at(self, pos: QPointF) -> str:
        """Lane, thread, block, element, address and sectors of the lane under `pos`."""
        where = self.hit_at(pos)
        v = self.view
        if v is not None and v.detail is not None and v.execution is None and v.runs:
            return self.bank_tooltip_at(pos)
        if where is None or v is None or v.execution is None:
            return ""
        lane, j = where
        if not v.detail.valid[lane]:
            return f"lane {lane}: no such thread (the block ends in a partial warp)"
        rec = lane_records(v.pattern, v.detail, v.selection.instruction, v.selection.run)[lane]
        head = f"lane {lane}, thread {tuple(rec['thread'])}, block {tuple(rec['block'])}"
        if not rec["active"]:
            return head + "\ninactive: the guard or a loop bound leaves this lane out"
        elem = (f"element ({rec['row']}, {rec['col']}) = [{rec['element']}]" if "row" in rec
                else f"element [{rec['element']}]")
        address0 = v.kernel.arrays[v.instruction.first_array].address0
        lines = [head, elem,
                 f"address 0x{rec['address']:x} (array + {rec['address'] - address0} B), "
                 f"{v.instruction.width} B",
                 "sectors " + ", ".join(str(s) for s in rec["sectors"])]
        if j >= 0:
            lay: GridLayout = v.layout
            col = lay.columns[lay.column_of(j)]
            lo, hi = int(lay.cell_lo[lane, j]), int(lay.cell_hi[lane, j])
            wasted = lay.sector_bytes - col.used_bytes
            if hi > lo:
                lines.append(f"bytes [{lo}, {hi}) of sector {col.sector} at 0x{col.address:x}"
                             + (f"; {wasted} B of it fetched but unused" if wasted else ""))
            else:
                lines.append(f"does not use sector {col.sector} at 0x{col.address:x}")
        if v.layout.crossing[lane]:
            lines.append("crosses a sector boundary: counts in both sectors")
        if v.layout.shared[lane]:
            lines.append("shares bytes with another lane (same word, one transfer)")
        k = v.selection.instruction
        changes = cached_compiler_changes(v.pattern)
        said = changes.words_for(k) if changes is not None else ""
        lines.append("why: " + explanations(v.pattern, v.detail, k, v.selection.run)[k]
                     + (f" {said}" if said else ""))
        return "\n".join(lines)

    def bank_tooltip_at(self, pos: QPointF) -> str:
        """A shared instruction's banks diagram: the word under `pos` (lane, bank, word,
        wavefront) and why the request takes its wavefronts (scene.explain)."""
        v = self.view
        cell = next((dict(s.data) for s in self.scene_.shapes if isinstance(s, Rect)
                     and "hit" in s.css.split() and s.x <= pos.x() < s.x + s.w
                     and s.y <= pos.y() < s.y + s.h), None)
        if cell is None:
            return ""
        k = v.selection.instruction - len(v.kernel.instructions)
        word = int(cell["word"])
        return (f"lane {cell['lane']}: word {word} (byte offset {BANK_BYTES * word}) in bank "
                f"{cell['bank']}, served in its bank's wavefront {int(cell['wavefront']) + 1}"
                f"\nwhy: "
                + shared_explanations(v.pattern, v.selection.warp, k, v.selection.run)[k])

    def hoverMoveEvent(self, ev) -> None:
        self.setToolTip(self.tooltip_at(ev.pos()))

    # ------------------------------------------------------------ drawing

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self.scene_.width, self.scene_.height)

    def paint(self, painter: QPainter, *args) -> None:
        if self.error:
            pending = self.view is not None and self.view.pending
            painter.setPen(QColor(self.theme.muted if pending else self.theme.bad))
            painter.drawText(self.boundingRect(), Qt.AlignCenter | Qt.TextWordWrap, self.error)
            return
        paint_scene(painter, self.scene_)


class GridView(QGraphicsView):
    """Listens to the document and shows its current warp instruction, fitted or zoomed."""

    drawn = Signal()  # a new scene is in the item (its caption may have changed)

    def __init__(self, document: Document, parent=None):
        super().__init__(parent)
        self.setObjectName("gridView")
        self.setRenderHints(QPainter.Antialiasing | QPainter.TextAntialiasing)
        self.setDragMode(QGraphicsView.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.AnchorUnderMouse)
        self.setFrameShape(QGraphicsView.NoFrame)
        self.setAlignment(Qt.AlignHCenter | Qt.AlignTop)
        self.document = document
        self.zoom = 1.0  # times the fitted scale
        self.fitted_for = QSize()  # the pane (less no scroll bar) the last resize fitted
        self.fit_legend = False  # the fit takes in the legend too (presentation mode)
        self.item = GridItem()
        self.setScene(QGraphicsScene(self))
        self.scene().addItem(self.item)
        document.changed.connect(self._on_changed)
        self.item.set_view(document.view())
        self._fit()

    @property
    def layout(self) -> GridLayout | None:
        """The GridLayout on screen (None when the warp does not run the instruction)."""
        return self.item.view.layout if self.item.view else None

    def set_theme(self, theme: Theme) -> None:
        self.setBackgroundBrush(QColor(theme.base))
        self.item.set_theme(theme)
        self._fit()
        self.drawn.emit()

    def zoom_by(self, factor: float) -> None:
        """Zoom in (factor > 1) or out, between MIN_ZOOM and MAX_ZOOM times the fitted size."""
        self.zoom = min(MAX_ZOOM, max(MIN_ZOOM, self.zoom * factor))
        self._fit(relayout=False)  # the same scene, larger or smaller

    def fit(self) -> None:
        """Back to the whole warp in the pane."""
        self.zoom = 1.0
        self._fit()

    def shown_rect(self) -> QRectF:
        """The part of the scene the pane shows: all of it but the top margin (the export's
        white space, an empty band in a pane)."""
        return self.item.boundingRect().adjusted(0, TOP_TRIM, 0, 0)

    def warp_rect(self) -> QRectF:
        """The shown part of the scene down to the foot of the lane rows: the whole warp
        (with `fit_legend`, all of the shown part)."""
        r = self.shown_rect()
        if self.fit_legend:
            return r
        return QRectF(r.x(), r.y(), r.width(), max(self.item.warp_bottom() - r.y(), 1.0))

    def fitted_scale(self) -> float:
        """Scene units -> pixels that show the whole warp, its columns and its 32 lanes, in
        the pane; at most MAX_FIT, at least SMALLEST_FIT (then the pane scrolls)."""
        tall, wide = self.height_scale(), self.warp_rect().width()
        fit = min(tall, self.room_width(tall) / wide)
        return max(SMALLEST_FIT, min(fit, self.room_width(fit) / wide))

    def room_width(self, scale: float) -> int:
        """The pane's width at `scale`: less the vertical scroll bar where the legend below
        the warp needs it."""
        room = self.maximumViewportSize()
        bar = (self.verticalScrollBar().sizeHint().width()
               if self.shown_rect().height() * scale > room.height() + 0.5 else 0)
        return max(room.width() - bar, 1)

    def height_scale(self) -> float:
        """The scale at which the warp's height fills the pane (at most MAX_FIT): the one
        the columns are sized for."""
        return min(MAX_FIT, max(self.maximumViewportSize().height(), 1)
                   / self.warp_rect().height())

    def _fit(self, relayout: bool = True) -> None:
        """Scale to the fit times the zoom. The columns are offered the pane's width at the
        fitted scale less what lies beside them, and small text grows to stay readable at
        that scale; both change the scene and so the fit, a few rounds settle it. Fitted
        (zoom 1), the pane shows the scene from its top left, so no scroll position left
        from another scene hides the header or the lane numbers. `relayout` False: only the
        scale changes (a zoom keeps the scene)."""
        for _ in range(FIT_ROUNDS if relayout else 0):
            self.scene().setSceneRect(self.shown_rect())
            fit, tall = self.fitted_scale(), self.height_scale()
            span = self.item.span_units()
            want = self.room_width(tall) / tall - (self.item.scene_.width - span)  # columns'
            if span > 0:  # the columns come out near, not at, the width asked (banks, gaps)
                asked = self.item.grid_width * want / span
                self.item.set_grid_width(min(max(asked, LEAST_GRID), MOST_GRID))
            grown = self.item.set_text_scale(self.readable_factor(fit))
            self.scene().setSceneRect(self.shown_rect())
            if not grown and abs(self.fitted_scale() - fit) < 0.01 * fit:
                break
        s = self.fitted_scale() * self.zoom
        self.resetTransform()
        self.scale(s, s)
        if self.zoom == 1.0:
            for bar in (self.verticalScrollBar(), self.horizontalScrollBar()):
                bar.setValue(bar.minimum())

    def readable_factor(self, scale: float) -> float:
        """How much the scene's small text must grow to be drawn at the window's font size
        at `scale` (1: it already is; the scene caps it at what a lane row holds)."""
        font_px = QFontInfo(self.font()).pixelSize()
        return max(1.0, font_px / (self.item.theme.diagram.small_size * scale))

    def wheelEvent(self, ev) -> None:
        if ev.modifiers() & Qt.ControlModifier:
            self.zoom_by(ZOOM_STEP if ev.angleDelta().y() > 0 else 1 / ZOOM_STEP)
            ev.accept()
        else:
            super().wheelEvent(ev)

    def resizeEvent(self, ev) -> None:
        """Fit again when the pane changed size; not when only a scroll bar came or went
        (the fit that placed it would otherwise run again, and could toggle it back)."""
        super().resizeEvent(ev)
        pane = self.maximumViewportSize()
        if pane != self.fitted_for:
            self.fitted_for = pane
            self._fit()

    def _on_changed(self, flags: int) -> None:
        if flags & (Change.PATTERN | Change.SELECTION):
            self.item.set_view(self.document.view())
            self._fit()
            self.drawn.emit()


class GridPane(QWidget):
    """The grid's caption line (title in bold, stats muted, wrapped to the pane) over the
    GridView; the caption follows every new scene and theme (GridView.drawn)."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("gridPane")
        self.view = GridView(document)
        self.caption = QLabel(objectName="gridCaption", wordWrap=True)
        self.caption.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.caption.setContentsMargins(8, 4, 8, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.caption)
        layout.addWidget(self.view, 1)
        self.view.drawn.connect(self._show_caption)
        self._show_caption()

    def _show_caption(self) -> None:
        head, stats = self.view.item.caption()
        theme = self.view.item.theme
        self.caption.setStyleSheet(f"background: {theme.base}; color: {theme.text};")
        muted = theme.muted
        self.caption.setVisible(bool(head))
        self.caption.setText(f"<b>{html_label(head)}</b><br>"
                             f"<span style='color:{muted}'>{html_label(stats)}</span>")
