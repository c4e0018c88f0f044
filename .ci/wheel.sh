#!/usr/bin/env bash
# CI: the wheel installs and runs on its own.
#   bash .ci/wheel.sh [WORK_DIR]      (default build/wheel-check)
# Builds the sdist and, from it, the wheel (`python -m build`, with the development
# environment's Python, or $PYTHON), installs the wheel into a fresh virtual environment and
# runs that environment's `sectorviz report` on an example from outside the checkout. Fails
# unless the report exits 0 and counts the example's sectors.
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

example="$root/resources/examples/vector-add.sectorviz.json"
(cd "$work" && venv/bin/sectorviz report "$example") > "$work/report.txt" ||
    { echo "the installed wheel's sectorviz report failed on $example" >&2; exit 1; }
grep -q "sector demand 12 MiB" "$work/report.txt" ||
    { echo "the installed wheel's report of $example lacks 'sector demand 12 MiB'" >&2; exit 1; }
echo "wheel ok: $(basename "${wheels[0]}") installs in a fresh environment and reports $example"
