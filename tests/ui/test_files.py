"""Open/save round trip (atomic), the unsaved-changes prompt, and broken files."""

import json
import os
import stat

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QLabel, QLineEdit, QMessageBox, QSpinBox

from sectorviz.model import PatternError, pattern_from_dict
from sectorviz.ui.files import add_recent, recent_files


def edit_stride(window, value):
    window.findChild(QSpinBox, "params.stride").setValue(value)


def test_save_as_and_open_round_trip(open_window, tmp_path, monkeypatch):
    window = open_window("stride-32B")
    edit_stride(window, 2)
    target = tmp_path / "mine.sectorviz.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    assert window.save_as()
    assert not window.document.modified and window.document.path == target
    assert [p.name for p in tmp_path.iterdir()] == ["mine.sectorviz.json"]  # no temp left
    assert json.loads(target.read_text())["params"]["stride"] == 2
    assert target.resolve() in recent_files(window.store)
    saved = window.document.pattern
    edit_stride(window, 4)
    assert window.save()
    assert json.loads(target.read_text())["params"]["stride"] == 4
    window.document.reset(saved, None)
    assert window.open_path(target)
    assert window.document.pattern.to_dict() == json.loads(target.read_text())
    assert window.findChild(QSpinBox, "params.stride").value() == 4
    assert "mine.sectorviz.json" in window.windowTitle()


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    yield
    os.umask(old)


def test_saving_gives_a_new_file_the_umask_mode_and_keeps_an_existing_files(
        open_window, tmp_path, monkeypatch, umask_027):
    window = open_window("stride-32B")
    save, save_as = (window.findChild(QAction, name) for name in ("save", "saveAs"))
    target, other = tmp_path / "mine.sectorviz.json", tmp_path / "other.sectorviz.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    edit_stride(window, 2)
    save.trigger()  # a bundled example: Save asks for a name, and makes a new file
    assert window.document.path == target and stat.S_IMODE(target.stat().st_mode) == 0o640
    target.chmod(0o600)
    edit_stride(window, 3)
    save.trigger()  # in place: the file keeps its mode
    assert json.loads(target.read_text())["params"]["stride"] == 3
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    other.write_text("{}")
    other.chmod(0o604)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(other), ""))
    save_as.trigger()  # over an existing file: its mode stays
    assert json.loads(other.read_text())["params"]["stride"] == 3
    assert stat.S_IMODE(other.stat().st_mode) == 0o604
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([other.name, target.name])


def test_save_never_overwrites_a_bundled_example(open_window, tmp_path, monkeypatch):
    window = open_window("stride-32B")
    original = window.document.path.read_text()
    edit_stride(window, 2)
    target = tmp_path / "copy.sectorviz.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    assert window.save()
    assert window.document.path == target and target.exists()
    from sectorviz.paths import examples_dir
    assert (examples_dir() / "stride-32B.sectorviz.json").read_text() == original


@pytest.mark.parametrize("answer, opened", [(QMessageBox.Cancel, False),
                                            (QMessageBox.Discard, True)])
def test_unsaved_changes_prompt_on_open(open_window, monkeypatch, answer, opened):
    from sectorviz.paths import default_example
    window = open_window("stride-32B")
    edit_stride(window, 2)
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *a, **k: asked.append(a[1:3]) or answer)
    assert window.open_path(default_example()) is opened
    assert asked and asked[0][0] == "Unsaved changes"
    assert (window.document.pattern.name == "Vector add") is opened


def test_unsaved_changes_prompt_on_close(open_window, monkeypatch, tmp_path):
    window = open_window("stride-32B")
    edit_stride(window, 2)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Cancel)
    window.close()
    assert window.isVisible()
    target = tmp_path / "kept.sectorviz.json"
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Save)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window.document.mark_saved(target)
    edit_stride(window, 3)
    window.close()
    assert not window.isVisible()
    assert json.loads(target.read_text())["params"]["stride"] == 3


def test_no_prompt_when_unmodified(open_window, monkeypatch):
    window = open_window("stride-32B")
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: pytest.fail("asked"))
    window.close()
    assert not window.isVisible()


@pytest.mark.parametrize("text, needle", [
    ('{"format": "sectorviz.pattern/1",', "invalid JSON"),
    ('{"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]}, '
     '"arrays": {"x": {"dtype": "float32", "length": 32}}, '
     '"accesses": [{"op": "load", "array": "x", "index": "j"}]}', "unknown name 'j'"),
])
def test_broken_file_keeps_current_work(open_window, tmp_path, text, needle):
    window = open_window("stride-32B")
    edit_stride(window, 2)
    before = window.document.pattern
    bad = tmp_path / "bad.sectorviz.json"
    bad.write_text(text)
    assert not window.open_path(bad)
    assert window.document.pattern == before and window.document.modified
    message = window.findChild(QLabel, "statusMessage").text()
    assert str(bad) in message and needle in message and "\n" not in message


