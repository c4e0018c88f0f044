"""Predicted against measured for every CUDA example: for each *-cuda.sectorviz.json pattern,
the CSV that validation/run.sh wrote for its .cu file, compared boundary by boundary.

Usage: python validation/compare.py OUT_FOLDER [--machine NAME] [--order ORDER]
Expected: the request side equals l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum
exactly (ratio 1.000); DRAM bytes between the perfect-reuse and no-reuse bounds. A pattern
whose host code fills its index arrays other than the pattern's `values` differs in the
gathers (compare the .cu's fill with the pattern before reading those rows).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import sectorviz.frontends  # noqa: E402,F401 - registers the CUDA front end
from sectorviz.commandline import with_machine  # noqa: E402
from sectorviz.model import PatternError, analyze, load_pattern  # noqa: E402
from sectorviz.model.frontend import kernel_for  # noqa: E402
from sectorviz.model.budget import Budget  # noqa: E402
from sectorviz.model.measured import (kernel_name, pick_launch, read_ncu_csv,  # noqa: E402
                                      side_by_side)
from sectorviz.paths import examples_dir  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder of NAME.ncu.csv files")
    parser.add_argument("--machine", default="H200-SXM", help="preset of the cache model")
    parser.add_argument("--order", default="waves", choices=["warp-serial", "waves"])
    args = parser.parse_args()
    flags = argparse.Namespace(machine=args.machine, l2_bytes=None, order=args.order)
    for path in sorted(examples_dir().glob("*-cuda.sectorviz.json")):
        pattern = with_machine(load_pattern(path), flags)
        csv = args.out / (Path(pattern.kernel["source"]).stem + ".ncu.csv")
        print(f"{path.name} ({csv.name})")
        if not csv.exists():
            print("  no CSV: not profiled")
            continue
        try:
            kernel = kernel_for(pattern)
            launch = pick_launch(read_ncu_csv(csv), kernel_name(pattern.kernel["function"]),
                                 0, kernel.grid, kernel.block)
            rows = side_by_side(analyze(pattern, budget=Budget(2**34)), launch)
        except PatternError as err:
            print(f"  {err}")
            continue
        for m in rows:
            ratio = "-" if m.ratio is None else f"{m.ratio:.3f}"
            print(f"  {m.boundary:40s} predicted {m.predicted_bytes:>14,} B  measured "
                  f"{m.measured_bytes:>16,.0f} B  ratio {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
