"""Every test runs headless: Qt's offscreen platform unless a test sets another."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
