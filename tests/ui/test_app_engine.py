"""`sectorviz FILE --engine compiled|source`: the engine that reads the session's kernels."""

import pytest

from sectorviz.command import app as launch
from sectorviz.engine.compiled.compiler import find_compiler
from sectorviz.engine.readings import ENGINE_VAR
from sectorviz.model.frontend import reading_of
from sectorviz.paths import examples_dir
from sectorviz.ui import app

VECTOR_ADD = str(examples_dir() / "vector-add-cuda.sectorviz.json")


@pytest.mark.parametrize("engine", [
    "source",
    pytest.param("compiled", marks=pytest.mark.skipif(find_compiler() is None,
                                                      reason="no CUDA compiler here")),
])
def test_the_engine_flag_reads_the_kernel(tmp_path, qapp, monkeypatch, engine):
    monkeypatch.setenv(ENGINE_VAR, "compiled" if engine == "source" else "source")
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(tmp_path / "ptx"))
    seen = []
    monkeypatch.setattr(app, "grab_when_drawn",
                        lambda w, a, real=app.grab_when_drawn: (seen.append(w), real(w, a))[1])
    assert launch.main([VECTOR_ADD, "--engine", engine, "--screenshot",
                     str(tmp_path / "shot.png")]) == 0
    (window,) = seen
    assert reading_of(window.document.pattern).engine == engine
    window.close()


def test_an_unknown_engine_is_one_line(capsys):
    assert launch.main([VECTOR_ADD, "--engine", "fast"]) == 2
    assert "invalid choice: 'fast'" in capsys.readouterr().err
