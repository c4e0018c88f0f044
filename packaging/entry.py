"""The bundle's executable: the `sectorviz` console script (sectorviz.cli:main)."""

import sys

from sectorviz.cli import main

sys.exit(main())
