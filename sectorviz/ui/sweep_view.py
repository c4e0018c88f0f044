"""Tools > Sweep…: one param of the current pattern over a list or range of values, the chart
drawn live as points finish (the lines of scene.sweep_chart: each instruction and the total,
its ideal dashed, a gap at a failed point), and a click on a point making its value the
pattern's, as one undoable edit.

The points run where the "run on" field says, through the executor the command line uses
(sectorviz.sweep.executor): this machine's process pool when it is empty, else a Dask
scheduler's address (`local`: a LocalCluster here), from a Python thread, so the window stays
responsive; each finished point comes back through a queued signal. Run again, Stop, or a
closed window stops the run at its next finished point (the pool's workers are terminated, a
cluster's futures cancelled). The legend is a line above the chart (the lines' tags and
names, as the exported chart has them), never over the curves; the parameter axis labels the
values the exported chart labels (scene.sweep_chart.labelled_points).
"""

from __future__ import annotations

import math
import threading
from html import escape

import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from ..exits import UsageError
from ..model import PatternError, pattern_from_dict
from ..model.budget import default_work
from ..model.errors import internal_error
from ..scene.sweep_chart import (
    DEFAULT_METRIC,
    METRICS,
    Series,
    labelled_points,
    metric_series,
    series_colour,
    series_tag,
)
from ..scene.words import counted
from ..sweep.executor import Executor, executor_for
from ..sweep.points import PointTask, point_report, with_params
from ..sweep.pool import default_jobs
from ..sweep.ranges import parse_param
from .document import Change, Document
from .theme import LIGHT, Theme, theme_plot

SCHEDULER_CHARS = 200  # a scheduler address is at most this long
SCHEDULER_SETTING = "sweep_scheduler"  # the "run on" field, kept in the settings
TICK_FONT_PX = 11  # the parameter axis's labels, for spacing them (labelled_points)
RUN_ON = "this machine; or a Dask scheduler: local, tcp://host:8786"


class _Stopped(Exception):
    """Raised in the run's thread when its results are no longer wanted."""


class _Relay(QObject):
    point = Signal(int, int, object)  # run id, point index, {"report"} or {"error"}
    finished = Signal(int, str)  # run id, "" or what stopped it


