"""The form over a CUDA pattern whose arrays leave their dtype to the kernel's pointer
parameters: the element row shows the type the kernel gives (a number, a struct, a vector)."""

import json

from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox

from sectorviz.model import pattern_from_dict
from sectorviz.ui.main_window import MainWindow

KERNEL = """struct Cell { float a, b, c; };
__global__ void k(Cell *cells, float4 *v, double *d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    d[i] = cells[i].a + v[i].x;
}
"""


def pattern(dtype=None):
    arrays = {name: {"length": 1024} for name in ("cells", "v", "d")}
    if dtype:
        arrays["d"]["dtype"] = dtype
    return pattern_from_dict({"format": "sectorviz.pattern/1", "name": "types",
                              "launch": {"grid": [4], "block": [256]}, "arrays": arrays,
                              "kernel": {"code": KERNEL, "function": "k"}})


def test_the_pointee_type_shows_where_an_array_has_no_dtype(qtbot, wait_analysis, wait_check,
                                                            monkeypatch):
    window = MainWindow(pattern())
    qtbot.addWidget(window)
    wait_analysis(window)
    shown = {name: window.findChild(QLabel, f"arrays.{name}:pointee").text()
             for name in ("cells", "v", "d")}
    # pointee types in the pattern's dtype vocabulary: `double *d` gives float64; a struct
    # keeps its name, float4 is a dtype already
    assert shown == {"cells": "from the kernel: Cell (12 B)", "v": "from the kernel: float4 (16 B)",
                     "d": "from the kernel: float64 (8 B)"}
    combo = window.findChild(QComboBox, "arrays.cells.dtype")
    assert combo.currentText() == "from the kernel"
    spins = [w for w in window.findChildren(QSpinBox, "arrays.cells.dtype")]
    assert [s.value() for s in spins] == [12]

    window.document.set_pattern(pattern("float64"), "give d a dtype")
    assert window.findChild(QLabel, "arrays.d:pointee").isHidden()
    assert window.findChild(QComboBox, "arrays.d.dtype").currentText() == "float64"
    window.findChild(QComboBox, "arrays.d.dtype").textActivated.emit("from the kernel")
    wait_check(window)
    assert "dtype" not in json.loads(window.document.pattern.source)["arrays"]["d"]
    assert window.findChild(QLabel, "arrays.d:pointee").text() == "from the kernel: float64 (8 B)"
    window.document.undo_stack.setClean()
