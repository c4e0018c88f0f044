"""The kernel overview strip: x = global warp, y = instruction, colour = waste (sectors per
request against the ideal: sectorviz.scene.overview's one binning rule and the palette's waste
colours, as in the exported overview), with a bottom row marking atypical warps in a colour
of its own (the window's accent, no waste class). A click selects that warp (and
instruction); hovering a row says its whole name and how many warps are unusual for it.
Row names longer than LABEL_CHARS are elided in the middle of their statement text only: the
line number, the op and copy number ("ld.shared.f32 (3 of 32)") and "(shared)" stay, so
unrolled copies and ld/st pairs of one line read apart. A row whose instruction made no
request in any warp (a complete run) is kept, so rows keep their numbers, and says
"not executed".

Wide grids are binned: a column stands for consecutive warps (their sectors over their
requests); a bin is atypical if any of its warps is. Large pictures are binned off the UI
thread, so partial results of a long run never stall it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QObject, QRectF, QRunnable, Qt, QThreadPool, Signal
from PySide6.QtGui import QColor, QFontMetrics
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ..model import Analysis
from ..model.kernel import Kernel
from ..model.sectors import WARP_SIZE
from ..scene import palette
from ..scene.overview import overview_bins
from ..scene.words import counted
from .document import Change, Document, instruction_names
from .theme import LIGHT, Theme, fixed_plot, theme_plot

MAX_BINS = 2048
SYNC_CELLS = 2**18  # per-warp counts binned on the UI thread; more go to a pool thread
SYNC_PARTIAL_CELLS = 2**16  # the same for a partial result (an analysis runs beside it)
AXIS_PIXELS = 58  # the warp axis, its label and the plot's margins, pixels
LABEL_CHARS = 30  # row names wider than this many average characters are elided in the middle
ATYPICAL_ROW = "atypical warps"
NOT_EXECUTED = "not executed"
NOT_EXECUTED_TIP = ("not executed: 0 requests in every warp (the row is kept so the rows "
                    "keep their numbers)")
MIN_TEXT_CHARS = 6  # the least of a row's statement text shown, in average characters
# "line 26: " | statement text | ", ld.shared.f32 (3 of 32) (shared)"
_HEAD = re.compile(r"^(\d+: )?(line \d+: )?")
_TAIL = re.compile(r"(, [A-Za-z_][\w.]*)?( \(\d+ of \d+\))?( \(shared\))?$")
ATYPICAL_TIP = ("atypical warps (bottom row): a partial warp, a warp that skips an instruction "
                "others run (an if (tid == 0)), or one whose sectors per request for an "
                "instruction differ from that instruction's typical count; not a cost in "
                "itself: each instruction's colour says what it costs")


def row_parts(name: str) -> tuple[str, str, str]:
    """A row's name -> (head, text, tail): the row and line numbers, the statement text (the
    part elided when the name is too long), and the op, copy number and "(shared)"."""
    head = _HEAD.match(name).group(0)  # type: ignore[union-attr]
    rest = name[len(head):]
    tail = _TAIL.search(rest).group(0)  # type: ignore[union-attr]
    return head, rest[:len(rest) - len(tail)], tail


def not_executed(analysis: Analysis | None) -> tuple[bool, ...]:
    """Per row (global instructions, then shared): no request in any warp; all False until
    the run is complete (a partial run has not seen every warp)."""
    if analysis is None or analysis.warps_done is not None:
        return ()
    return tuple(st.requests == 0 for st in analysis.instructions) + tuple(
        st.requests == 0 for st in analysis.shared)


def unusual_by_instruction(analysis: Analysis) -> np.ndarray:
    """(instructions, warps) bool: the warps that skip instruction k while others run it
    (an `if (tid == 0)`), or whose sectors per request for it differ from its typical (most
    common) count; while a run goes on, of the warps done so far."""
    sectors, requests = analysis.per_warp_sectors, analysis.per_warp_requests
    odd = np.zeros(requests.shape, dtype=bool)
    for k, st in enumerate(analysis.instructions):
        if st.requests == 0:
            continue
        ran = requests[k] > 0
        odd[k] = ~ran
        odd[k, ran] = sectors[k][ran] != st.mode * requests[k][ran]
    return odd


def atypical_warps(analysis: Analysis, kernel: Kernel) -> np.ndarray:
    """(warps,) bool: a partial warp, or a warp unusual for some instruction
    (unusual_by_instruction). While a run goes on, (warps done,) for the warps done so far."""
    odd = unusual_by_instruction(analysis).any(axis=0)
    if kernel.threads_per_block % WARP_SIZE:
        odd[kernel.warps_per_block - 1:: kernel.warps_per_block] = True
    return odd


def odd_bins(odd: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """(warps,) atypical flags -> (bins,) whether any warp of each bin is atypical."""
    return np.logical_or.reduceat(odd, edges[:-1])


def waste_rgba(theme: palette.Theme, waste: np.ndarray) -> np.ndarray:
    """Waste classes (-1: no request) -> uint8 RGBA in the theme's waste colours."""
    colours = np.array([QColor(c).getRgb() for c in theme.waste + (theme.idle,)],
                       dtype=np.uint8)
    return colours[np.where(waste < 0, len(theme.waste), waste)]


