"""The command line, on top of every layer: one module per command, each its parser and its
run (report.py, export.py, compare.py, sweep.py, batch.py, check.py, the app launch app.py),
the shared flags (flags.py) and the dispatch by name (main.py, behind sectorviz.cli:main)."""
