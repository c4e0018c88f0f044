"""The bundle's executable: the `sectorviz` console script (sectorviz.cli:main)."""

import multiprocessing
import sys

from sectorviz.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # a sweep's spawned workers start from this executable
    sys.exit(main())
