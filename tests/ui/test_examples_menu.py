"""The Examples menu grouped by lesson: the Qt-free grouping is complete (every bundled
example once, a new one under Other) and the menu has a submenu per lesson, each item named
by its example's "name"."""

import json

from PySide6.QtWidgets import QMenu

from sectorviz.paths import example_paths
from sectorviz.ui.lessons import CUDA, LESSONS, OTHER, example_title, lesson_groups

SUFFIX = ".sectorviz.json"


def stems():
    return [p.name.removesuffix(SUFFIX) for p in example_paths()]


def test_every_example_in_exactly_one_lesson():
    groups = lesson_groups(stems())
    placed = [s for _, group in groups for s in group]
    assert sorted(placed) == sorted(stems())
    assert OTHER not in dict(groups)  # every bundled example has a lesson
    assert all(s.endswith("-cuda") for s in dict(groups)[CUDA])
    assert [lesson for lesson, _ in groups] == [*LESSONS, CUDA]


def test_listed_stems_exist():
    """A lesson listing a stem no file has is a renamed example the table missed."""
    assert {s for group in LESSONS.values() for s in group} <= set(stems())


def test_unlisted_example_goes_to_other():
    groups = dict(lesson_groups(["aligned", "brand-new", "new-cuda"]))
    assert groups == {"Coalescing": ["aligned"], CUDA: ["new-cuda"], OTHER: ["brand-new"]}


def test_example_title(tmp_path):
    named = tmp_path / "x.sectorviz.json"
    named.write_text(json.dumps({"name": "Nice name"}))
    broken = tmp_path / "broken.sectorviz.json"
    broken.write_text("{")
    unnamed = tmp_path / "anon.sectorviz.json"
    unnamed.write_text("[]")
    assert [example_title(p) for p in (named, broken, unnamed)] == ["Nice name", "broken",
                                                                    "anon"]


def test_examples_menu_structure(open_window):
    window = open_window()
    menu = window.findChild(QMenu, "examplesMenu")
    lessons = [lesson for lesson, _ in lesson_groups(stems())]
    assert [a.text() for a in menu.actions()] == lessons
    subs = [menu.findChild(QMenu, f"lesson:{lesson}") for lesson in lessons]
    assert [sub.title() for sub in subs] == lessons
    by_file = {a.objectName(): (sub.title(), a.text()) for sub in subs for a in sub.actions()}
    assert set(by_file) == {f"example:{p.name}" for p in example_paths()}
    assert by_file["example:aligned.sectorviz.json"] == ("Coalescing", "Aligned words 4i")
    assert by_file["example:vector-add-cuda.sectorviz.json"] == (CUDA, "Vector add (CUDA)")
    assert by_file["example:transpose-tiled.sectorviz.json"][0] == "Shared memory and banks"
    first = subs[0].actions()[0]
    assert first.shortcut().toString() == "Ctrl+Alt+1"
