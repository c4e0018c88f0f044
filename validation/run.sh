#!/usr/bin/env bash
# The validation kit: every run of validation/manifest.tsv built with nvcc, profiled by
# Nsight Compute on exactly the metrics `sectorviz ncu-metrics` prints, and compared with
# the prediction by `sectorviz report --measured` (validation/compare.py).
#
#   validation/run.sh [--dry-run] [--arch ARCH] [--out DIR] [--machine NAME] [--order ORDER]
#
# Needs a GPU, nvcc and ncu on PATH (ncu may need root or the profiling permission). The CSVs
# go to DIR/PATTERN.ncu.csv (default validation/out). A second profile of the kernel's first
# launch with the SourceCounters section (DIR/PATTERN.ncu-rep) gives Nsight Compute's source
# page, one line per SASS instruction, in DIR/PATTERN.source.csv (validation/source_page.py
# says which columns and where NVIDIA documents them). --dry-run builds and profiles nothing:
# it prints the nvcc and ncu commands, writes the value files, and compares the CSVs DIR
# already holds (so the comparison path runs on any machine). ARCH is nvcc's -arch (default
# native); NAME and ORDER the cache model's (default H200-SXM, waves). PYTHON picks the
# interpreter (default python3) that runs sectorviz from this checkout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
python="${PYTHON:-python3}"
dry=0 arch=native out="$here/out" machine=H200-SXM order=waves
while [ $# -gt 0 ]; do
    case "$1" in
        --dry-run) dry=1 ;;
        --arch) arch="$2"; shift ;;
        --out) out="$2"; shift ;;
        --machine) machine="$2"; shift ;;
        --order) order="$2"; shift ;;
        *) echo "usage: validation/run.sh [--dry-run] [--arch ARCH] [--out DIR] [--machine NAME] [--order ORDER]" >&2; exit 2 ;;
    esac
    shift
done
mkdir -p "$out"
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
metrics="$("$python" -m sectorviz ncu-metrics)"
step() {  # run a command, or print it under --dry-run
    if [ "$dry" = 1 ]; then printf 'would run:'; printf ' %q' "$@"; printf '\n'; else "$@"; fi
}
while IFS=$'\t' read -r pattern host kernel values args; do
    case "$pattern" in ''|'#'*) continue ;; esac
    echo "== $pattern ($host)"
    argv=()
    [ -n "${args:-}" ] && read -r -a argv <<< "$args"
    if [ "$values" != "-" ]; then
        bin="$out/$pattern.${values%%:*}.bin"
        "$python" "$here/values.py" "$root/resources/examples/$pattern.sectorviz.json" \
            "${values%%:*}" "${values##*:}" "$bin"
        argv+=("$bin")
    fi
    step nvcc -O3 -arch="$arch" -o "$out/$pattern" "$here/$host"
    kernel_function="$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["kernel"]["function"])' \
        "$root/resources/examples/$pattern.sectorviz.json")"
    step ncu --section SourceCounters --cache-control all --clock-control none \
        --kernel-name-base function --kernel-name "$kernel_function" --launch-count 1 \
        --force-overwrite -o "$out/$pattern" \
        "$out/$pattern" ${argv[@]+"${argv[@]}"}
    if [ "$dry" = 1 ]; then
        step ncu --csv --page raw --cache-control all --clock-control none \
            --metrics "$metrics" "$out/$pattern" ${argv[@]+"${argv[@]}"}
        step ncu --import "$out/$pattern.ncu-rep" --csv --page source --print-source sass
    else
        ncu --csv --page raw --cache-control all --clock-control none --metrics "$metrics" \
            "$out/$pattern" ${argv[@]+"${argv[@]}"} > "$out/$pattern.ncu.csv"
        ncu --import "$out/$pattern.ncu-rep" --csv --page source --print-source sass \
            > "$out/$pattern.source.csv"
    fi
done < "$here/manifest.tsv"
"$python" "$here/compare.py" "$out" --machine "$machine" --order "$order"
