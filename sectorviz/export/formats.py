"""File suffix -> file bytes, shared by the command line and the export dialog.

Diagrams: .svg (text), .png (scale 1 to 4), .pdf (one page per diagram), .tex (TikZ).
Sheets: .csv, .md, .tex (booktabs). Qt is imported only for .png and .pdf.
"""

from __future__ import annotations

from ..model import Pattern, analyze
from .diagrams import DiagramSpec, diagram_scene
from .sheets import sheet_csv, sheet_latex, sheet_markdown
from .svg import scene_svg
from .tikz import scene_tikz

DIAGRAM_SUFFIXES = (".svg", ".pdf", ".png", ".tex")
SHEET_SUFFIXES = (".csv", ".md", ".tex")
MULTI_PAGE_SUFFIXES = (".pdf",)


def diagram_svg(pattern: Pattern, spec: DiagramSpec, transparent: bool = False) -> str:
    """The SVG text of one diagram (what the dialog previews and every format draws)."""
    return scene_svg(diagram_scene(pattern, spec), transparent)


def diagram_bytes(pattern: Pattern, specs: list[DiagramSpec], suffix: str, scale: float = 2,
                  transparent: bool = False) -> bytes:
    """Diagrams -> the bytes of one file; several specs only for a multi-page suffix."""
    if len(specs) > 1 and suffix not in MULTI_PAGE_SUFFIXES:
        raise ValueError(f"{suffix} holds one diagram, not {len(specs)}")
    scenes = [diagram_scene(pattern, s) for s in specs]
    if suffix == ".tex":
        return scene_tikz(scenes[0], transparent).encode()
    svgs = [scene_svg(s, transparent) for s in scenes]
    if suffix == ".svg":
        return svgs[0].encode()
    from .raster import pdf_bytes, png_bytes  # Qt only when rasterizing
    if suffix == ".png":
        return png_bytes(svgs[0], scale, transparent)
    if suffix == ".pdf":
        return pdf_bytes(svgs, scenes[0].title)
    raise ValueError(f"no diagram format for {suffix!r}; one of {', '.join(DIAGRAM_SUFFIXES)}")


def sheet_bytes(pattern: Pattern, suffix: str) -> bytes:
    """The accounting sheet as .csv, .md or .tex (booktabs)."""
    writers = {".csv": sheet_csv, ".md": sheet_markdown, ".tex": sheet_latex}
    if suffix not in writers:
        raise ValueError(f"no sheet format for {suffix!r}; one of {', '.join(SHEET_SUFFIXES)}")
    return writers[suffix](analyze(pattern)).encode()
