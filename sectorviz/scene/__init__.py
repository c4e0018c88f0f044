"""Scenes: what every picture and sheet shows, computed once without Qt (numpy only).

model (Pattern -> Listing, Analysis, WarpDetail, SharedWarpDetail; gathered for a view by
sectorviz.gather) -> scene -> printers (export/: SVG, PDF, PNG, TikZ, text, CSV, Markdown,
LaTeX; ui/: the window's grid, overview and sheet). A scene is a pure function of those
values and a view spec: it resolves no kernel, runs nothing and reads no file.

grid: the lane-to-sector layout of one warp execution and its per-warp values; lanes and
overview: the grid, warp and kernel-overview diagrams as shapes (shapes.py) in a theme
(palette.py); sheet: the accounting sheet as rows; diagrams: (listing, DiagramSpec,
values) -> Scene.
"""
