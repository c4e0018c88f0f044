"""The UI thread while the app counts the tiled matmul at n = 4096 (issue 30; the compiled
reading): the window opens on it, a 10 ms QTimer timestamps the event loop (wall and the UI
thread's CPU time) while the grid-wide analysis runs in its worker process, Right is pressed
every RIGHT_EVERY_S for COUNT_S whether or not the count has ended (next warp: the grid shows a
placeholder at once, the warp's details come from the detail worker and the sheet is redrawn
with them), then a comment is typed at the end of the Kernel tab (an edit: a new compile,
which must not hold the UI thread; the ticks go on until the document holds the edit), then
the window is closed; last, the app is started as a process on the same file and sent SIGTERM
mid-count. Printed against their targets: the longest gap between ticks (50 ms; on a loaded
machine the UI thread's own CPU in a gap is printed too: the gap an idle machine would see),
the longest Right key (50 ms), the longest gap while the edited kernel compiles (50 ms), the
first window (1 s: from the pattern file to the first frame, in this process; the kernel is
compiled and read on a thread, its arrival printed beside it), closing the window and SIGTERM
to exit (1 s each). With SECTORVIZ_LANE_PATH=1 the count (and each warp's details) takes
minutes: the keys then land while it counts for all of COUNT_S.
Runs offscreen: PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_ui_latency.py
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import Qt, QTimer  # noqa: E402
from PySide6.QtGui import QTextCursor  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QPlainTextEdit  # noqa: E402

from sectorviz.paths import examples_dir  # noqa: E402
from sectorviz.ui.main_window import MainWindow, load_checked  # noqa: E402

N = 4096
TICK_MS = 10
COUNT_S = 20  # how long the window is open (counting, then answering keys) before it closes
RIGHT_EVERY_S = 0.5
KEY_TARGET_S = TICK_TARGET_S = 0.050
WINDOW_TARGET_S = EXIT_TARGET_S = 1.0
EDIT_S = 120  # the longest the edited kernel may take to compile and be taken
EDIT_MARK = f"// edited while counting, {time.time()}"  # a new compile
AFTER_EDIT_S = 1.0
STARTUP_S = 60  # the app process's launch, before it is sent SIGTERM (once it counts)


def matmul_file(folder: Path) -> Path:
    """The tiled matmul example at n = N, written with its .cu into `folder`."""
    example = examples_dir() / "matmul-tiled-cuda.sectorviz.json"
    doc = json.loads(example.read_text())
    doc["params"]["n"] = N
    shutil.copy(examples_dir() / doc["kernel"]["source"], folder)
    path = folder / "matmul-4096.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


def line(what: str, seconds: float, target: float) -> str:
    return (f"{what}: {1000 * seconds:.1f} ms, target <= {1000 * target:.0f} ms, ratio "
            f"{seconds / target:.2f} ({'met' if seconds <= target else 'NOT met'})")


def in_window(path: Path) -> None:
    app = QApplication.instance() or QApplication([])
    began = time.perf_counter()
    window = MainWindow(load_checked(path, resolve=False), path, restore=False)  # as the app
    window.show()
    app.processEvents()
    first = time.perf_counter() - began
    doc = window.document
    arrived: list[float] = []  # when the kernel, compiled and read on a thread, arrived
    doc.changed.connect(lambda _flags: doc.kernel_pending or arrived.append(time.perf_counter()))
    ticks: list[tuple[float, float]] = []  # (wall, the UI thread's CPU) seconds
    keys: list[float] = []
    progress: list[int] = []
    doc.progress.connect(lambda done, _total: progress.append(done))
    timer = QTimer(interval=TICK_MS)
    timer.timeout.connect(lambda: ticks.append((time.perf_counter(), time.thread_time())))
    timer.start()
    drawn: list[int] = []  # the sheet's redraws
    window.sheet.browser.textChanged.connect(lambda: drawn.append(1))
    cpu = time.process_time()
    ended: list[float] = []  # when the analysis finished or failed
    start = next_key = time.perf_counter()
    while time.perf_counter() - start < COUNT_S:
        app.processEvents()
        if not ended and (doc.analysis is not None or doc.analysis_error is not None):
            ended.append(time.perf_counter() - start)
        if time.perf_counter() >= next_key:
            pressed = time.perf_counter()
            QTest.keyClick(window, Qt.Key_Right)
            keys.append(time.perf_counter() - pressed)
            next_key = time.perf_counter() + RIGHT_EVERY_S
        time.sleep(0.001)
    counted, cpu = time.perf_counter() - start, time.process_time() - cpu
    state = ("still counting when closed" if not ended else
             f"{'counted' if doc.analysis else 'failed'} after {ended[0]:.1f} s"
             + (f" ({doc.analysis_error})" if doc.analysis_error else ""))
    edit_at = len(ticks)
    taken = edit_kernel(app, window)
    timer.stop()
    edit_gaps = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(ticks[edit_at:], ticks[edit_at + 1:])]
    window.document.undo_stack.setClean()  # closed without the unsaved-changes prompt
    closing = time.perf_counter()
    window.close()
    closed = time.perf_counter() - closing
    counting = ticks[:edit_at]
    gaps = [b[0] - a[0] for a, b in zip(counting, counting[1:])]
    busy = [b[1] - a[1] for a, b in zip(counting, counting[1:])]  # the UI thread's own CPU
    print(f"engine: {type(doc.kernel).__name__}; {doc.kernel.warps:,} warps; window open for "
          f"{counted:.1f} s, its UI process {cpu:.1f} CPU s; the analysis {state}; progress "
          f"{len(set(progress))} distinct values up to {max(progress, default=0):,} warps; "
          f"{len(counting)} ticks of {TICK_MS} ms, {len(keys)} Right keys, warp "
          f"{doc.selection.warp} reached, {len(drawn)} sheet redraws")
    print(line("first window (pattern file to first frame)", first, WINDOW_TARGET_S)
          + ("; kernel already resolved" if not arrived and not doc.kernel_pending else
             f"; the kernel arrived {arrived[0] - began:.2f} s after the start" if arrived
             else "; the kernel had not arrived"))
    print(line("longest UI-thread gap (counting, stepping warps)", max(gaps), TICK_TARGET_S)
          + f"; gaps over 20 ms: {sum(g > 0.020 for g in gaps)}; the UI thread's CPU in the "
          f"longest: {1000 * busy[gaps.index(max(gaps))]:.1f} ms")
    print(line("most UI-thread CPU between two ticks (the gap on an idle machine)", max(busy),
               TICK_TARGET_S))
    print(line("longest Right key", max(keys), KEY_TARGET_S))
    edit_gap, edit_busy = max(edit_gaps)
    print(line("longest UI-thread gap while an edited kernel compiles", edit_gap, TICK_TARGET_S)
          + f"; the UI thread's CPU in it: {1000 * edit_busy:.1f} ms; "
          + (f"the edit taken after {taken:.1f} s" if taken < EDIT_S
             else f"the edit not taken in {EDIT_S} s"))
    print(line("closing the window", closed, EXIT_TARGET_S))


def edit_kernel(app: QApplication, window: MainWindow) -> float:
    """Type EDIT_MARK at the end of the Kernel tab's code (its debounced edit: the kernel
    compiled again) and run the event loop until the document holds it -> the seconds that
    took (EDIT_S when it did not); the loop runs AFTER_EDIT_S more (the views redraw with the
    edited kernel), so a tick ends the last gap."""
    source = window.findChild(QPlainTextEdit, "kernelSource")
    source.moveCursor(QTextCursor.End)
    source.insertPlainText(f"\n{EDIT_MARK}\n")
    start = time.perf_counter()
    while time.perf_counter() - start < EDIT_S and \
            EDIT_MARK not in (window.document.pattern.kernel or {}).get("code", ""):
        app.processEvents()
        time.sleep(0.001)
    taken = time.perf_counter() - start
    while time.perf_counter() - start < taken + AFTER_EDIT_S:
        app.processEvents()
        time.sleep(0.001)
    return taken


def sigterm(path: Path) -> None:
    """The app as its own process on `path`: SIGTERM once its analysis worker runs."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    app = subprocess.Popen([sys.executable, "-m", "sectorviz", str(path)], env=env,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline and len(_children(app.pid)) < 2:  # both workers up
        time.sleep(0.1)
    time.sleep(1)  # counting
    workers = _children(app.pid)
    sent = time.perf_counter()
    app.send_signal(signal.SIGTERM)
    status = app.wait(30)
    seconds = time.perf_counter() - sent
    time.sleep(1)
    left = [pid for pid in workers if Path(f"/proc/{pid}").exists()]
    print(line("SIGTERM to exit mid-count", seconds, EXIT_TARGET_S)
          + f"; exit status {status}, {len(workers)} worker processes, "
          f"{len(left)} left a second later")


def _children(pid: int) -> list[int]:
    """The worker processes `pid` spawned (Linux /proc: the 4th field of a stat is its
    parent)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            spawned = b"spawn_main" in (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == pid and spawned:  # not multiprocessing's resource tracker
            found.append(int(stat.parent.name))
    return found


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = matmul_file(Path(folder))
        in_window(path)
        sigterm(path)


if __name__ == "__main__":
    main()
