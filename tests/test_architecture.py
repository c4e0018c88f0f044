"""Layering rules: ui > export > scene > model, the CUDA front end beside the model (chosen
by sectorviz.engine.readings), cli on top; the import-linter contracts in pyproject.toml."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_hold(monkeypatch, capsys):
    from importlinter.cli import lint_imports
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True,
                        no_logo=True)
    out = capsys.readouterr().out
    assert code == 0, out
    contracts = (ROOT / "pyproject.toml").read_text().count("[[tool.importlinter.contracts]]")
    assert f"{contracts} kept, 0 broken" in out


@pytest.mark.parametrize("contract, source", [
    ("model-alone", "from ..engine.compiled import compile  # noqa"),
    ("layers", "from ..export import sheets  # noqa"),
    ("cli-on-top", None),
])
def test_a_broken_contract_is_caught(tmp_path, contract, source):
    """The contracts are not vacuous: a copy of the package with one bad import fails."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "sectorviz", copy / "sectorviz",
                    ignore=shutil.ignore_patterns("__pycache__"))
    if source is None:
        bad = copy / "sectorviz" / "exits.py"
        bad.write_text(bad.read_text() + "\nfrom . import cli  # noqa\n")
    else:
        bad = copy / "sectorviz" / "model" / "bad_import.py"
        bad.write_text(source + "\n")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    proc = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import "
                           "lint_imports; sys.exit(lint_imports(config_filename=sys.argv[1], "
                           "no_cache=True, no_logo=True, limit_to_contracts=(sys.argv[2],)))",
                           str(ROOT / "pyproject.toml"), contract],
                          cwd=copy, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "BROKEN" in proc.stdout.upper()


def test_model_and_scene_never_import_qt():
    code = ("import sys; import sectorviz.model, sectorviz.scene.diagrams, "
            "sectorviz.scene.sheet, sectorviz.model.detail, sectorviz.cli; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'PyQt5', 'PyQt6', 'pyqtgraph', 'shiboken6')]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True).stdout
    assert out.strip() == "[]"


def test_model_sources_import_no_qt_or_engine():
    for path in (ROOT / "sectorviz" / "model").rglob("*.py"):
        text = path.read_text()
        assert "PySide6" not in text and "pyqtgraph" not in text, path
        assert "from ..engine" not in text and "from sectorviz.engine" not in text, path
