"""PyInstaller runtime hook: pyqtgraph uses PySide6, the only Qt binding in the bundle."""

import os

os.environ["PYQTGRAPH_QT_LIB"] = "PySide6"
