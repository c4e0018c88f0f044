#!/usr/bin/env bash
# Regenerate docs/images/app-*.png: the real main window, drawn headless with `--screenshot`
# (default layout; settings in a throw-away folder so yours never leak in). The offscreen
# screen is 1778 x 1089, so the window opens at its default 1600 x 980; app-projector-*.png
# are taken on a 1280 x 720 screen (the window opens at 90% of it).
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
QPA=$PROJECTOR shot app-projector-transpose-naive.png $EX/transpose-naive.sectorviz.json \
  --instruction 1
# The comparison window (File > Compare With...): tiled transpose beside the naive one.
QT_QPA_PLATFORM=$DESKTOP "$PY" - "$OUT/app-compare-transpose.png" <<'EOF'
import sys, time
from PySide6.QtWidgets import QApplication
import sectorviz.ui  # noqa: F401  (pins pyqtgraph to PySide6)
from sectorviz.model import load_pattern
from sectorviz.paths import examples_dir
from sectorviz.ui.main_window import MainWindow
app, ex = QApplication([]), examples_dir()
window = MainWindow(load_pattern(ex / "transpose-naive.sectorviz.json"), None, restore=False)
compare = window.compare_with(ex / "transpose-tiled.sectorviz.json")
window.set_instruction(1)
start = time.time()
while "→" not in compare.status.text() and time.time() - start < 60:
    app.processEvents()
    time.sleep(0.05)
compare.resize(1600, 900)
for _ in range(20):
    app.processEvents()
    time.sleep(0.05)
compare.grab().save(sys.argv[1])
print(sys.argv[1])
EOF
