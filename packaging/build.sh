#!/usr/bin/env bash
# Build the one-folder desktop bundle from a fresh clone:
#   bash packaging/build.sh
# -> dist/sectorviz/sectorviz (the app; the folder is self-contained),
#    dist/sectorviz-<version>-linux-<arch>.tar.gz (that folder, packed),
#    dist/sectorviz-<version>-py3-none-any.whl and dist/sectorviz-<version>.tar.gz (the wheel
#    and the sdist, `python -m build`) and dist/SHA256SUMS (the tarball's, wheel's and sdist's
#    sums, for `sha256sum -c`). Prints the bundle's size against its 250 MiB target, and the
#    size of the bundle it replaced.
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

mib() { du -sm "$1" | cut -f1; }
target_mib=250  # issue 34: the bundle's folder at most this size
before=""
[ -d "dist/$name" ] && before=$(mib "dist/$name")

"$venv/bin/python" -m PyInstaller --noconfirm --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/sectorviz.spec

tarball="$name-$version-linux-$(uname -m).tar.gz"
tar -C dist -czf "dist/$tarball" "$name"
wheel="$name-$version-py3-none-any.whl"
sdist="$name-$version.tar.gz"
rm -f "dist/$wheel" "dist/$sdist"
"$venv/bin/python" -m build --outdir dist . >/dev/null
(cd dist && sha256sum "$tarball" "$wheel" "$sdist" > SHA256SUMS)

size=$(mib "dist/$name")
verdict="within"
[ "$size" -le "$target_mib" ] || verdict="OVER"
echo "bundle:  dist/$name/$name, $size MiB${before:+ (was $before MiB)}, target <= $target_mib MiB: $verdict"
echo "tarball: dist/$tarball, $(mib "dist/$tarball") MiB"
echo "wheel:   dist/$wheel"
echo "sdist:   dist/$sdist"
echo "sums:    dist/SHA256SUMS"
