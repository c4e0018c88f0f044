#!/usr/bin/env bash
# Regenerate docs/images/app-*.png: the real main window, drawn headless with `--screenshot`
# (default layout; settings in a throw-away folder so yours never leak in). The offscreen
# screen is 1778 x 1089, so the window opens at its default 1600 x 980; app-projector-*.png
# are taken on a 1280 x 720 screen (the window fills it), app-1080p-*.png on 1920 x 1080.
# Usage: docs/make_screenshots.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-.venv/bin/python}
OUT=docs/images
EX=resources/examples
XDG_CONFIG_HOME=$(mktemp -d)
export XDG_CONFIG_HOME
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT
screen() {  # an offscreen screen of $1 x $2 pixels
  printf '{"screens": [{"name": "s", "x": 0, "y": 0, "width": %d, "height": %d, "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}' \
    "$1" "$2" > "$XDG_CONFIG_HOME/screen-$1x$2.json"
  echo "offscreen:configfile=$XDG_CONFIG_HOME/screen-$1x$2.json"
}
DESKTOP=$(screen 1778 1089)
PROJECTOR=$(screen 1280 720)
shot() { out=$1; shift; QT_QPA_PLATFORM=${QPA:-$DESKTOP} "$PY" -m sectorviz "$@" \
  --screenshot "$OUT/$out"; echo "$OUT/$out"; }

shot app-transpose-naive.png $EX/transpose-naive.sectorviz.json --warp 0 --instruction 1
shot app-transpose-naive-dark.png $EX/transpose-naive.sectorviz.json --warp 0 --instruction 1 \
  --theme dark
shot app-struct12-crossing.png $EX/struct12-crossing.sectorviz.json
shot app-gather-repeated.png $EX/gather-repeated.sectorviz.json --instruction 'load data[index[i]]'
shot app-partial-warp.png $EX/partial-warp.sectorviz.json --warp 31
shot app-transpose-tiled-banks.png $EX/transpose-tiled.sectorviz.json --instruction 'load tile[tx][ty]'
shot app-row-sum-loop.png $EX/row-sum-loop.sectorviz.json --warp 2 --instruction 'load a[r][k]'
shot app-transpose-naive-cuda.png $EX/transpose-naive-cuda.sectorviz.json --instruction 1
shot app-float4-load.png $EX/float4-load.sectorviz.json
shot app-stride-32B.png $EX/stride-32B.sectorviz.json
# A projector (1280 x 720: the window fills it, the overview and histogram are tabs beside the
# sheet) and a 1920 x 1080 screen: the window, presentation mode, the compare window (beside A
# at 1920 x 1080: the picture is B's window), the banks view and the dark theme.
for size in 1280x720 1920x1080; do
  QPA=$(screen "${size%x*}" "${size#*x}")
  tag=$([ "$size" = 1280x720 ] && echo projector || echo 1080p)
  QPA=$QPA shot "app-$tag-transpose-naive.png" $EX/transpose-naive.sectorviz.json --instruction 1
  QPA=$QPA shot "app-$tag-present-transpose.png" $EX/transpose-naive.sectorviz.json \
    --instruction 1 --present
  QPA=$QPA shot "app-$tag-compare-transpose.png" $EX/transpose-naive.sectorviz.json \
    --compare $EX/transpose-tiled.sectorviz.json --instruction 1
  QPA=$QPA shot "app-$tag-banks-tile-column.png" $EX/shared-tile-column.sectorviz.json \
    --instruction 'load tile[tx][ty]'
  QPA=$QPA shot "app-$tag-dark-matmul.png" $EX/matmul-tiled-cuda.sectorviz.json --theme dark
done
# The comparison window at the desktop size (File > Compare With...): tiled transpose beside
# the naive one.
shot app-compare-transpose.png $EX/transpose-naive.sectorviz.json \
  --compare $EX/transpose-tiled.sectorviz.json --instruction 1
