"""Issue 22, item 6: a settings file never stops the app: each stored value is checked and a
bad one falls back to its default, with a note in the status bar; a bad QT_QPA_PLATFORM is
one line, not Qt's abort."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtWidgets import QLabel

from sectorviz.model.budget import DEFAULT_WORK, default_work, set_default_work
from sectorviz.ui import files
from sectorviz.ui.files import recent_files
from sectorviz.ui.stored import StoredSettings
from sectorviz.ui.theme import THEMES

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store():
    s = files.settings()
    s.clear()
    yield s
    s.clear()
    s.sync()
    set_default_work(DEFAULT_WORK)


@pytest.mark.parametrize("key, value, note", [
    ("theme", "neon", "settings: theme 'neon' is not one of light, dark; using light"),
    ("speed", "abc", "settings: speed 'abc' is not a whole number in [1, 60]; using 4"),
    ("speed", "9" * 20, "settings: speed '99999999999999999999' is not a whole number in "
                        "[1, 60]; using 4"),
    ("speed", "-3", "settings: speed '-3' is not a whole number in [1, 60]; using 4"),
    ("work_budget", "lots", "settings: work_budget 'lots' is not a whole number in [1, "),
    ("geometry", "abc", "settings: geometry is not a saved window layout; using the default"),
])
def test_a_bad_stored_value_falls_back_with_a_note(open_window, store, key, value, note):
    store.setValue(key, value)
    store.sync()
    window = open_window()
    assert note in window.findChild(QLabel, "statusMessage").text()
    assert window._theme_name() == "light" and window.stepper.speed.value() == 4
    assert default_work() == DEFAULT_WORK


def test_good_stored_values_are_used(open_window, store):
    store.setValue("theme", "dark")
    store.setValue("speed", 12)
    store.setValue("work_budget", 2**30)
    window = open_window()
    assert (window._theme_name(), window.stepper.speed.value(), default_work()) == (
        "dark", 12, 2**30)
    assert "settings:" not in window.findChild(QLabel, "statusMessage").text()


@pytest.mark.parametrize("value", [5, "", ["a", 3, ""]])
def test_recent_files_of_any_shape(store, value):
    store.setValue("recent", value)
    assert recent_files(store) == ([Path("a")] if isinstance(value, list) else [])


@pytest.mark.parametrize("argv", [["--screenshot", "s.png"], ["export", "EXAMPLE", "-o", "x.png"]])
def test_a_bad_qt_platform_is_one_line(tmp_path, argv):
    example = str(ROOT / "resources" / "examples" / "vector-add.sectorviz.json")
    argv = [example if a == "EXAMPLE" else str(tmp_path / a) if a.endswith(".png") else a
            for a in argv]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "garbage"}
    run = subprocess.run([sys.executable, "-m", "sectorviz", *argv], env=env, timeout=120,
                         capture_output=True, text=True, check=False)
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith("sectorviz: QT_QPA_PLATFORM=garbage names no Qt platform")


STORED = st.one_of(st.text(max_size=30), st.integers(-2**63, 2**63 - 1),
                   st.integers(-2**70, 2**70).map(str), st.booleans(),
                   st.floats(allow_nan=True), st.lists(st.text(max_size=5), max_size=3))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=STORED)
def test_any_stored_value_reads_as_a_usable_one(store, value):
    """Fuzzed (issue 22, item 7): whatever a settings file holds, each reader returns a
    value the app can use, and each note is one line."""
    for key in ("theme", "speed", "work_budget", "include_dirs"):
        store.setValue(key, value)
    stored = StoredSettings(store)
    theme = stored.choice("theme", THEMES, "light")
    speed = stored.integer("speed", 1, 60, 4)
    work = stored.integer("work_budget", 1, 2**62, DEFAULT_WORK)
    folders = stored.folders("include_dirs")
    assert theme in THEMES and 1 <= speed <= 60 and 1 <= work <= 2**62
    assert all(os.path.isabs(f) and os.path.isdir(f) for f in folders)
    assert all(note.startswith("settings: ") and "\n" not in note for note in stored.notes)
