"""File suffix -> file bytes, shared by the command line and the export dialog.

Diagrams (scenes from sectorviz.scene): .svg (text), .png (scale 1 to 4), .pdf (one page per
diagram), .tex (TikZ). Sheets (sectorviz.scene.sheet): .csv, .md, .tex (booktabs). Qt is
imported only for .png and .pdf.

Every scene is checked before it is drawn (`check_drawable`): at most MAX_SIDE_PX pixels a
side and MAX_PIXELS in all (a PNG at its scale, other formats at one pixel per unit), at
most MAX_SHAPES shapes (the SVG's elements); a larger one is a PatternError saying its size.
"""

from __future__ import annotations

import math
from typing import Sequence

from ..gather.diagrams import diagram_scene
from ..gather.sheet import accounting_sheet
from ..model import Pattern, PatternError, analyze
from ..model.compiler_changes import compiler_changes
from ..scene.diagrams import DiagramSpec
from ..scene.shapes import Scene
from ..scene.sheet import Sheet
from .escape import plain_text
from .sheets import sheet_csv, sheet_latex, sheet_markdown
from .svg import scene_svg
from .tikz import scene_tikz

DIAGRAM_SUFFIXES = (".svg", ".pdf", ".png", ".tex")
SHEET_SUFFIXES = (".csv", ".md", ".tex")
MULTI_PAGE_SUFFIXES = (".pdf",)
MAX_SIDE_PX = 16_384
MAX_PIXELS = 2**28
MAX_SHAPES = 250_000


def size_problem(width: float, height: float, scale: float = 1) -> str | None:
    """Why a drawing of width x height units at `scale` pixels per unit is too large to
    draw (over MAX_SIDE_PX a side or MAX_PIXELS in all), or None."""
    w, h = math.ceil(width * scale), math.ceil(height * scale)
    if max(w, h) > MAX_SIDE_PX or w * h > MAX_PIXELS:
        return (f"it would be {w:,} x {h:,} px; at most {MAX_SIDE_PX:,} px a side and "
                f"{MAX_PIXELS:,} pixels are drawn (export the sheet, or a diagram of fewer or "
                "smaller elements)")
    return None


def check_drawable(scene: Scene, scale: float = 1) -> None:
    """PatternError ('diagram: ...') when `scene` drawn at `scale` pixels per unit would be
    too large (size_problem) or hold over MAX_SHAPES shapes; nothing is drawn."""
    problem = size_problem(scene.width, scene.height, scale)
    if problem is not None:
        raise PatternError("diagram", problem)
    if len(scene.shapes) > MAX_SHAPES:
        raise PatternError("diagram", f"it holds {len(scene.shapes):,} shapes; at most "
                                      f"{MAX_SHAPES:,} are drawn")


def checked_scene(pattern: Pattern, spec: DiagramSpec, scale: float = 1) -> Scene:
    """The diagram's scene, checked to be drawable at `scale` (check_drawable)."""
    scene = diagram_scene(pattern, spec)
    check_drawable(scene, scale)
    return scene


def diagram_svg(pattern: Pattern, spec: DiagramSpec, transparent: bool = False) -> str:
    """The SVG text of one diagram (what the dialog previews and every format draws)."""
    return scene_svg(checked_scene(pattern, spec), transparent)


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
    """One scene (checked to be drawable) -> the bytes of a .svg, .png, .tex (TikZ) or
    one-page .pdf file."""
    check_drawable(scene, scale if suffix == ".png" else 1)
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
    analysis = analyze(pattern)
    return any_sheet_bytes(accounting_sheet(pattern, analysis, warp, instruction, run,
                                            changes=compiler_changes(pattern, analysis)),
                           suffix)


def any_sheet_bytes(sheet: Sheet, suffix: str) -> bytes:
    """A sheet (the accounting or the comparison sheet) as .csv, .md or .tex (booktabs)."""
    writers = {".csv": sheet_csv, ".md": sheet_markdown, ".tex": sheet_latex}
    if suffix not in writers:
        raise ValueError(f"no sheet format for {suffix!r}; one of {', '.join(SHEET_SUFFIXES)}")
    return writers[suffix](sheet).encode()
