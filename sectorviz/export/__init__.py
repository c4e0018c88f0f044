"""Exports: diagrams (SVG written from the model's GridLayout, PNG and PDF rasterized from that
SVG by Qt, TikZ) and the accounting sheet (CSV, Markdown, LaTeX).

scene (shapes) <- diagrams (pattern, DiagramSpec) -> svg / tikz -> raster; formats maps a file
suffix to bytes; command is `sectorviz export`.
"""
