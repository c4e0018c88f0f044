"""The `sectorviz` console entry point (pyproject's [project.scripts], the bundle's
packaging/entry.py, `python -m sectorviz`): the command line of sectorviz.command."""

from __future__ import annotations

import sys

from .command.main import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
