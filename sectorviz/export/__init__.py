"""Exports: printers of the scenes (sectorviz.scene). Diagrams as SVG (svg.py), PNG and PDF
rasterized from that SVG by Qt (raster.py), TikZ (tikz.py); the accounting sheet as text, CSV,
Markdown and LaTeX (sheets.py). formats maps a file suffix to bytes; command is
`sectorviz export`; escape makes user text safe for each format.
"""
