"""The one thing pyproject.toml cannot say: resources/ (examples, icons, the .desktop file)
ships inside the package as sectorviz/resources, where sectorviz.paths finds it in a wheel
install. The checkout keeps the one copy at the top (resources/), mapped by package_dir; the
packages are the ones `find_namespace_packages` finds (what `[tool.setuptools.packages.find]`
found), plus sectorviz.resources and its folders (data only; listed so that setuptools does
not warn that they are importable and left out)."""

from setuptools import find_namespace_packages, setup

resources = ["sectorviz.resources"] + [
    f"sectorviz.resources.{name}" for name in find_namespace_packages("resources")]

setup(
    packages=find_namespace_packages(include=["sectorviz*"]) + resources,
    package_dir={"sectorviz.resources": "resources"},
)
