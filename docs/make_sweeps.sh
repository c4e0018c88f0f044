#!/usr/bin/env bash
# Regenerate the example sweeps' charts in docs/images/ (the tiled transpose's tile padding,
# vector add's block size), drawn by `sectorviz sweep` exactly as users get them (PNG at
# 1920 x 1080, and SVG). Runs headless. Usage: docs/make_sweeps.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-.venv/bin/python}
OUT=docs/images
EX=resources/examples
for suffix in png svg; do
  "$PY" -m sectorviz sweep $EX/transpose-tiled.sectorviz.json --param pad=0:3 \
    --metric wavefronts -o $OUT/sweep-transpose-padding.$suffix --quiet
  "$PY" -m sectorviz sweep $EX/vector-add.sectorviz.json --param threads=32:1025:32 \
    -o $OUT/sweep-vector-add-block.$suffix --quiet
done
echo "sweep charts written to $OUT"
