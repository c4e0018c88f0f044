"""The front-end tests' PTX cache: a fresh folder per test."""

import pytest


@pytest.fixture(autouse=True)
def ptx_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(tmp_path / "ptx"))