def test_missing_file_message(open_window, tmp_path):
    window = open_window("stride-32B")
    assert not window.open_path(tmp_path / "nope.sectorviz.json")
    assert "cannot read nope.sectorviz.json" in window.findChild(QLabel, "statusMessage").text()


def test_recent_files_keep_newest_first(tmp_path):
    from sectorviz.ui.files import settings
    store = settings()
    store.remove("recent")
    for name in ("a", "b", "a"):
        add_recent(store, tmp_path / name)
    assert recent_files(store) == [tmp_path / "a", tmp_path / "b"]


def test_examples_open_as_untitled_copies(open_window):
    from sectorviz.paths import example_paths
    window = open_window("stride-32B")
    assert window.open_example(example_paths()[0])
    doc = window.document
    assert doc.path is None
    # untouched, it has nothing to save: its name, not "(unsaved)"
    assert window.windowTitle() == f"{doc.pattern.name}[*] — sectorviz"
    assert not window.isWindowModified()
    edited = doc.pattern.to_dict() | {"name": "mine"}
    doc.set_pattern(pattern_from_dict(edited, doc.pattern.base_dir), "Change name to mine")
    assert window.windowTitle() == "mine (unsaved)[*] — sectorviz" and window.isWindowModified()
    doc.undo_stack.undo()
    assert "(unsaved)" not in window.windowTitle()


def test_the_example_opened_at_start_is_not_unsaved(qtbot):
    """`sectorviz` without a file opens the default example as an untitled copy."""
    from sectorviz.model import load_pattern
    from sectorviz.paths import default_example
    from sectorviz.ui.main_window import MainWindow
    window = MainWindow(load_pattern(default_example()), None, restore=False)
    qtbot.addWidget(window)
    assert window.windowTitle() == f"{window.document.pattern.name}[*] — sectorviz"
    window.document.shutdown()


def test_drop_a_pattern_file_opens_it(open_window):
    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    from sectorviz.paths import default_example
    window = open_window("stride-32B")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(default_example()))])
    event = QDropEvent(QPointF(10, 10), Qt.CopyAction, mime, Qt.LeftButton, Qt.NoModifier)
    window.dropEvent(event)
    assert window.document.path == default_example()


def test_save_as_elsewhere_keeps_relative_paths_on_the_same_files(open_window, tmp_path,
                                                                  monkeypatch, wait_check):
    import shutil

    import numpy as np

    from sectorviz.model import load_pattern, warp_detail
    from sectorviz.paths import examples_dir

    def addresses(pattern):
        return [run.address.tolist() for runs in warp_detail(pattern, 1).executions
                for run in runs]
    src, out = tmp_path / "src", tmp_path / "out" / "deeper"
    (src / "data").mkdir(parents=True)
    out.mkdir(parents=True)
    np.save(src / "data" / "idx.npy", np.arange(64, dtype=np.int32) * 2)
    shutil.copy(examples_dir() / "gather.cu", src / "gather.cu")
    original = src / "gather.sectorviz.json"
    original.write_text(json.dumps({
        "format": "sectorviz.pattern/1", "name": "gather from a file",
        "params": {"n": 64}, "launch": {"grid": [2], "block": [32]},
        "arrays": {"index": {"dtype": "int32", "length": "n",
                             "values": {"kind": "file", "path": "data/idx.npy"}},
                   "data": {"dtype": "float32", "length": "2 * n"},
                   "out": {"dtype": "float32", "length": "n"}},
        "kernel": {"source": "gather.cu", "function": "gather"}}))
    window = open_window("stride-32B")
    assert window.open_path(original)
    wait_check(window)
    before = addresses(window.document.pattern)
    target = out / "mine.sectorviz.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    assert window.save_as()

    saved = json.loads(target.read_text())
    assert saved["arrays"]["index"]["values"]["path"] == "../../src/data/idx.npy"
    assert saved["kernel"]["source"] == "../../src/gather.cu"
    assert json.loads(original.read_text())["kernel"]["source"] == "gather.cu"
    doc = window.document
    assert doc.pattern.base_dir == str(out) and doc.pattern.to_dict() == saved
    assert doc.undo_stack.count() == 0 and not doc.modified  # part of the save, not a step
    message = window.findChild(QLabel, "statusMessage").text()
    assert "arrays.index.values.path data/idx.npy → ../../src/data/idx.npy" in message
    assert "kernel.source gather.cu → ../../src/gather.cu" in message
    with pytest.raises(PatternError, match="outside the pattern's root"):
        addresses(load_pattern(target))  # src lies outside the new folder's root
    assert addresses(load_pattern(target, (str(src),))) == before  # the same files
    assert addresses(doc.pattern) == before
    assert window.findChild(QLineEdit, "kernel.source").text() == "../../src/gather.cu"

    assert window.save()  # same folder again: nothing to rewrite
    assert window.findChild(QLabel, "statusMessage").text() == f"saved {target}"
