"""The form's structural edits of names and launch: adding, removing and renaming arrays,
params and lets (renames follow every reference), and launching n threads with a block size."""

import pytest
from PySide6.QtWidgets import (
    QCheckBox,
    QGroupBox,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QToolButton,
)

from sectorviz.model import pattern_from_dict
from sectorviz.ui.expr_text import cover_grid, cover_n, renamed_text


def set_doc(window, change):
    """A model-side change (as the JSON tab or an undo would make it)."""
    doc = window.document.pattern.to_dict()
    change(doc)
    window.document.set_pattern(pattern_from_dict(doc, window.document.pattern.base_dir), "test")


def answer(monkeypatch, text):
    """The next name dialog answers `text`."""
    monkeypatch.setattr(QInputDialog, "getText", lambda *a, **k: (text, True))


def test_add_and_remove_an_array(open_window):
    window = open_window("vector-add")
    doc, stack = window.document, window.document.undo_stack
    window.findChild(QPushButton, "addArray").click()
    assert doc.pattern.to_dict()["arrays"]["arr1"] == {"dtype": "float32", "length": 1024}
    assert stack.count() == 1 and window.findChild(QGroupBox, "array:arr1")
    window.findChild(QToolButton, "remove:arrays.arr1").click()
    assert "arr1" not in doc.pattern.to_dict()["arrays"] and stack.count() == 2
    assert window.findChild(QGroupBox, "array:arr1") is None
    stack.undo()
    assert window.findChild(QGroupBox, "array:arr1")

    before = doc.pattern
    window.findChild(QToolButton, "remove:arrays.a").click()  # load a[i] still reads it
    assert doc.pattern == before
    error = window.findChild(QLabel, "arrays.a:error")
    assert not error.isHidden() and error.text() == "array a is still used by accesses[0].array"
    assert window.findChild(QLabel, "formError").isHidden()  # in place, not in the banner
    window.findChild(QToolButton, "remove:params.threads").click()
    assert window.findChild(QLabel, "params.threads:error").text() == (
        "param threads is still used by launch.grid[0] and 1 more")
    set_doc(window, lambda d: d["params"].update(n=4096))  # the next change clears them
    assert error.isHidden()

    set_doc(window, lambda d: d["arrays"].pop("arr1"))  # model -> view
    assert window.findChild(QGroupBox, "array:arr1") is None
    window.findChild(QPushButton, "addArray").click()
    assert "arr1" in doc.pattern.to_dict()["arrays"]  # the fresh name is free again


def test_rename_rewrites_every_reference(open_window, monkeypatch):
    window = open_window("gather-repeated")
    doc = window.document
    answer(monkeypatch, "count")
    window.findChild(QToolButton, "rename:params.n").click()
    d = doc.pattern.to_dict()
    assert list(d["params"]) == ["count", "threads"]
    assert d["launch"]["grid"] == ["(count + threads - 1) / threads"]
    assert d["arrays"]["index"]["values"]["expr"] == "(i / 4) * 8 % count"
    assert d["guard"] == "i < count"
    answer(monkeypatch, "tid")
    window.findChild(QToolButton, "rename:let.i").click()
    d = doc.pattern.to_dict()
    assert d["let"] == {"tid": "blockIdx.x * blockDim.x + threadIdx.x"}
    assert d["arrays"]["index"]["values"]["expr"] == "(i / 4) * 8 % count"  # its own i
    assert [a["index"] for a in d["accesses"]] == ["tid", "index[tid]", "tid"]
    answer(monkeypatch, "perm")
    window.findChild(QToolButton, "rename:arrays.index").click()
    d = doc.pattern.to_dict()
    assert list(d["arrays"]) == ["perm", "data", "out"]
    assert [a["array"] for a in d["accesses"]] == ["perm", "data", "out"]
    assert d["accesses"][1]["index"] == "perm[tid]"
    assert window.findChild(QGroupBox, "array:perm")
    assert window.findChild(QLineEdit, "let.tid").text() == "blockIdx.x * blockDim.x + threadIdx.x"
    assert doc.undo_stack.count() == 3
    assert doc.kernel.instructions[0].array == "perm"

    before = doc.pattern
    answer(monkeypatch, "data")
    window.findChild(QToolButton, "rename:arrays.perm").click()
    assert doc.pattern == before
    assert window.findChild(QLabel, "arrays.perm:error").text() == (
        "'data' is already a name in this pattern")
    answer(monkeypatch, "2x")
    window.findChild(QToolButton, "rename:params.threads").click()
    assert "not a valid name" in window.findChild(QLabel, "params.threads:error").text()
    assert doc.pattern == before
    doc.undo_stack.undo()
    assert list(doc.pattern.to_dict()["arrays"]) == ["index", "data", "out"]


