"""The front-end tests' PTX cache: a fresh folder per test, and the as-written reading left
at its default (the interpreter) unless a test sets SECTORVIZ_AS_WRITTEN."""

import pytest

from sectorviz import frontends


@pytest.fixture(autouse=True)
def ptx_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(tmp_path / "ptx"))
    monkeypatch.delenv(frontends.AS_WRITTEN_VAR, raising=False)
