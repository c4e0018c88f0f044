#!/usr/bin/env bash
# One entry point from a fresh clone.
#   bash bootstrap.sh run [ARGS]   set up .venv, then launch the app (default example)
#   bash bootstrap.sh test [ARGS]  set up .venv, then run every test
#   bash bootstrap.sh check        set up .venv, then the static checks: import contracts,
#                                  ruff, mypy (CI runs them before the tests)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
venv="$here/.venv"
py=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
stamp="$venv/.sectorviz-installed"
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "bootstrap: installing sectorviz and what it needs into .venv (numpy, PySide6, pyqtgraph," \
         "tree-sitter, NVIDIA's NVRTC and header wheels, Dask, the test tools, and Triton and" \
         "numba-cuda for kernels written in Python; several minutes the first time, about" \
         "2.3 GB)" >&2
    "$venv/bin/python" -m pip install -q --upgrade pip
    # numba (the `fast` extra: the cache model's compiled engine, tested beside numpy) where
    # its wheels install; elsewhere the model runs on numpy and numba's tests skip. Dask (the
    # `cluster` extra: --scheduler, and its tests on a local cluster) in both. Triton and
    # numba-cuda (the `triton` and `numba` extras: kernels written in Python, and their
    # tests) where their wheels install; elsewhere those tests skip
    "$venv/bin/python" -m pip install -q -e ".[test,cuda,fast,cluster,triton,numba]" ||
        { echo "bootstrap: triton or numba-cuda did not install; Python kernels are refused" \
               "and their tests skip" >&2
          "$venv/bin/python" -m pip install -q -e ".[test,cuda,fast,cluster]"; } ||
        { echo "bootstrap: numba did not install; the cache model runs on numpy" >&2
          "$venv/bin/python" -m pip install -q -e ".[test,cuda,cluster]"; }
    echo "$want" > "$stamp"
    echo "bootstrap: installed" >&2
fi
cmd=${1:-run}
shift || true
case "$cmd" in
    run)  exec "$venv/bin/sectorviz" "$@" ;;
    test) exec "$venv/bin/python" -m pytest "$@" ;;
    check) "$venv/bin/lint-imports" && "$venv/bin/ruff" check . && exec "$venv/bin/mypy" ;;
    *)    echo "usage: bash bootstrap.sh run|test|check [ARGS]" >&2; exit 2 ;;
esac
