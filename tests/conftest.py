"""Every test runs headless: Qt's offscreen platform unless a test sets another. CUDA kernel
patterns are read by the source engine (as written), whose numbers the tests encode, unless a
test asks for the compiled engine (`"kernel": {"engine": "compiled"}`, or SECTORVIZ_ENGINE
set for that test)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["SECTORVIZ_ENGINE"] = "source"