def test_renamed_text_splices_only_real_references():
    assert renamed_text("n+nn*n - idx[n]", "n", "count") == "count+nn*count - idx[count]"
    assert renamed_text("idx[i] + threadIdx.x", "idx", "perm") == "perm[i] + threadIdx.x"
    assert renamed_text("min(n, x)", "min", "lo") == "min(n, x)"
    assert renamed_text(32, "n", "m") == 32


@pytest.mark.parametrize("grid, block, n", [
    ("(n + threads - 1) / threads", "threads", "n"),
    ("(n+threads-1)/threads", "threads", "n"),
    ("((n / 2) + 128 - 1) / 128", 128, "n / 2"),
    ("(n + 255) / 256", 256, None),
    ("(n + threads - 1) / 256", "threads", None),
    ("m / tile", "tile", None),
    (4096, 256, None),
])
def test_cover_shape(grid, block, n):
    assert cover_n(grid, block) == n
    if n is not None:
        assert cover_n(cover_grid(n, block), block) == n


def test_launch_n_threads_with_a_block_size(open_window, qtbot):
    window = open_window("vector-add")
    doc = window.document
    cover = window.findChild(QCheckBox, "launch.cover")
    assert cover.isChecked()  # the file's grid x is (n + threads - 1) / threads
    n = window.findChild(QLineEdit, "launch.grid[0]")
    assert n.text() == "n"
    n.clear()
    qtbot.keyClicks(n, "n / 2")
    assert doc.pattern.to_dict()["launch"]["grid"] == ["((n / 2) + threads - 1) / threads"]
    assert doc.kernel.grid[0] == 2048 and n.text() == "n / 2"
    block = window.findChild(QLineEdit, "launch.block[0]")
    block.clear()
    qtbot.keyClicks(block, "128")
    launch = doc.pattern.to_dict()["launch"]
    assert launch == {"grid": ["((n / 2) + 128 - 1) / 128"], "block": [128]}
    assert doc.undo_stack.count() == 2  # one step per field
    assert window.findChild(QLineEdit, "launch.grid[0]").text() == "n / 2"

    cover.setChecked(False)  # plain grid: the same launch, as a block count
    assert doc.pattern.to_dict()["launch"] == {"grid": [4096], "block": [128]}
    assert window.findChild(QLineEdit, "launch.grid[0]").text() == "4096"
    cover = window.findChild(QCheckBox, "launch.cover")
    assert not cover.isChecked()
    cover.setChecked(True)
    assert doc.pattern.to_dict()["launch"]["grid"] == ["(524288 + 128 - 1) / 128"]
    assert doc.kernel.grid[0] == 4096

    set_doc(window, lambda d: d["launch"].update(grid=[64]))  # model -> view
    assert not window.findChild(QCheckBox, "launch.cover").isChecked()
    set_doc(window, lambda d: d["launch"].update(grid=["(n + 128 - 1) / 128"]))
    assert window.findChild(QCheckBox, "launch.cover").isChecked()
    assert window.findChild(QLineEdit, "launch.grid[0]").text() == "n"


def test_plain_launch_opens_in_grid_mode(open_window):
    window = open_window("transpose-naive")
    assert not window.findChild(QCheckBox, "launch.cover").isChecked()
    assert window.findChild(QLineEdit, "launch.grid[0]").text() == "m / tile"
    assert window.findChild(QLineEdit, "launch.grid[1]").text() == "m / tile"
