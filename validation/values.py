"""Write a pattern's readable array as its host program reads it: the element values the
pattern gives (values.kind uniform, permutation, expr, ...), in the given numpy dtype,
little-endian, one after the other.

Usage: python validation/values.py PATTERN ARRAY DTYPE OUT.bin
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import sectorviz.engine.readings  # noqa: E402,F401 - registers the CUDA front end
from sectorviz.model import load_pattern  # noqa: E402
from sectorviz.model.frontend import kernel_for  # noqa: E402


def write_values(pattern: Path, array: str, dtype: str, out: Path) -> int:
    """The values of `array` in `pattern` -> `out` as `dtype`; returns how many."""
    values = kernel_for(load_pattern(pattern)).values[array].whole()
    typed = values.astype(np.dtype(dtype).newbyteorder("<"))
    if not np.array_equal(typed, values):
        raise SystemExit(f"{pattern.name}: {array}'s values do not fit in {dtype}")
    out.write_bytes(typed.tobytes())
    return len(typed)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    count = write_values(Path(sys.argv[1]), sys.argv[2], sys.argv[3], Path(sys.argv[4]))
    print(f"{sys.argv[4]}: {count:,} values of {sys.argv[2]}")