class SweepView(QWidget):
    """The sweep pane: param, values, metric, Run / Stop, the chart and a status line."""

    def __init__(self, document: Document, parent: QWidget | None = None,
                 jobs: int | None = None):
        super().__init__(parent)
        self.setObjectName("sweep")
        self.document = document
        self.jobs = jobs or default_jobs()
        self.theme = LIGHT
        self.points: list[dict] = []  # {"params"} and, once finished, "report" or "error"
        self.param = ""
        self._run = 0  # the id of the run whose points are wanted
        self._running = False
        self._relay = _Relay()
        self._relay.point.connect(self._on_point, Qt.QueuedConnection)
        self._relay.finished.connect(self._on_finished, Qt.QueuedConnection)
        self.params = QComboBox(objectName="sweepParam")
        self.values = QLineEdit(objectName="sweepValues", placeholderText="8,16,32 or 0:3")
        self.values.setMinimumWidth(self.values.fontMetrics().horizontalAdvance(
            "8,16,32 or 0:3") + 24)
        self.values.returnPressed.connect(self.start)
        self.scheduler = QLineEdit(objectName="sweepScheduler", placeholderText=RUN_ON,
                                   maxLength=SCHEDULER_CHARS, toolTip=RUN_ON)
        self.metric = QComboBox(objectName="sweepMetric")
        self.metric.addItems(list(METRICS))
        self.metric.setCurrentText(DEFAULT_METRIC)
        self.metric.currentTextChanged.connect(lambda _: self._draw())
        self.button = QPushButton("Run", objectName="sweepRun")
        self.button.clicked.connect(lambda: self.stop() if self._running else self.start())
        self.status = QLabel(objectName="sweepStatus")
        self.status.setSizePolicy(QSizePolicy.Ignored, QSizePolicy.Preferred)
        self.plot = pg.PlotWidget(background=LIGHT.base, objectName="sweepPlot")
        self.plot.setMenuEnabled(False)
        self.legend = QLabel(objectName="sweepLegend", wordWrap=True)
        head = QHBoxLayout()
        for label, widget, stretch in (("param", self.params, 0), ("values", self.values, 1),
                                       ("metric", self.metric, 0)):
            head.addWidget(QLabel(label))
            head.addWidget(widget, stretch)
        head.addWidget(self.button)
        where = QHBoxLayout()
        where.addWidget(QLabel("run on"))
        where.addWidget(self.scheduler, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addLayout(head)
        layout.addLayout(where)
        layout.addWidget(self.legend)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.status)
        document.changed.connect(self._on_changed)
        self._on_changed(Change.PATTERN)

    # ------------------------------------------------------------ running

    def start(self) -> None:
        """Run the param over the values typed; a bad range is one line in the status."""
        name = self.params.currentText()
        try:
            _, values = parse_param(f"{name}={self.values.text()}")
            doc = self.document.pattern.to_dict()
            tasks = [PointTask(with_params(doc, {name: v}), self.document.pattern.base_dir,
                               default_work()) for v in values]  # Settings > Work Budget
            executor = executor_for(self.scheduler.text().strip() or None, self.jobs,
                                    "sweep")
        except (ValueError, PatternError, UsageError) as err:
            self.status.setText(str(err))
            return
        self._run += 1
        self.param, self.points = name, [{"params": {name: v}} for v in values]
        self._running = True
        self.button.setText("Stop")
        self.status.setText(f"0 of {counted(len(tasks), 'point')}")
        self._draw()
        threading.Thread(target=self._work, args=(self._run, executor, tasks), daemon=True,
                         name="sectorviz-sweep").start()

    def stop(self) -> None:
        """Stop the run at its next finished point."""
        self._run += 1
        self._on_finished(self._run, "stopped")

    def _work(self, run: int, executor: Executor, tasks: list[PointTask]) -> None:
        """The run's thread: the executor, each point sent back while this run is wanted."""
        def done(i: int, result: dict) -> None:
            if run != self._run:
                raise _Stopped
            self._relay.point.emit(run, i, result)
        try:
            executor(point_report, tasks, "points", quiet=True, done=done)
            self._relay.finished.emit(run, "")
        except _Stopped:
            pass
        except UsageError as err:  # a scheduler that cannot be reached: its one line
            self._relay.finished.emit(run, str(err))
        except Exception as err:  # noqa: BLE001 - the pool itself failed: one line, no crash
            self._relay.finished.emit(run, internal_error(err))

    def _on_point(self, run: int, i: int, result: dict) -> None:
        if run == self._run:
            self.points[i] = {**self.points[i], **result}
            done = sum(len(p) > 1 for p in self.points)
            failed = sum("error" in p for p in self.points)
            self.status.setText(f"{done} of {counted(len(self.points), 'point')}" +
                                (f", {failed} failed: {self._first_error()}" if failed else ""))
            self._draw()

    def _on_finished(self, run: int, why: str) -> None:
        if run == self._run:
            self._running = False
            self.button.setText("Run")
            if why:
                self.status.setText(f"{self.status.text()} ({why})")

    def _first_error(self) -> str:
        return next(f"{self.param} = {p['params'][self.param]}: {p['error']}"
                    for p in self.points if "error" in p)

    # ------------------------------------------------------------ drawing and clicks

    def set_theme(self, theme: Theme) -> None:
        self.theme = theme
        theme_plot(self.plot, theme)
        self._draw()

    def _draw(self) -> None:
        """The finished points' lines: a gap (NaN) at a failed or unfinished point; the
        legend above the chart, the labelled parameter values on its axis."""
        self.plot.clear()
        shown = [p for p in self.points if len(p) > 1]
        if not shown:
            self.legend.clear()
            return
        xs = [p["params"][self.param] for p in shown]
        self.plot.setLabel("bottom", self.param)
        self.plot.setLabel("left", METRICS[self.metric.currentText()].label)
        series = metric_series(shown, self.metric.currentText())
        for i, s in enumerate(series):
            colour = series_colour(i, s.name, self.theme.diagram)
            self.plot.plot(xs, _gaps(s.ideals), connect="finite",
                           pen=pg.mkPen(colour, width=1, style=Qt.DashLine))
            line = self.plot.plot(xs, _gaps(s.values), connect="finite", name=s.name,
                                  pen=pg.mkPen(colour, width=2), symbol="s", symbolSize=8,
                                  symbolBrush=colour, symbolPen=None)
            line.sigPointsClicked.connect(self._on_click)
        self.legend.setText(self._legend_html(series))
        self._label_axis(xs, series)

    def _legend_html(self, series: list[Series]) -> str:
        """Each line's colour, tag and name, then the dashed ideal: one wrapped line."""
        entries = [f'<span style="color:{series_colour(i, s.name, self.theme.diagram)}">'
                   f'<b>&#9632; {series_tag(i, s.name)}</b></span>&nbsp;{escape(s.name)}'
                   for i, s in enumerate(series)]
        return " &nbsp; ".join(entries + ["- - ideal of each line (same colour)"])

    def _label_axis(self, xs: list[int], series: list[Series]) -> None:
        """A tick at every value, a label on those the exported chart labels."""
        lo, hi = min(xs), max(xs)
        width = max(1.0, float(self.plot.getPlotItem().getViewBox().width()))

        def px(v: float) -> float:
            return width / 2 if hi == lo else width * (v - lo) / (hi - lo)

        labelled = labelled_points(list(xs), series, px, TICK_FONT_PX)
        self.plot.getAxis("bottom").setTicks([
            [(x, f"{x:,}") for j, x in enumerate(xs) if j in labelled],
            [(x, "") for j, x in enumerate(xs) if j not in labelled]])

    def _on_click(self, _item, spots, *_) -> None:
        if len(spots):
            self.open_value(int(round(spots[0].pos().x())))

    def open_value(self, value: int) -> None:
        """Make `value` the current pattern's param (one undoable edit)."""
        pattern = self.document.pattern
        try:
            changed = pattern_from_dict(with_params(pattern.to_dict(), {self.param: value}),
                                        pattern.base_dir)
        except PatternError as err:
            self.status.setText(str(err))
            return
        self.document.set_pattern(changed, f"Set {self.param} = {value}")

    def _on_changed(self, flags: int) -> None:
        """The param list follows the pattern's params (the choice kept while it exists)."""
        if flags & Change.PATTERN:
            names = [name for name, _ in self.document.pattern.params]
            if names != [self.params.itemText(i) for i in range(self.params.count())]:
                current = self.params.currentText()
                self.params.clear()
                self.params.addItems(names)
                if current in names:
                    self.params.setCurrentText(current)


def _gaps(values: tuple[float | None, ...]) -> list[float]:
    return [math.nan if v is None else v for v in values]
