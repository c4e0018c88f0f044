#!/usr/bin/env bash
# Regenerate docs/images/gallery/: every export diagram kind in every theme, drawn by
# `sectorviz export` exactly as users get them (PNG at 2x for slides, plus SVG, PDF and TikZ
# samples). Runs headless. Usage: docs/make_gallery.sh [python]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${1:-.venv/bin/python}
OUT=docs/images/gallery
EX=resources/examples
sv_export() { "$PY" -m sectorviz export "$@"; }

for theme in light dark print; do
  sv_export $EX/struct12-crossing.sectorviz.json -o $OUT/grid-crossing-$theme.png --theme $theme
  sv_export $EX/gather-distinct.sectorviz.json -o $OUT/warp-gather-$theme.png --kind warp \
    --theme $theme
  sv_export $OUT/odd-pitch.sectorviz.json -o $OUT/overview-odd-pitch-$theme.png --kind overview \
    --warp 13 --theme $theme
done
sv_export $EX/partial-warp.sectorviz.json -o $OUT/grid-partial-warp31.png --warp 31
sv_export $EX/row-sum-loop.sectorviz.json -o $OUT/grid-row-sum-gaps.png --instruction 'load a[r][k]'
sv_export $OUT/odd-pitch.sectorviz.json -o $OUT/grid-odd-pitch-warp13.png --warp 13 \
  --instruction 'load a[r][c+1]'
sv_export $EX/struct12-crossing.sectorviz.json -o $OUT/grid-crossing.svg
sv_export $EX/struct12-crossing.sectorviz.json -o $OUT/grid-crossing.tex
sv_export $EX/partial-warp.sectorviz.json -o $OUT/warps-28-32.pdf --kind warp --warps 28:32
sv_export $EX/gather-distinct.sectorviz.json -o $OUT/sheet-gather.md
sv_export $EX/transpose-naive.sectorviz.json --compare $EX/transpose-tiled.sectorviz.json \
  -o $OUT/compare-transpose.png
sv_export $EX/gather-distinct.sectorviz.json --compare $EX/vector-add.sectorviz.json \
  -o $OUT/compare-gather-warp-dark.png --kind warp --theme dark
sv_export $EX/aos-cuda.sectorviz.json --compare $EX/soa-cuda.sectorviz.json \
  -o $OUT/compare-aos-soa-stacked.png --stack
sv_export $EX/transpose-naive.sectorviz.json --compare $EX/transpose-tiled.sectorviz.json \
  -o $OUT/compare-transpose.md
sv_export $EX/transpose-naive.sectorviz.json --compare $EX/transpose-tiled.sectorviz.json \
  -o $OUT/compare-transpose-explain.png --explain
sv_export $EX/partial-warp.sectorviz.json -o $OUT/histogram-partial-warp.png --kind histogram \
  --instruction 'store y[i]'
sv_export $EX/shared-tile-column.sectorviz.json -o $OUT/banks-tile-column-32way.png --kind banks \
  --instruction 'load tile[tx][ty]' --explain
sv_export $EX/shared-tile-column.sectorviz.json -o $OUT/banks-tile-column-32way.svg --kind banks \
  --instruction 'load tile[tx][ty]'
echo "gallery written to $OUT"
