"""A kernel that needs data the pattern does not give: the status bar offers the values the
error names, one click applies them as an undoable edit, and the grid analysis then runs."""

import json
import shutil

from PySide6.QtWidgets import QToolButton

from sectorviz.model import load_pattern
from sectorviz.paths import examples_dir


def test_one_click_assumes_the_offered_values_and_undo_takes_them_back(qtbot, tmp_path):
    from sectorviz.ui.main_window import MainWindow
    doc = json.loads((examples_dir() / "gather-distinct-cuda.sectorviz.json").read_text())
    del doc["arrays"]["index"]["values"]
    doc["params"] = {"n": 4096, "threads": 256}
    shutil.copy(examples_dir() / "gather.cu", tmp_path / "gather.cu")
    path = tmp_path / "gather.sectorviz.json"
    path.write_text(json.dumps(doc))
    window = MainWindow(load_pattern(path), path, restore=False)
    qtbot.addWidget(window)
    window.show()
    button = window.findChild(QToolButton, "assumeValues")
    qtbot.waitUntil(lambda: window.document.analysis_error is not None, timeout=60000)
    assert button.isVisible() and button.text() == "Assume values for index"
    # the rule of model.assume: integers in [0, the other arrays' smallest length)
    assert button.toolTip() == ("assumed values: arrays.index uniform integers in [0, 4096), "
                                "seed 0 (not given in the pattern)")
    button.click()
    arrays = window.document.pattern.to_dict()["arrays"]
    assert arrays["index"]["values"] == {"kind": "uniform", "seed": 0, "low": 0, "high": 4096}
    qtbot.waitUntil(lambda: window.document.analysis is not None, timeout=60000)
    assert window.document.analysis_error is None and not button.isVisible()
    assert window.document.undo_stack.undoText() == "Assume values for index"
    window.document.undo_stack.undo()
    assert "values" not in window.document.pattern.to_dict()["arrays"]["index"]
