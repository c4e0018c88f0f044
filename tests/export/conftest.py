"""Shared fixtures for the export tests: headless Qt, example and inline patterns."""

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"

import pytest  # noqa: E402

from sectorviz.model import load_pattern, pattern_from_dict  # noqa: E402
from sectorviz.paths import resources_dir  # noqa: E402


def example(name: str):
    return load_pattern(resources_dir() / "examples" / f"{name}.sectorviz.json")


def one_load(index: str, block: int = 32, dtype: str = "float32", name: str = "inline"):
    """A one-block pattern with a single load x[index]."""
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": name,
        "launch": {"grid": [1], "block": [block]},
        "arrays": {"x": {"dtype": dtype, "length": 4096}},
        "accesses": [{"name": "load x", "op": "load", "array": "x", "index": index}],
    }, None)


@pytest.fixture
def crossing():
    return example("struct12-crossing")


@pytest.fixture
def broadcast():
    return one_load("0", name="broadcast")


@pytest.fixture
def partial():
    return example("partial-warp")


@pytest.fixture
def gather():
    return example("gather-distinct")
