"""The app's window launched from a parsed command line (sectorviz.command.app parses it and
documents the flags): the window on FILE, or a screenshot of it once drawn and analysed, or
the self-test session; one line on stderr and exit 2 for bad input, an uncaught exception in
the event loop one line too (ErrorReporter).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NoReturn

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QIODevice,
    QObject,
    QSocketNotifier,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from ..atomic import write_atomic
from ..engine.readings import ENGINE_VAR
from ..exits import fail
from ..export.raster import NoPlatform, check_platform
from ..host.starter import cu_pattern
from ..model import Pattern, PatternError
from ..model.errors import internal_error, printable
from ..model.frontend import kernel_for
from ..model.listing import listing_of
from ..paths import default_example, resources_dir
from .document import Change
from .files import settings
from .include_dialog import SETTING as INCLUDE_SETTING
from .main_window import MainWindow, load_checked
from .stored import StoredSettings

SETTLE_PASSES = 4  # event-loop passes before a screenshot, so layouts have settled


def grab_when_drawn(window: MainWindow, app: QApplication) -> list[bytes]:
    """The window (its compare window or its presentation, if one is open) as PNG
    bytes, in the list returned, grabbed once the analyses and the warp's details are in,
    the overview and a shown sheet have drawn them and the event queue has drained (then
    the event loop exits)."""
    done: list[bytes] = []

    def target():
        return window.presentation or (window.compare_windows or [window])[-1]

    def grab() -> None:
        shown = target()
        doc = window.document
        sheet = window.sheet
        if (done or doc.analysis_running or doc.details_pending or window.overview.drawing
                or not getattr(shown, "ready", True)
                or (sheet.isVisible() and not sheet.current)):
            return
        for _ in range(SETTLE_PASSES):  # a resized dock relays out its scroll areas in turns
            app.sendPostedEvents()
            app.processEvents()
        data = QByteArray()
        buffer = QBuffer(data)
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        ok = shown.grab().save(buffer, "PNG")
        done.append(bytes(data))
        app.exit(0 if ok else 2)

    def later(_flags: int = 0) -> None:
        QTimer.singleShot(0, grab)

    window.document.changed.connect(  # the analysis, or the warp's details, arrived
        lambda flags: flags & (Change.ANALYSIS | Change.SELECTION) and later())
    window.overview.drawn.connect(later)
    window.sheet.drawn.connect(later)  # its rows are worked out on a thread
    for compare in window.compare_windows:
        compare.b.changed.connect(later)
        compare.refreshed.connect(later)
    later()
    return done


class ErrorReporter(QObject):
    """Installed as sys.excepthook (the caller restores the old one): an exception that
    reaches Qt's event loop (a slot or a worker thread failing) -> one line on stderr and in
    the window's status bar. Nothing else is touched, so the document keeps the user's work."""

    raised = Signal(str)  # the line; queued to the window when raised in another thread

    def __init__(self, window: MainWindow, name: str):
        super().__init__(window)
        self.name, self.failures = name, 0
        self.raised.connect(window.show_error)
        self._previous = sys.excepthook
        sys.excepthook = self.hook

    def hook(self, kind, err, tb) -> None:
        if not issubclass(kind, Exception):  # SystemExit and the like
            self._previous(kind, err, tb)
            return
        self.failures += 1
        line = printable(f"{self.name}: {internal_error(err)}")
        print(line, file=sys.stderr)
        self.raised.emit(line)


STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextlib.contextmanager
def signals_wake(app: QApplication) -> Iterator[None]:
    """While the block builds a window and runs Qt's event loop, SIGTERM or SIGINT ends the
    loop with 128 + the signal and the line 'interrupted' (one that comes before the loop
    runs, as soon as it runs). Nothing is raised: an exception raised where the signal lands
    (often a Python override Qt calls from C++, such as a paint) is printed and dropped by
    PySide, and the window would go on. The signal's number, written to a socket Qt watches,
    wakes the loop at once, so Python runs the handler even when no event comes."""
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read, app)
    notifier.activated.connect(lambda: reader.recv(64))  # Python code: the handler runs
    previous_fd = signal.set_wakeup_fd(writer.fileno())
    stopping: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        if not stopping:
            print("interrupted", file=sys.stderr)
        stopping.append(signum)
        app.exit(128 + stopping[0])  # no effect before the loop runs: the timer then ends it
        QTimer.singleShot(0, app, lambda: app.exit(128 + stopping[0]))

    previous = {number: signal.signal(number, stop) for number in STOPPING_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        signal.set_wakeup_fd(previous_fd)
        notifier.setEnabled(False)
        notifier.deleteLater()
        reader.close()
        writer.close()


def _has_display() -> bool:
    """False on Linux with no X or Wayland display and no Qt platform chosen."""
    return (not sys.platform.startswith("linux") or "QT_QPA_PLATFORM" in os.environ
            or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")))


def _include_dirs(args: argparse.Namespace) -> tuple[str, ...]:
    """--include-dir, then the stored include folders (the window notes any left out)."""
    stored = StoredSettings(settings()).folders(INCLUDE_SETTING)
    return tuple(dict.fromkeys((*args.include_dir, *stored)))


def run(args: argparse.Namespace, self_test: Callable[[str], int] | None) -> int:
    """The app on the parsed command line `args` (command/app.py) -> its exit status;
    `self_test(DIR)` runs `--smoke-test DIR`."""
    if not _has_display():
        if not (args.screenshot or args.smoke_test):
            return fail("sectorviz: no display to open a window on (DISPLAY is not set); run "
                        "it under xvfb-run, or use `sectorviz report` / `sectorviz export`")
        os.environ["QT_QPA_PLATFORM"] = "offscreen"  # images and self-tests need no screen
    if args.engine:
        os.environ[ENGINE_VAR] = args.engine
    if args.smoke_test:
        if self_test is None:
            return fail("sectorviz: --smoke-test needs the full command (sectorviz.cli)")
        return self_test(args.smoke_test)
    path = Path(args.file) if args.file else default_example()
    # a plain window opens at once: its kernel is compiled and read on a thread (a failure
    # then shows as below); a screenshot, a warp or instruction asked for, a comparison or
    # the presentation are checked first, their errors ending the launch
    plain = not (args.screenshot or args.warp or args.instruction is not None
                 or args.compare or args.present)
    if path.suffix == ".cu" and plain:  # the window offers to make a pattern
        return _run_window(args, load_checked(default_example()), None, 0, opening=path)
    try:
        pattern = _cu_checked(path, args) if path.suffix == ".cu" else \
            load_checked(path, _include_dirs(args), resolve=not plain)
    except PatternError as err:
        if args.screenshot:
            return fail(str(err))
        print(str(err), file=sys.stderr)
        return _run_window(args, load_checked(default_example()), None, 0, opening=path)
    if plain:
        return _run_window(args, pattern, path if args.file else None, 0)
    try:
        listing = listing_of(pattern)
        if not 0 <= args.warp < listing.warps:
            raise PatternError("--warp", f"warp {args.warp} outside [0, {listing.warps})")
        k = 0 if args.instruction is None else listing.index(args.instruction, "all")
    except PatternError as err:
        return fail(str(err))
    return _run_window(args, pattern, path if args.file else None, k)


def _cu_checked(cu: Path, args: argparse.Namespace) -> Pattern:
    """The starting pattern of the .cu's kernel (--kernel, else its only one), resolved, as
    `sectorviz report KERNEL.cu` reads it; what it took from the host code said on stderr."""
    pattern, said, _ = cu_pattern(cu, _include_dirs(args), args.kernel)
    print(said, file=sys.stderr)
    kernel_for(pattern)
    return pattern


def _fall_back(window: MainWindow, line: str) -> None:
    """The kernel of the file the window opened on did not resolve: as when a file fails
    to open at launch, its line on stderr and in the status bar, the window on the default
    example."""
    print(line, file=sys.stderr)
    window.document.reset(load_checked(default_example()), None)
    window.show_error(line)


def _run_window(args: argparse.Namespace, pattern: Pattern, path: Path | None, k: int,
                opening: Path | None = None) -> int:
    """The window on `pattern` (file `path`, None: an untitled copy), showing instruction
    k; `opening`: a file that could not be opened at launch, opened again in the window so
    that its error shows there (or its kernel, or the offer to make a pattern for a .cu)."""
    if QApplication.instance() is None:
        try:
            check_platform()
        except NoPlatform as err:
            return fail(f"sectorviz: {err}")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("sectorviz")
    app.setOrganizationName("sectorviz")
    app.setDesktopFileName("sectorviz")
    app.setWindowIcon(QIcon(str(resources_dir() / "icons" / "sectorviz.svg")))
    with signals_wake(app):  # already while the window is built: a signal then ends the loop
        return _window_session(args, app, pattern, path, k, opening)  # as soon as it runs


def _window_session(args: argparse.Namespace, app: QApplication, pattern: Pattern,
                    path: Path | None, k: int, opening: Path | None) -> int:
    """_run_window's window built, shown and its event loop run -> the exit status."""
    window = MainWindow(pattern, path, restore=not args.screenshot,
                        include_dirs=tuple(args.include_dir))
    if args.theme:
        window.set_theme(args.theme, remember=False)
    window.set_warp(args.warp)
    window.set_instruction(k)
    errors = ErrorReporter(window, str(opening or path or default_example()))
    if args.compare and window.compare_with(args.compare) is None and args.screenshot:
        return fail(window.message.text())
    if args.present:
        window.present()
    if args.screenshot:
        out = Path(args.screenshot)
        errors.raised.connect(lambda _line: app.exit(2))  # exit 2, as for bad input
        shot = grab_when_drawn(window, app)
        window.show()
        code = app.exec()
        if errors.failures:
            return 2  # its line is out already
        if code > 128:  # interrupted (130, 143): its line is out already
            return code
        window.document.shutdown()
        if code or not shot:
            return fail(f"{out}: cannot make the screenshot")
        try:
            write_atomic(out, shot[0])  # as exports are written: whole or not at all
        except OSError as err:
            return fail(f"{out}: {err.strerror or err}")
        return 0
    if window.document.kernel_pending:
        window.document.kernel_failed.connect(lambda line: _fall_back(window, line),
                                              Qt.SingleShotConnection)
    window.show()
    if opening is not None:
        QTimer.singleShot(0, window, lambda: window.open_path(opening))
    code = app.exec()
    window.document.shutdown()  # kills work still running: the process ends now
    if code > 128:  # interrupted (130, 143): its line is out already
        end_interrupted(code)
    return code


def end_interrupted(code: int) -> NoReturn:
    """End an app interrupted by SIGTERM or Ctrl-C (`code` 143 or 130), its worker processes
    already killed, at once, as the signal's default action would: Python's teardown, where a
    thread of the window's (a compile, the sheet's rows) may still touch Qt objects being
    destroyed, is skipped (it ended the process with SIGSEGV at times)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
