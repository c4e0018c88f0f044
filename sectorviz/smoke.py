"""`sectorviz --smoke-test DIR`: drive the real main window through a short session, report to
DIR/smoke.json and quit; the exit status is 0 only when every check passed.

The session: open the window on an example and wait for its first paint and grid analysis;
step to the next warp; open stride-32B and set params.stride 8 -> 2 through the document (the
grid and the sheet go from 32 sectors per request to 8); export that grid as SVG, PDF and PNG
into DIR; undo the edit; open a CUDA-kernel example (compiled by nvcc or the bundled NVRTC,
as the detail says); close the window.

smoke.json: {"ok", "checks": [{"name", "ok", "detail", "seconds"}], "timings", "environment",
"qt_messages"}. `timings.first_paint_s` runs from process start (exec) to the first paint of
the window. Dialogs that pop up are closed and reported as failures; a watchdog thread writes a
failed report and ends the process if the session hangs. User settings are left alone: the
window reads and writes a temporary settings folder.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import threading
import time
import traceback
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import (
    QEvent,
    QEventLoop,
    QObject,
    QSettings,
    QTimer,
    qInstallMessageHandler,
    qVersion,
)
from PySide6.QtGui import QAction, QImage
from PySide6.QtWidgets import QApplication, QDialog, QMessageBox, QWidget

from . import __version__
from .atomic import write_atomic
from .engine.compiled.compiler import NO_COMPILER, find_compiler
from .engine.readings import ENGINE_VAR
from .export.formats import diagram_bytes, diagram_svg
from .model import pattern_from_dict
from .model.frontend import reading_of
from .paths import examples_dir
from .scene.diagrams import DiagramSpec
from .ui.document import checked
from .ui.main_window import MainWindow, load_checked

FIRST_EXAMPLE = "transpose-naive.sectorviz.json"
STRIDE_EXAMPLE = "stride-32B.sectorviz.json"  # params.stride 8: 32 sectors per request
CUDA_EXAMPLE = "vector-add-cuda.sectorviz.json"
STRIDES = ((8, 32), (2, 8))  # (params.stride, sectors per request): before and after the edit
PNG_SCALE = 2
STEP_TIMEOUT_S = 20.0  # longest wait for a paint or an analysis
WATCHDOG_S = 90.0  # the whole session; past it the report is written and the process ends
MAX_QT_MESSAGES = 50


class CheckFailed(Exception):
    """A check saw the wrong thing; the message is its detail."""


def process_age() -> float | None:
    """Seconds since this process was started (Linux /proc), or None where that is unknown."""
    try:
        stat = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except OSError:
        return None
    return round(uptime - int(stat[19]) / os.sysconf("SC_CLK_TCK"), 3)


class Report:
    """The checks so far; `write` puts them, with the timings, into DIR/smoke.json."""

    def __init__(self, directory: Path):
        self.path = directory / "smoke.json"
        self.checks: list[dict] = []
        self.timings: dict[str, float | None] = {}
        self.environment: dict[str, str | bool | None] = {}
        self.qt_messages: list[str] = []
        self.started = time.perf_counter()
        self._lock = threading.Lock()

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c["ok"] for c in self.checks)

    def add(self, name: str, ok: bool, detail: str, seconds: float) -> None:
        with self._lock:
            self.checks.append({"name": name, "ok": ok, "detail": detail,
                                "seconds": round(seconds, 3)})

    def run(self, name: str, step: Callable[[], str]) -> bool:
        """Run one step: its return value is the detail of a passed check; CheckFailed or any
        other exception makes a failed one."""
        start = time.perf_counter()
        try:
            detail, ok = step(), True
        except CheckFailed as err:
            detail, ok = str(err), False
        except Exception as err:  # the report must say what broke, whatever it was
            frames = traceback.format_exception(err)
            detail, ok = f"{type(err).__name__}: {err} | {''.join(frames[-3:]).strip()}", False
        self.add(name, ok, detail, time.perf_counter() - start)
        return ok

    def write(self) -> None:
        with self._lock:
            doc = {"ok": self.ok, "checks": list(self.checks),
                   "timings": {**self.timings,
                               "total_s": round(time.perf_counter() - self.started, 3)},
                   "environment": self.environment, "qt_messages": self.qt_messages}
            text = json.dumps(doc, indent=2) + "\n"
        write_atomic(self.path, text)


class _FirstPaint(QObject):
    """Notes when (perf_counter) the first paint event of `window` or a widget inside it came."""

    def __init__(self, window: QWidget):
        super().__init__()
        self.window, self.at = window, None

    def eventFilter(self, obj: QObject, ev: QEvent) -> bool:
        if (self.at is None and ev.type() == QEvent.Type.Paint and isinstance(obj, QWidget)
                and (obj is self.window or self.window.isAncestorOf(obj))):
            self.at = time.perf_counter()
        return False


class Session:
    """The steps of the smoke test, on one main window."""

    def __init__(self, app: QApplication, report: Report, directory: Path,
                 started_age: float | None):
        self.app, self.report, self.directory = app, report, directory
        self.started_age = started_age  # process age when the smoke test began
        self.window: MainWindow | None = None

    # ------------------------------------------------------------ helpers

    def wait(self, condition: Callable[[], bool], what: str,
             timeout: float = STEP_TIMEOUT_S) -> None:
        """Run the event loop until `condition()`; CheckFailed after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise CheckFailed(f"no {what} after {timeout:g} s")
            loop = QEventLoop()
            QTimer.singleShot(10, loop.quit)
            loop.exec()

    def settle(self) -> None:
        """Wait for the grid-wide analysis and the selected warp's details (a CUDA kernel's
        come from a worker process), then let the views repaint."""
        doc = self.window.document
        self.wait(lambda: not doc.analysis_running, "grid analysis")
        if doc.analysis_error:
            raise CheckFailed(f"grid analysis failed: {doc.analysis_error}")
        self.wait(lambda: doc.view().layout is not None, "details of the selected warp")
        self.app.processEvents()

    def sectors(self) -> tuple[int, float]:
        """(sector columns of the grid now shown, sectors per request of that instruction
        over the whole grid)."""
        doc = self.window.document
        layout = self.window.grid_layout
        if layout is None or doc.analysis is None:
            raise CheckFailed("the grid shows no layout" if layout is None else "no analysis")
        if layout is not doc.view().layout:
            raise CheckFailed("the grid view does not show the document's current warp")
        stats = doc.analysis.instructions[doc.selection.instruction]
        return len(layout.sectors), float(stats.sectors_per_request)

    def open(self, name: str) -> None:
        """Open an example as File > Open does: a kernel pattern opens once a thread has
        compiled it (MainWindow.checking), or its error shows in the status bar."""
        path = examples_dir() / name
        if not self.window.open_path(path):
            raise CheckFailed(f"open_path({name}) refused: {self.window.message.text()}")
        self.wait(lambda: not self.window.checking, f"compile of {name}")
        opened = self.window.document.path
        if opened is None or opened.resolve() != path.resolve():
            raise CheckFailed(f"{name} did not open: {self.window.message.text()}")
        self.settle()

    def close_dialogs(self) -> None:
        """A dialog in a smoke test means something asked the user; close it and say so."""
        widget = QApplication.activeModalWidget()
        if widget is None:
            return
        text = widget.text() if isinstance(widget, QMessageBox) else ""
        self.report.add("no dialog", False, f"closed {widget.windowTitle()!r}: {text}", 0.0)
        if isinstance(widget, QDialog):
            widget.reject()
        else:
            widget.close()

    # ------------------------------------------------------------ steps

    def open_window(self) -> str:
        path = examples_dir() / FIRST_EXAMPLE
        self.window = MainWindow(load_checked(path), path)
        painted = _FirstPaint(self.window)
        self.app.installEventFilter(painted)
        try:
            self.window.show()
            self.wait(lambda: painted.at is not None, "paint of the window")
        finally:
            self.app.removeEventFilter(painted)
        age = (None if self.started_age is None
               else round(self.started_age + painted.at - self.report.started, 3))
        self.report.timings["first_paint_s"] = age
        handle = self.window.windowHandle()
        if handle is None or not handle.isExposed():
            raise CheckFailed("the window is painted but not exposed")
        self.settle()
        columns, per_request = self.sectors()
        return (f"{FIRST_EXAMPLE}: '{self.window.windowTitle()}' on {self.app.platformName()}, "
                f"first paint {age} s after process start, grid of {columns} "
                f"sectors, {per_request:g} sectors per request")

    def step_warp(self) -> str:
        doc = self.window.document
        before = doc.selection.warp
        self.window.findChild(QAction, "nextWarp").trigger()
        self.app.processEvents()
        if doc.selection.warp != before + 1:
            raise CheckFailed(f"Next Warp moved from warp {before} to {doc.selection.warp}")
        columns, _ = self.sectors()
        return f"warp {before} -> {doc.selection.warp}, grid of {columns} sectors"

    def edit_stride(self) -> str:
        (old, want_old), (new, want_new) = STRIDES
        self.open(STRIDE_EXAMPLE)
        doc = self.window.document
        before = self.sectors()
        if before != (want_old, want_old):
            raise CheckFailed(f"stride {old}: (grid sectors, sectors/request) {before}, "
                              f"want {(want_old, want_old)}")
        source = doc.pattern.to_dict()
        source["params"]["stride"] = new
        doc.set_pattern(checked(pattern_from_dict(source, doc.pattern.base_dir,
                                                  doc.pattern.include_dirs)),
                        f"stride {new}")
        self.settle()
        after = self.sectors()
        if after != (want_new, want_new) or not doc.modified:
            raise CheckFailed(f"stride {new}: (grid sectors, sectors/request) {after}, want "
                              f"{(want_new, want_new)}; modified={doc.modified}")
        return (f"{STRIDE_EXAMPLE}: params.stride {old} -> {new}, sectors per request "
                f"{before[1]:g} -> {after[1]:g}, grid {before[0]} -> {after[0]} sectors")

    def export(self, suffix: str) -> str:
        doc = self.window.document
        sel = doc.selection
        spec = DiagramSpec(warp=sel.warp, instruction=sel.instruction, execution=sel.run)
        out = self.directory / f"smoke-grid{suffix}"
        write_atomic(out, diagram_bytes(doc.pattern, [spec], suffix, PNG_SCALE))
        data = out.read_bytes()
        columns = len(self.window.grid_layout.sectors)
        if suffix == ".svg":
            root = ET.fromstring(data)
            drawn = sum("sector" in el.get("class", "").split() for el in root.iter())
            if not root.tag.endswith("svg") or drawn != columns:
                raise CheckFailed(f"{out.name}: root <{root.tag}>, {drawn} sector columns, "
                                  f"the grid shows {columns}")
            return f"{out.name}: {len(data)} bytes, {drawn} sector columns like the grid"
        if suffix == ".pdf":
            if not data.startswith(b"%PDF-") or b"%%EOF" not in data[-64:]:
                raise CheckFailed(f"{out.name}: not a complete PDF ({data[:8]!r})")
            return f"{out.name}: {len(data)} bytes"
        svg = ET.fromstring(diagram_svg(doc.pattern, spec))
        want = (round(float(svg.get("width")) * PNG_SCALE),
                round(float(svg.get("height")) * PNG_SCALE))
        image = QImage.fromData(data, "PNG")
        if image.isNull() or abs(image.width() - want[0]) > 1 or abs(image.height() - want[1]) > 1:
            raise CheckFailed(f"{out.name}: {image.width()}x{image.height()} px, want {want} "
                              f"(the SVG at scale {PNG_SCALE})")
        return f"{out.name}: {len(data)} bytes, {image.width()}x{image.height()} px"

    def undo(self) -> str:
        doc = self.window.document
        doc.undo_stack.undo()
        self.settle()
        _, per_request = self.sectors()
        stride = dict(doc.pattern.params)["stride"]
        if (stride, per_request) != STRIDES[0] or doc.modified:
            raise CheckFailed(f"after undo: stride {stride}, {per_request:g} sectors per "
                              f"request, modified={doc.modified}")
        return f"stride back to {stride}, {per_request:g} sectors per request, unmodified"

    def open_cuda(self) -> str:
        compiler = find_compiler()
        if compiler is None:  # the bundle carries NVRTC: a CUDA kernel must open
            raise CheckFailed(f"{CUDA_EXAMPLE} cannot be read: {NO_COMPILER}")
        with engine("compiled"):
            self.open(CUDA_EXAMPLE)
            columns, per_request = self.sectors()
            pattern = self.window.document.pattern
            if pattern.kernel is None:
                raise CheckFailed(f"{CUDA_EXAMPLE} names no CUDA kernel")
            reading = reading_of(pattern)
        if reading is None or reading.engine != "compiled":
            raise CheckFailed(f"{compiler.description} is here, yet the kernel was read "
                              f"{'as a pattern' if reading is None else reading.words}")
        return (f"{CUDA_EXAMPLE} ({pattern.kernel['function']}), {reading.words}: grid of "
                f"{columns} sectors, {per_request:g} sectors per request")

    def close(self) -> str:
        self.window.close()
        self.app.processEvents()
        if self.window.isVisible():
            raise CheckFailed("the window is still open after close()")
        return "closed"


