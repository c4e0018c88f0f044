"""`sectorviz export A --compare B -o OUT`: the comparison slide (scene.slide) as .svg .pdf .png
.tex, or the comparison sheet (scene.compare) as .csv .md, or .tex with --sheet."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable

from ..gather.compare import load_comparison, side_pair
from ..scene.compare import comparison_sheet
from ..scene.diagrams import DiagramSpec
from ..scene.slide import slide_scene
from .formats import any_sheet_bytes, scene_bytes


def comparison_file(args: argparse.Namespace, out: Path, suffix: str,
                    sheet: bool) -> tuple[Path, Callable[[], bytes]]:
    """(OUT, bytes maker) of the slide or, with `sheet`, the comparison sheet about
    args.warp; SideError names the file at fault."""
    keys = {"engine": args.engine, "arch": args.arch}
    c, _ = load_comparison(args.file, args.compare, args.warp, include_dirs=tuple(args.include_dir),
                        kernel_keys=(keys, keys))
    pair = side_pair(c, args.file, args.instruction)
    if sheet:
        return out, lambda: any_sheet_bytes(comparison_sheet(c, pair), suffix)
    spec = DiagramSpec(kind=args.kind, warp=args.warp, execution=args.execution,
                       theme=args.theme, legend=args.legend, caption=args.caption)
    scene = slide_scene(c, spec, args.stack, pair, args.explain)
    return out, lambda: scene_bytes(scene, suffix, args.scale, args.transparent)
