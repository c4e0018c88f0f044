"""resources/ (examples, icons, the .desktop file) has one copy, at the top of the checkout, and
sectorviz.paths finds it in each layout: the checkout (or an editable install), a wheel install
(setup.py maps it to sectorviz/resources) and the bundle (_MEIPASS). .ci/wheel.sh builds and
installs the wheel itself; these are the fast checks."""

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

import sectorviz.paths as paths

ROOT = Path(__file__).resolve().parents[2]


def test_checkout_has_one_copy_and_paths_finds_it():
    assert not (ROOT / "sectorviz" / "resources").exists()
    assert paths.resources_dir() == ROOT / "resources"
    assert paths.default_example().is_file()
    assert paths.example_paths()


def test_bundle_looks_under_meipass(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert paths.resources_dir() == tmp_path / "resources"


def test_wheel_install_looks_inside_the_package(tmp_path):
    package = tmp_path / "site-packages" / "sectorviz"
    (package / "resources" / "examples").mkdir(parents=True)
    shutil.copy(paths.__file__, package / "paths.py")
    spec = importlib.util.spec_from_file_location("installed_paths", package / "paths.py")
    installed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(installed)
    assert installed.resources_dir() == package / "resources"
    assert installed.default_example() == (package / "resources" / "examples"
                                           / "vector-add.sectorviz.json")


def test_setup_maps_resources_into_the_package(monkeypatch):
    tomllib = pytest.importorskip("tomllib", reason="pyproject.toml is read with tomllib (3.11)")
    import setuptools

    kept = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: kept.update(kwargs))
    monkeypatch.chdir(ROOT)
    path = ROOT / "setup.py"
    exec(compile(path.read_text(), str(path), "exec"), {"__name__": "__main__"})
    assert kept["package_dir"] == {"sectorviz.resources": "resources"}
    packages = set(kept["packages"])
    code = {".".join(p.relative_to(ROOT).parts) for p in (ROOT / "sectorviz").rglob("*")
            if p.is_dir() and p.name != "__pycache__"} | {"sectorviz"}
    assert code <= packages
    folders = {"sectorviz." + ".".join(p.relative_to(ROOT).parts)
               for p in (ROOT / "resources").rglob("*") if p.is_dir()}
    assert folders | {"sectorviz.resources"} <= packages
    assert "sectorviz.resources.examples" in packages
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert data["package-data"]["sectorviz.resources"] == ["**/*"]
    assert "packages" not in data  # setup.py lists them



def test_wheel_check_reports_the_installed_example_from_outside():
    text = (ROOT / ".ci" / "wheel.sh").read_text()
    assert "$root/resources" not in text  # the installed package's example, not the checkout's
    assert "default_example" in text and "mktemp -d" in text
    assert "--install-desktop" in text and "XDG_DATA_HOME=" in text
