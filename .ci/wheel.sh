#!/usr/bin/env bash
# CI: the wheel installs and runs on its own.
#   bash .ci/wheel.sh [WORK_DIR]      (default build/wheel-check)
# Builds the sdist and, from it, the wheel (`python -m build`, with the development
# environment's Python, or $PYTHON), installs the wheel into a fresh virtual environment and,
# from a temporary folder outside the checkout, runs that environment's `sectorviz report` on
# the installed package's own default example (sectorviz/resources, which setup.py maps from
# resources/) and `sectorviz --install-desktop` into a temporary XDG_DATA_HOME. Fails unless
# the example lies inside the installed package, the report exits 0 and counts its sectors,
# and the desktop entry and icons are written.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
work=${1:-build/wheel-check}
py=${PYTHON:-$root/.venv/bin/python}

rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
"$py" -m build --outdir "$work/dist" . >"$work/build.log" 2>&1 ||
    { tail -20 "$work/build.log" >&2; echo "python -m build failed (log: $work/build.log)" >&2; exit 1; }
wheels=("$work"/dist/sectorviz-*.whl)
[ -f "${wheels[0]}" ] || { echo "python -m build made no wheel in $work/dist" >&2; exit 1; }

python3 -m venv "$work/venv"
"$work/venv/bin/python" -m pip install -q "${wheels[0]}"

outside=$(mktemp -d)
trap 'rm -rf "$outside"' EXIT
cd "$outside"
site=$("$work/venv/bin/python" -c 'import sectorviz, os; print(os.path.dirname(sectorviz.__file__))')
case "$site" in
    "$work/venv/"*) ;;
    *) echo "the fresh environment imports sectorviz from $site, not its own install" >&2; exit 1;;
esac
example=$("$work/venv/bin/python" -c 'from sectorviz.paths import default_example; print(default_example())')
[ "$example" = "$site/resources/examples/vector-add.sectorviz.json" ] && [ -f "$example" ] ||
    { echo "the installed wheel's default example is $example, not inside $site/resources" >&2; exit 1; }
"$work/venv/bin/sectorviz" report "$example" > "$work/report.txt" ||
    { echo "the installed wheel's sectorviz report failed on $example" >&2; exit 1; }
grep -q "sector demand 12 MiB" "$work/report.txt" ||
    { echo "the installed wheel's report of $example lacks 'sector demand 12 MiB'" >&2; exit 1; }

XDG_DATA_HOME="$outside/data" "$work/venv/bin/sectorviz" --install-desktop > "$work/desktop.txt" ||
    { echo "the installed wheel's sectorviz --install-desktop failed" >&2; cat "$work/desktop.txt" >&2; exit 1; }
for file in applications/sectorviz.desktop icons/hicolor/scalable/apps/sectorviz.svg \
            icons/hicolor/48x48/apps/sectorviz.png; do
    [ -s "$outside/data/$file" ] ||
        { echo "the installed wheel's --install-desktop wrote no $file" >&2; exit 1; }
done
grep -qx "Exec=$work/venv/bin/sectorviz %f" "$outside/data/applications/sectorviz.desktop" ||
    { echo "the installed desktop entry does not run $work/venv/bin/sectorviz:" >&2
      grep '^Exec' "$outside/data/applications/sectorviz.desktop" >&2; exit 1; }
echo "wheel ok: $(basename "${wheels[0]}") installs in a fresh environment, reports its own" \
    "example and installs the desktop entry"
