"""File suffix -> file bytes, shared by the command line and the export dialog.

Diagrams (scenes from sectorviz.scene): .svg (text), .png (scale 1 to 4), .pdf (one page per
diagram), .tex (TikZ). Sheets (sectorviz.scene.sheet): .csv, .md, .tex (booktabs). Qt is
imported only for .png and .pdf.
"""

from __future__ import annotations

from typing import Sequence

from ..model import Pattern, analyze
from ..scene.diagrams import DiagramSpec, diagram_scene
from ..scene.sheet import Sheet, accounting_sheet
from ..scene.shapes import Scene
from .escape import plain_text
from .sheets import sheet_csv, sheet_latex, sheet_markdown
from .svg import scene_svg
from .tikz import scene_tikz

DIAGRAM_SUFFIXES = (".svg", ".pdf", ".png", ".tex")
SHEET_SUFFIXES = (".csv", ".md", ".tex")
MULTI_PAGE_SUFFIXES = (".pdf",)


def diagram_svg(pattern: Pattern, spec: DiagramSpec, transparent: bool = False) -> str:
    """The SVG text of one diagram (what the dialog previews and every format draws)."""
    return scene_svg(diagram_scene(pattern, spec), transparent)


def diagram_bytes(pattern: Pattern, specs: Sequence[DiagramSpec], suffix: str,
                  scale: float = 2, transparent: bool = False) -> bytes:
    """Diagrams -> the bytes of one file; several specs only for a multi-page suffix, whose
    pages are built one at a time (never all scenes at once)."""
    if len(specs) > 1 and suffix not in MULTI_PAGE_SUFFIXES:
        raise ValueError(f"{suffix} holds one diagram, not {len(specs)}")
    if suffix not in DIAGRAM_SUFFIXES:
        raise ValueError(f"no diagram format for {suffix!r}; one of "
                         f"{', '.join(DIAGRAM_SUFFIXES)}")
    if suffix == ".pdf":
        from .raster import pdf_bytes  # Qt only when rasterizing
        return pdf_bytes(lambda: (diagram_svg(pattern, s, transparent) for s in specs),
                         plain_text(diagram_scene(pattern, specs[0]).title))
    return scene_bytes(diagram_scene(pattern, specs[0]), suffix, scale, transparent)


def scene_bytes(scene: Scene, suffix: str, scale: float = 2, transparent: bool = False) -> bytes:
    """One scene -> the bytes of a .svg, .png, .tex (TikZ) or one-page .pdf file."""
    if suffix == ".tex":
        return scene_tikz(scene, transparent).encode()
    svg = scene_svg(scene, transparent)
    if suffix == ".svg":
        return svg.encode()
    if suffix == ".pdf":
        from .raster import pdf_bytes  # Qt only when rasterizing
        return pdf_bytes(lambda: [svg], plain_text(scene.title))
    from .raster import png_bytes  # Qt only when rasterizing
    return png_bytes(svg, scale, transparent)


def sheet_bytes(pattern: Pattern, suffix: str, warp: int = 0, instruction: int = 0,
                run: int = 0) -> bytes:
    """The accounting sheet (steps 3 and 4 about `warp`) as .csv, .md or .tex (booktabs)."""
    return any_sheet_bytes(accounting_sheet(pattern, analyze(pattern), warp, instruction, run),
                           suffix)


def any_sheet_bytes(sheet: Sheet, suffix: str) -> bytes:
    """A sheet (the accounting or the comparison sheet) as .csv, .md or .tex (booktabs)."""
    writers = {".csv": sheet_csv, ".md": sheet_markdown, ".tex": sheet_latex}
    if suffix not in writers:
        raise ValueError(f"no sheet format for {suffix!r}; one of {', '.join(SHEET_SUFFIXES)}")
    return writers[suffix](sheet).encode()