@dataclass(frozen=True)
class Picture:
    """An analysis binned for the strip: (instructions, columns) waste classes (-1: no
    request, or not analysed yet) and (columns,) atypical marks, `bin` warps a column (on
    average); `atypical` warps in all and, per global instruction, `unusual` warps."""

    waste: np.ndarray
    odd: np.ndarray
    bin: float
    atypical: int
    unusual: tuple[int, ...] = ()


def picture(analysis: Analysis, kernel: Kernel) -> Picture:
    """The strip of an analysis, complete or of the warps done so far (the rest blank)."""
    cells = overview_bins(analysis, MAX_BINS,
                          len(instruction_names(kernel)) - len(kernel.instructions))
    odd_warps = atypical_warps(analysis, kernel)
    rest = kernel.warps - len(odd_warps)  # warps not done yet: not atypical (yet)
    unusual = unusual_by_instruction(analysis).sum(axis=1)
    return Picture(cells.waste, odd_bins(np.pad(odd_warps, (0, rest)), cells.edges),
                   kernel.warps / (len(cells.edges) - 1), int(odd_warps.sum()),
                   tuple(int(u) for u in unusual))


class _Binned(QObject):
    done = Signal(object, object)  # Analysis, Picture


class _Binning(QRunnable):
    """picture(analysis, kernel) on a pool thread, unless a newer analysis came first."""

    def __init__(self, view: "OverviewView", analysis: Analysis, kernel: Kernel):
        super().__init__()
        self.view, self.analysis, self.kernel = view, analysis, kernel
        self.relay = view._binned

    def run(self) -> None:
        if self.view._wanted is self.analysis:
            self.relay.done.emit(self.analysis, picture(self.analysis, self.kernel))


