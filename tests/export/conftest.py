"""Shared fixtures for the export tests: headless Qt, example and inline patterns.
(Fixtures, not imports: the suite has more than one conftest module.)"""

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"

import pytest  # noqa: E402

from sectorviz.model import load_pattern, pattern_from_dict  # noqa: E402
from sectorviz.paths import resources_dir  # noqa: E402


def _example(name: str):
    return load_pattern(resources_dir() / "examples" / f"{name}.sectorviz.json")


def _one_load(index: str, block: int = 32, dtype: str = "float32", name: str = "inline"):
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": name,
        "launch": {"grid": [1], "block": [block]},
        "arrays": {"x": {"dtype": dtype, "length": 4096}},
        "accesses": [{"name": "load x", "op": "load", "array": "x", "index": index}],
    }, None)


@pytest.fixture
def example():
    """example(name) -> the pattern of resources/examples/<name>.sectorviz.json."""
    return _example


@pytest.fixture
def one_load():
    """one_load(index, block=32, dtype='float32', name='inline') -> a one-block pattern with
    a single load x[index]."""
    return _one_load


@pytest.fixture
def crossing():
    return _example("struct12-crossing")


@pytest.fixture
def broadcast():
    return _one_load("0", name="broadcast")


@pytest.fixture
def partial():
    return _example("partial-warp")


@pytest.fixture
def gather():
    return _example("gather-distinct")


@pytest.fixture
def drawn(qtbot):
    """drawn(dialog): until the export dialog's preview of its controls has been drawn (on a
    thread: ExportDialog.refresh)."""
    return lambda dialog: qtbot.waitUntil(lambda: not dialog.drawing, timeout=60_000)
