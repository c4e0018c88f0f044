"""Issue 22, item 1, in the app: include folders the user names (Settings > Include Folders…,
kept in the settings; `--include-dir` on the app's command line) are read for every pattern
the app opens, exactly as `report --include-dir` reads them; a stored folder that is gone is
left out with a note in the status bar and never stops the app."""

from __future__ import annotations

import json

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QListWidget

from sectorviz.command import app
from sectorviz.host.kernels import global_functions
from sectorviz.model.memo import MEMO
from sectorviz.ui import files
from sectorviz.ui.include_dialog import SETTING, IncludeFoldersDialog

KERNEL = '#include "idx.h"\n__global__ void k(float *a) { a[threadIdx.x * STEP] = 0; }\n'
MISSING = "k.cu line 1, column 10: idx.h: No such file or directory"  # nvcc's, at the quote


@pytest.fixture
def store():
    s = files.settings()
    s.clear()
    s.sync()
    yield s
    s.clear()
    s.sync()


def project(tmp_path):
    """tmp_path/proj/k.sectorviz.json, whose kernel includes idx.h, found only in
    tmp_path/lib (STEP 2: 8 sectors) -> (pattern path, lib)."""
    lib, home = tmp_path / "lib", tmp_path / "proj"
    lib.mkdir()
    home.mkdir()
    (lib / "idx.h").write_text("#define STEP 2\n")
    (home / "k.cu").write_text(KERNEL)
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"length": 4096}}, "kernel": {"source": "k.cu", "function": "k"}}
    path = home / "k.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path, str(lib)


def status(window) -> str:
    return window.findChild(QLabel, "statusMessage").text()


def test_a_stored_include_folder_is_read_for_a_pattern_opened(tmp_path, store, open_window,
                                                             wait_analysis, wait_check):
    path, lib = project(tmp_path)
    window = open_window()
    window.open_path(path)  # refused once its compile answers
    wait_check(window)
    assert MISSING in status(window)
    store.setValue(SETTING, [lib])
    window = open_window()
    assert window.include_dirs == (lib,) and "settings:" not in status(window)
    assert window.open_path(path)
    wait_check(window)
    wait_analysis(window)
    assert window.document.pattern.include_dirs == (lib,)
    assert window.document.analysis.totals.sectors == 8


def test_a_missing_folder_is_left_out_with_a_note(tmp_path, store, open_window):
    _, lib = project(tmp_path)
    store.setValue(SETTING, [str(tmp_path / "gone"), lib, lib])
    window = open_window()
    assert window.include_dirs == (lib,)
    assert (f"settings: include folder '{tmp_path / 'gone'}' is not a folder; left out"
            in status(window))


@pytest.mark.parametrize("value", [{"a": 1}, [3, "x"]])
def test_a_value_that_is_no_list_of_folders_counts_as_none(store, open_window, value):
    store.setValue(SETTING, value)
    window = open_window()
    assert window.include_dirs == ()
    assert "is not a list of folders; using none" in status(window)


def test_the_dialog_adds_and_removes_folders(tmp_path, qtbot):
    dialog = IncludeFoldersDialog(("/a",))
    qtbot.addWidget(dialog)
    dialog.add_folder(str(tmp_path))
    dialog.add_folder(str(tmp_path))  # once
    listed = dialog.findChild(QListWidget, "includeFolderList")
    assert [listed.item(i).text() for i in range(listed.count())] == ["/a", str(tmp_path)]
    listed.setCurrentRow(0)
    dialog.remove_selected()
    assert dialog.folders() == (str(tmp_path),)


def test_setting_the_folders_keeps_them_and_applies_them_now(tmp_path, store, open_window,
                                                            wait_analysis, wait_check):
    path, lib = project(tmp_path)
    window = open_window()
    assert window.findChild(QAction, "includeFolders") is not None
    window.set_include_dirs((lib,))
    wait_check(window)
    assert store.value(SETTING) in ([lib], lib)  # INI gives a one-item list back as its item
    assert window.document.pattern.include_dirs == (lib,)
    assert status(window) == f"include folders: {lib}"
    assert window.open_path(path)
    wait_check(window)
    wait_analysis(window)
    assert window.document.analysis.totals.sectors == 8
    window.set_include_dirs(())  # the open pattern cannot do without: it stays as it was
    wait_check(window)
    assert window.include_dirs == () and store.value(SETTING) in ([], None, "")
    assert MISSING in status(window)
    assert window.document.pattern.include_dirs == (lib,)


@pytest.mark.parametrize("stored", [True, False])
def test_the_app_reads_them_from_the_start(tmp_path, store, qapp, stored):
    """The pattern named on the command line: with the stored folder, or --include-dir."""
    path, lib = project(tmp_path)
    argv = [str(path), "--screenshot", str(tmp_path / "s.png")]
    assert app.main(argv) == 2
    MEMO.clear()
    if stored:
        store.setValue(SETTING, [lib])
        store.sync()
    else:
        argv += ["--include-dir", lib]
    assert app.main(argv) == 0 and (tmp_path / "s.png").exists()


def test_a_bare_cu_reads_its_includes_inside_its_roots(tmp_path):
    path, lib = project(tmp_path)
    cu = path.parent / "k.cu"
    assert [k.name for k in global_functions(cu, (lib,))] == ["k"]
    (path.parent / "idx.h").write_text("#define STEP 1\n")
    assert [k.name for k in global_functions(cu)] == ["k"]
