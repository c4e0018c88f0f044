"""docs/images/app-sweep-transpose-padding.png: the real window with the sweep dock after a
run of the tiled transpose's padding over 0..32 (shared wavefronts), the whole screen grabbed.

Run under a window manager at projector size:
    xvfb-run -a -s "-screen 0 1280x720x24" sh -c \
      "openbox & sleep 1; .venv/bin/python docs/make_sweep_screenshot.py OUT.png"
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from sectorviz.model import load_pattern
from sectorviz.paths import examples_dir
from sectorviz.ui.main_window import MainWindow


def main(out: str) -> None:
    app = QApplication([])
    path = examples_dir() / "transpose-tiled.sectorviz.json"
    window = MainWindow(load_pattern(path), path, restore=False)
    window.show()
    window.show_sweep()
    sweep = window.sweep
    sweep.params.setCurrentText("pad")
    sweep.metric.setCurrentText("wavefronts")
    sweep.values.setText("0:33")
    sweep.button.click()

    def when_done() -> None:
        if sweep._running:
            QTimer.singleShot(300, when_done)
            return
        QTimer.singleShot(800, lambda: (app.primaryScreen().grabWindow(0).save(out),
                                        app.quit()))

    QTimer.singleShot(1000, when_done)
    app.exec()


if __name__ == "__main__":
    main(sys.argv[1])
