"""The desktop app (PySide6 + pyqtgraph). Importing this package pins pyqtgraph to PySide6."""

import os

os.environ["PYQTGRAPH_QT_LIB"] = "PySide6"

import PySide6  # noqa: E402,F401  (first, so pyqtgraph finds the binding already loaded)