class OverviewView(QWidget):
    """Listens to the document's analysis and selection; clicking selects a warp."""

    drawn = Signal()  # a binned analysis is on screen

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.theme = LIGHT
        self.bin = 1
        self.setObjectName("overview")
        self.plot = fixed_plot("overviewPlot")
        self.plot.invertY(True)
        self.plot.getPlotItem().setContentsMargins(2, 2, 8, 2)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.cursor = pg.InfiniteLine(angle=90, movable=False,
                                      pen=pg.mkPen(LIGHT.text, width=1.5))
        self.plot.addItem(self.cursor)
        self.legend = QLabel(objectName="overviewLegend")
        self.legend.setToolTip("colour: sectors per request of the warps of a column against "
                               "their instruction's ideal (green: no more sectors than the "
                               "bytes need); " + ATYPICAL_TIP)
        self.status = QLabel(objectName="overviewStatus")
        self.status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # never widens
        self.title = QLabel("<b>Kernel overview</b>", objectName="overviewTitle")
        self.head = QHBoxLayout()
        self.head.addWidget(self.title)
        self.head.addWidget(self.status, 1)
        self.head.addWidget(self.legend)
        self.below = QHBoxLayout()  # the legend's line when the pane is too narrow for one
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(2)
        layout.addLayout(self.head)
        layout.addLayout(self.below)
        # a row per instruction, each name readable: a kernel of many instructions scrolls
        # here instead of making the window taller than the screen
        self.scroll = QScrollArea(objectName="overviewScroll", widgetResizable=True,
                                  frameShape=QFrame.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.plot)
        layout.addWidget(self.scroll, 1)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.plot.scene().sigMouseMoved.connect(self._hovered)
        self._names: list[str] = []  # each row's whole name, bottom row last
        self._idle: tuple[bool, ...] = ()  # per row: not executed (a complete run)
        self._ticks: list[tuple[float, str]] = []  # each row's label, as drawn
        self._unusual: tuple[int, ...] = ()
        self._wanted: Analysis | None = None  # the analysis being binned off the UI thread
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._binned = _Binned(self)
        self._binned.done.connect(self._on_binned)
        self._shown: tuple | None = None  # the _shape() of the strip drawn
        document.changed.connect(self._on_changed)
        self._on_changed(Change.PATTERN | Change.ANALYSIS | Change.SELECTION)

    def legend_below(self) -> bool:
        """Whether the legend sits on a line of its own (the pane is too narrow for the
        title, the status and the legend on one line)."""
        return self.below.indexOf(self.legend) >= 0

    def _place_legend(self) -> None:
        """The legend right of the title and status where they fit on one line, else on
        the line below: the title and status are never cut by it."""
        status = self.status.fontMetrics().horizontalAdvance(self.status.text())
        spacing = 2 * self.head.spacing() + 12
        fits = (self.title.sizeHint().width() + status + self.legend.sizeHint().width()
                + spacing <= self.contentsRect().width() - 8)
        if fits == self.legend_below():
            (self.head if fits else self.below).addWidget(self.legend)
            self.layout().activate()  # placed now, not at the next event: a grab shows it

    def resizeEvent(self, ev) -> None:
        super().resizeEvent(ev)
        self._place_legend()

    def _set_status(self, text: str) -> None:
        self.status.setText(text)
        self._place_legend()

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        theme_plot(self.plot, theme)
        self.cursor.setPen(pg.mkPen(theme.text, width=1.5))
        self._on_changed(Change.PATTERN | Change.ANALYSIS | Change.SELECTION)

    def warp_at(self, x: float) -> int:
        """A view x coordinate (warps) -> the clicked global warp, clamped."""
        return int(np.clip(np.floor(x), 0, self.document.kernel.warps - 1))

    def _clicked(self, ev) -> None:
        vb = self.plot.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        p = vb.mapSceneToView(ev.scenePos())
        n = len(instruction_names(self.document.kernel))
        row = int(np.floor(p.y()))
        self.document.select(warp=self.warp_at(p.x()),
                             instruction=row if 0 <= row < n else None)

    def row_tip(self, row: int) -> str:
        """The tooltip of strip row `row`: the instruction's whole name and its unusual
        warps, or what makes a warp atypical (the bottom row)."""
        if row == len(self._names) - 1:
            return ATYPICAL_TIP
        if not 0 <= row < len(self._names):
            return ""
        if row < len(self._idle) and self._idle[row]:
            return f"{self._names[row]}\n{NOT_EXECUTED_TIP}"
        if row < len(self._unusual):
            return (f"{self._names[row]}\n{counted(self._unusual[row], 'warp')} unlike its "
                    "typical warp (skipping it, or other sectors per request)")
        return self._names[row]

    def _hovered(self, pos) -> None:
        y = self.plot.getPlotItem().getViewBox().mapSceneToView(pos).y()
        self.plot.setToolTip(self.row_tip(int(np.floor(y))))

    def _on_changed(self, flags: int) -> None:
        if flags & Change.PATTERN:
            self._draw_axes()
        if flags & Change.ANALYSIS:  # also each partial result of a long run: kept light
            self._draw_analysis()
        if flags & (Change.SELECTION | Change.PATTERN):
            self.cursor.setPos(self.document.selection.warp + 0.5)

    def _draw_axes(self) -> None:
        kernel = self.document.kernel
        left = self.plot.getAxis("left")
        metrics = QFontMetrics(left.font())
        self._names = [f"{k}: {name}" for k, name in enumerate(instruction_names(kernel))]
        self._names.append(ATYPICAL_ROW)
        self._idle = ()
        ticks = self._label_rows()
        # every row's name readable: a line of text a row, above the warp axis
        self.plot.setMinimumHeight(len(ticks) * (metrics.height() + 2) + AXIS_PIXELS)
        self.plot.setLabel("bottom", "warp (launch order)")
        self.plot.setXRange(0, kernel.warps, padding=0)
        self.plot.setYRange(0, len(ticks), padding=0)
        step = max(1, kernel.warps // 16)
        self.plot.getAxis("bottom").setTicks(
            [[(w + 0.5, str(w)) for w in range(0, kernel.warps, step)]] if kernel.warps <= 64
            else None)
        self.legend.setText(self._legend_html())

    def row_labels(self) -> list[str]:
        """Each row's label as drawn, bottom row last."""
        return [text for _, text in self._ticks]

    def _label_rows(self) -> list[tuple[float, str]]:
        """Label the rows: a name too long loses the middle of its statement text only;
        an instruction not executed says so."""
        left = self.plot.getAxis("left")
        metrics = QFontMetrics(left.font())
        room, least = (metrics.averageCharWidth() * n for n in (LABEL_CHARS, MIN_TEXT_CHARS))
        ticks = []
        for k, name in enumerate(self._names):
            head, text, tail = row_parts(name)
            if k < len(self._idle) and self._idle[k]:
                tail += f" {NOT_EXECUTED}"
            if metrics.horizontalAdvance(name) > room:
                fits = max(least, room - metrics.horizontalAdvance(head + tail))
                text = metrics.elidedText(text, Qt.ElideMiddle, fits)
            ticks.append((k + 0.5, head + text + tail))
        left.setTicks([ticks])
        left.setWidth(max(metrics.horizontalAdvance(t) for _, t in ticks) + 14)
        self._ticks = ticks
        return ticks

    def _shape(self) -> tuple:
        """What a strip is drawn against: the file, the kernel's warps and instruction rows."""
        kernel = self.document.kernel
        return self.document.opened, kernel.warps, tuple(instruction_names(kernel))

    def _clear(self, status: str) -> None:
        self.image.clear()
        self._unusual = ()
        self._shown = None
        self._set_status(status)

    def _draw_analysis(self) -> None:
        """The analysis, partial or complete; while one runs, the last strip stays only if
        it is of the same file and drawn against the same axes, else the strip is blank."""
        doc = self.document
        kernel, analysis = doc.kernel, doc.analysis or doc.partial
        self._wanted = None
        if analysis is None and doc.analysis_running:
            if self._shown != self._shape():
                self._clear("analysing…")
            else:
                self._set_status("updating…")  # the last picture stays until the new one
            return
        if analysis is None or analysis.per_warp_sectors is None:
            self._clear(doc.analysis_error or "too many warps to show")
            return
        sync = SYNC_CELLS if analysis.warps_done is None else SYNC_PARTIAL_CELLS
        if analysis.per_warp_sectors.size <= sync:
            self._show(analysis, picture(analysis, kernel))
        else:
            self._wanted = analysis
            if self._shown != self._shape():
                self._set_status("drawing…")
            self._pool.start(_Binning(self, analysis, kernel))

    @property
    def drawing(self) -> bool:
        """True while an analysis is being binned off the UI thread."""
        return self._wanted is not None

    def _on_binned(self, analysis: Analysis, pic: Picture) -> None:
        if analysis is self._wanted:
            self._wanted = None
            self._show(analysis, pic)

    def _show(self, analysis: Analysis, pic: Picture) -> None:
        """Draw a binned analysis: the strip, its ranges and the status line."""
        th, kernel = self.theme, self.document.kernel
        n = len(instruction_names(kernel))
        self.bin, odd = pic.bin, pic.odd
        rgba = waste_rgba(th.diagram, pic.waste)
        marks = np.zeros((1, len(odd), 4), dtype=np.uint8)
        marks[0, odd] = [*pg.mkColor(th.accent).getRgb()[:3], 255]
        self.image.setImage(np.concatenate([rgba, marks], axis=0), autoLevels=False)
        self._shown = self._shape()
        self._unusual = pic.unusual
        idle = not_executed(analysis)
        if idle != self._idle:
            self._idle = idle
            self._label_rows()
        self.image.setRect(QRectF(0, 0, kernel.warps, n + 1))
        self.plot.setXRange(0, kernel.warps, padding=0)
        self.plot.setYRange(0, n + 1, padding=0)
        count = pic.atypical
        per = f", {self.bin:.4g} warps per column" if self.bin > 1 else ""
        done = "" if analysis.warps_done is None else f"{analysis.warps_done:,} of "
        self._set_status(f"{done}{counted(kernel.warps, 'warp')}, {count:,} atypical{per}"
                         + (" so far" if done else ""))
        self.drawn.emit()

    def _legend_html(self) -> str:
        th = self.theme
        cells = "".join(f"<span style='background:{c}; color:#000'>&nbsp;{escape(words)}"
                        "&nbsp;</span>" for c, words in zip(th.diagram.waste,
                                                           palette.WASTE_LABELS))
        return (f"sectors / ideal {cells} &nbsp; <span style='color:{th.accent}'>■</span> "
                "atypical warps")
