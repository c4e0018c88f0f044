#!/usr/bin/env bash
# Build each CUDA example (resources/examples/*.cu, each with its own host main) with nvcc,
# profile every launch with Nsight Compute on the metrics `sectorviz ncu-metrics` prints, and
# write the raw CSVs to validation/out/NAME.ncu.csv; then run validation/compare.py.
# Needs a GPU, nvcc and ncu on PATH (ncu may need root or the profiling permission).
# Usage: validation/run.sh [ARCH]   (ARCH for nvcc -arch, default native)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
arch="${1:-native}"
python="${PYTHON:-python3}"
out="$here/out"
mkdir -p "$out"
metrics="$(cd "$root" && PYTHONPATH="$root" "$python" -m sectorviz ncu-metrics)"
for cu in "$root"/resources/examples/*.cu; do
    name="$(basename "$cu" .cu)"
    grep -q "int main" "$cu" || { echo "skip $name: no host main"; continue; }
    echo "== $name"
    nvcc -O3 -arch="$arch" -o "$out/$name" "$cu"
    ncu --csv --page raw --cache-control all --clock-control none --metrics "$metrics" \
        "$out/$name" > "$out/$name.ncu.csv"
done
PYTHONPATH="$root" "$python" "$here/compare.py" "$out"
