#!/usr/bin/env bash
# Regenerate docs/images/app-*.png: the real main window, drawn headless with `--screenshot`
# (default window size and layout; settings in a throw-away folder so yours never leak in).
# Usage: docs/make_screenshots.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-.venv/bin/python}
OUT=docs/images
EX=resources/examples
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
XDG_CONFIG_HOME=$(mktemp -d)
export XDG_CONFIG_HOME
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT
shot() { out=$1; shift; "$PY" -m sectorviz "$@" --screenshot "$OUT/$out"; echo "$OUT/$out"; }

shot app-transpose-naive.png $EX/transpose-naive.sectorviz.json --warp 0 --instruction 1
shot app-transpose-naive-dark.png $EX/transpose-naive.sectorviz.json --warp 0 --instruction 1 \
  --theme dark
shot app-struct12-crossing.png $EX/struct12-crossing.sectorviz.json
shot app-gather-repeated.png $EX/gather-repeated.sectorviz.json --instruction 'load data[index[i]]'
shot app-partial-warp.png $EX/partial-warp.sectorviz.json --warp 31
shot app-row-sum-loop.png $EX/row-sum-loop.sectorviz.json --warp 2 --instruction 'load a[r][k]'
shot app-transpose-naive-cuda.png $EX/transpose-naive-cuda.sectorviz.json --instruction 1
