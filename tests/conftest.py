"""Every test runs headless: Qt's offscreen platform unless a test sets another. CUDA kernel
patterns are read as written (the "source" engine: their debug compile), whose numbers the
tests encode, unless a test asks for the compiled reading (`"kernel": {"engine":
"compiled"}`, or SECTORVIZ_ENGINE set for that test).

Hypothesis profiles: `ci` (the default: derandomized, no example database, so a run on a
clean clone is repeatable) and `dev` (random, with the database, more examples):
`SECTORVIZ_HYPOTHESIS=dev pytest`. Tests marked `slow` (more than about 10 s each) run by
default; `pytest -m "not slow"` leaves them out while iterating.

A run started in the background by a shell inherits Ctrl-C ignored, and so would every
sectorviz process a test starts; the tests that send one SIGINT need it back.
"""

import os
import signal

from hypothesis import settings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["SECTORVIZ_ENGINE"] = "source"

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", max_examples=300)
settings.load_profile(os.environ.get("SECTORVIZ_HYPOTHESIS", "ci"))

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # children get SIGINT's default at exec
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than about 10 s (pytest -m 'not slow')")


def pytest_sessionfinish(session, exitstatus):
    """Empty the clipboard before Qt is torn down: the offscreen platform's clipboard still
    holding a copied diagram (an image) when the application object is destroyed at exit
    crashes the interpreter (exit 139 after every test passed)."""
    import sys
    if "PySide6.QtWidgets" in sys.modules:
        from PySide6.QtWidgets import QApplication
        app = QApplication.instance()
        if app is not None:
            app.clipboard().clear()
