"""Sectors per request of the selected global instruction over all warps: bars = requests by
sectors per request (scene.histogram.histogram_bars, the exported histogram's numbers and
waste colours), a dashed line at the typical warp's ideal and, where warps differ in ideal, the
shaded band of their ideals; the requests axis labelled in whole requests at 0 and its top, as
exported; follows the selection and each partial result."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from ..model.errors import printable
from ..scene.histogram import BAR, band_colour, histogram_bars
from ..scene.words import counted
from .document import Change, Document
from .theme import LIGHT, Theme, fixed_plot, theme_plot


class HistogramView(QWidget):
    """Listens to the document's analysis and selection; draws nothing for a shared one."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.theme = LIGHT
        self.setObjectName("histogram")
        self.plot = fixed_plot("histogramPlot")
        self.plot.setLabel("bottom", "sectors per request")
        self.plot.setLabel("left", "requests")
        self.band = pg.LinearRegionItem(movable=False, pen=pg.mkPen(None))
        self.band.setZValue(-10)
        self.plot.addItem(self.band)
        self.bars = pg.BarGraphItem(x=[], height=[], width=BAR)
        self.plot.addItem(self.bars)
        self.ideal = pg.InfiniteLine(angle=90, movable=False,
                                     pen=pg.mkPen(LIGHT.text, width=1, style=Qt.DashLine))
        self.plot.addItem(self.ideal)
        self.status = QLabel(objectName="histogramStatus")
        self.status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)  # never widens
        head = QHBoxLayout()
        head.addWidget(QLabel("<b>Sectors per request, all warps</b>"))
        head.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.setSpacing(2)
        layout.addLayout(head)
        layout.addWidget(self.plot, 1)
        document.changed.connect(self._on_changed)
        self._on_changed(Change.ANALYSIS)

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        theme_plot(self.plot, theme)
        self.ideal.setPen(pg.mkPen(theme.text, width=1, style=Qt.DashLine))
        self._on_changed(Change.ANALYSIS)

    def _on_changed(self, flags: int) -> None:
        if flags & (Change.ANALYSIS | Change.SELECTION | Change.PATTERN):
            self._draw()

    def _draw(self) -> None:
        doc = self.document
        analysis = doc.analysis or doc.partial
        k = doc.selection.instruction
        shown = analysis is not None and 0 <= k < len(analysis.histograms)
        self.plot.setVisible(shown)  # no empty axes for a shared instruction or no analysis
        if not shown:
            self.bars.setOpts(x=[], height=[], brushes=[])
            self.status.setText(doc.analysis_error or ("" if analysis is None else
                                "a shared instruction: its bank wavefronts are in the grid"))
            return
        bars = histogram_bars(analysis, k)
        waste = self.theme.diagram.waste
        self.bars.setOpts(x=bars.sectors, height=bars.requests, width=BAR,
                          brushes=[pg.mkBrush(waste[w]) for w in bars.waste.tolist()])
        self.plot.setXRange(-0.5, bars.slots - 0.5, padding=0)  # the export's axis
        self.plot.getAxis("bottom").setTicks([[(s, str(s)) for s in bars.ticks()]])
        self.plot.getAxis("left").setTicks([[(0, "0"), (bars.tallest, f"{bars.tallest:,}")]])
        self.plot.setYRange(0, bars.tallest, padding=0.08)  # the export's requests axis
        self.ideal.setPos(bars.ideal)
        self.ideal.show()
        if bars.band is None:
            self.band.hide()
        else:
            self.band.setRegion(bars.band)
            self.band.setBrush(pg.mkBrush(band_colour(self.theme.diagram)))
            self.band.show()
        stats = analysis.instructions[k]
        done = "" if analysis.warps_done is None else " so far"
        self.status.setText(f"{printable(stats.name)}: {counted(stats.requests, 'request')}, "
                            f"min {stats.min}, mode {stats.mode}, max {stats.max}, "
                            f"{bars.ideal_words()}{done}")
