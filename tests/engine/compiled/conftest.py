"""The compiled front end's tests: each test gets its own, empty PTX cache folder."""

import pytest


@pytest.fixture(autouse=True)
def ptx_cache(tmp_path_factory, monkeypatch):
    """SECTORVIZ_CACHE_DIR -> a fresh folder for each test (returned)."""
    folder = tmp_path_factory.mktemp("ptx-cache")
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(folder))
    return folder
