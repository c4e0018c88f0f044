#!/usr/bin/env bash
# Build the one-folder desktop bundle from a fresh clone:
#   bash packaging/build.sh
# -> dist/sectorviz/sectorviz (the app; the folder is self-contained) and
#    dist/sectorviz-<version>-linux-<arch>.tar.gz (that folder, packed).
# The build gets its own virtual environment (build/venv, or $SECTORVIZ_BUILD_VENV) with the
# pinned app, CUDA front end and PyInstaller (pip install -e ".[bundle,cuda]"), so the bundle
# holds exactly the pinned dependencies and nothing from a development environment.
# PYTHON picks the interpreter (3.11 or newer; default python3).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
venv=${SECTORVIZ_BUILD_VENV:-$root/build/venv}
py=${PYTHON:-python3}

if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --upgrade pip
fi
"$venv/bin/python" -m pip install -q -e ".[bundle,cuda]"

read -r name version < <("$venv/bin/python" -c '
import tomllib
p = tomllib.load(open("pyproject.toml", "rb"))["project"]
print(p["name"], p["version"])')

"$venv/bin/python" -m PyInstaller --noconfirm --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/sectorviz.spec

tarball="dist/$name-$version-linux-$(uname -m).tar.gz"
tar -C dist -czf "$tarball" "$name"
echo "bundle:  dist/$name/$name"
echo "tarball: $tarball"