@contextmanager
def engine(name: str) -> Iterator[None]:
    """CUDA kernels read by engine `name` (SECTORVIZ_ENGINE) while the block runs."""
    before = os.environ.get(ENGINE_VAR)
    os.environ[ENGINE_VAR] = name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENGINE_VAR, None)
        else:
            os.environ[ENGINE_VAR] = before


def run_smoke_test(directory: str | Path) -> int:
    """The smoke test (see the module docstring); 0 when every check passed, else 1."""
    started_age = process_age()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    report = Report(directory)
    report.environment = {
        "sectorviz": __version__, "python": platform.python_version(), "qt": qVersion(),
        "pyside6": pyside_version, "frozen": bool(getattr(sys, "frozen", False)),
        "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM"), "DISPLAY": os.environ.get("DISPLAY"),
    }
    report.write()  # a report that says "not ok" exists even if Qt ends the process

    def expire() -> None:
        report.add("watchdog", False, f"the session took over {WATCHDOG_S:g} s; ended", 0.0)
        report.write()
        os._exit(3)

    watchdog = threading.Timer(WATCHDOG_S, expire)
    watchdog.daemon = True
    watchdog.start()

    def note(_mode, _context, message: str) -> None:
        if len(report.qt_messages) < MAX_QT_MESSAGES:
            report.qt_messages.append(message)

    previous_handler = qInstallMessageHandler(note)
    settings = tempfile.TemporaryDirectory(prefix="sectorviz-smoke-")
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings.name)
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "sectorviz"])
    app.setApplicationName("sectorviz")
    app.setOrganizationName("sectorviz")
    report.environment["platform"] = app.platformName()
    session = Session(app, report, directory, started_age)
    sweeper = QTimer(interval=200, timeout=session.close_dialogs)
    sweeper.start()
    try:
        if report.run("open window", session.open_window):
            for name, step in (("step warp", session.step_warp),
                               ("edit stride", session.edit_stride),
                               ("export svg", lambda: session.export(".svg")),
                               ("export pdf", lambda: session.export(".pdf")),
                               ("export png", lambda: session.export(".png")),
                               ("undo edit", session.undo),
                               ("open cuda example", session.open_cuda),
                               ("close window", session.close)):
                report.run(name, step)
    finally:
        sweeper.stop()
        watchdog.cancel()
        qInstallMessageHandler(previous_handler)
        if session.window is not None:
            session.window.document.shutdown()
        report.timings["process_s"] = process_age()
        report.write()
        settings.cleanup()
    passed = sum(c["ok"] for c in report.checks)
    print(f"smoke test {'ok' if report.ok else 'FAILED'}: {passed}/{len(report.checks)} checks "
          f"passed; report in {report.path}")
    return 0 if report.ok else 1
