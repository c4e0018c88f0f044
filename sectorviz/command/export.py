"""`sectorviz export FILE -o OUT ...`: a diagram or the accounting sheet, format from OUT
(export/formats.py); with --compare B the comparison slide (scene.slide) or sheet.

OUT's suffix picks the format: .svg .pdf .png .tex draw a diagram, .csv .md write the sheet,
and --sheet sends .tex to the sheet (steps 3 and 4 about --warp). --warps A:B draws warps
A..B-1: pages of one PDF, or one file per warp named OUT-warpN.ext, made and written one at a
time. Bad arguments or a bad pattern: exit 2, one line on stderr.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator, Sequence, overload

from ..atomic import write_atomic
from ..exits import UsageError, fail
from ..export.formats import (
    DIAGRAM_SUFFIXES,
    MULTI_PAGE_SUFFIXES,
    SHEET_SUFFIXES,
    any_sheet_bytes,
    diagram_bytes,
    scene_bytes,
    sheet_bytes,
)
from ..export.latex_document import standalone_latex
from ..gather.compare import SideError, load_comparison, side_pair
from ..model import Pattern, PatternError, analyze, load_pattern
from ..model.assume import assuming, stated
from ..model.budget import work_budget
from ..model.errors import printable
from ..model.listing import listing_of
from ..scene.compare import comparison_sheet
from ..scene.diagrams import KINDS, DiagramSpec
from ..scene.palette import DEFAULT_THEME, THEMES
from ..scene.slide import slide_scene
from .flags import (
    OneLineParser,
    add_budget_flag,
    add_engine_flags,
    add_include_flag,
    add_machine_flags,
    add_standalone_flag,
    pattern_error_line,
    run_budget,
    standalone_problem,
    with_engine,
    with_machine,
)

DEFAULT_SCALE = 2.0


def export_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz export",
                      description="Write a diagram (.svg .pdf .png .tex) or the accounting "
                                  "sheet (.csv .md, or .tex with --sheet) of a pattern.")
    p.add_argument("file", help="a *.sectorviz.json pattern file")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="output file; its suffix picks the format")
    p.add_argument("--warp", type=int, default=0, metavar="N",
                   help="0-based warp in launch order (default 0)")
    p.add_argument("--warps", metavar="A:B",
                   help="warps A to B-1: pages of one PDF, or one file per warp")
    p.add_argument("--instruction", metavar="K",
                   help="0-based instruction index or its name (default 0; with --compare, "
                        "the instruction whose sectors change most)")
    p.add_argument("--execution", type=int, default=0, metavar="R",
                   help="0-based execution (loop iteration) of the instruction (default 0)")
    p.add_argument("--kind", choices=KINDS, default="grid",
                   help="grid: one instruction; warp: all instructions of the warp; "
                        "overview: the kernel strip; histogram: one instruction's requests "
                        "by sectors per request over all warps; banks: one shared-memory "
                        "instruction's lanes against its 32 banks, --instruction counting "
                        "the shared ones (default grid)")
    p.add_argument("--scale", type=float, default=DEFAULT_SCALE, metavar="S",
                   help=f"PNG pixels per diagram unit, 1 to 4 (default {DEFAULT_SCALE:g})")
    p.add_argument("--theme", choices=sorted(THEMES), default=DEFAULT_THEME,
                   help=f"colours (default {DEFAULT_THEME})")
    p.add_argument("--transparent", action="store_true", help="no background")
    p.add_argument("--no-legend", dest="legend", action="store_false", help="leave out the legend")
    p.add_argument("--no-caption", dest="caption", action="store_false",
                   help="leave out the caption")
    p.add_argument("--sheet", action="store_true", help="write the accounting sheet (.tex)")
    add_standalone_flag(p)
    p.add_argument("--compare", metavar="B",
                   help="compare with pattern B: the two grids under the headline ratio, "
                        "or the comparison sheet")
    p.add_argument("--stack", action="store_true", help="with --compare: B below A")
    p.add_argument("--explain", action="store_true",
                   help="say under the caption why the instruction (grid, banks; each one: "
                        "warp; with --compare, each side's) costs what it costs")
    add_budget_flag(p)
    add_machine_flags(p)
    add_include_flag(p)
    add_engine_flags(p)
    return p


MAX_EXPORTED_WARPS = 256  # diagrams one --warps A:B draws (pages or files)


def _warp_range(text: str) -> range:
    try:
        a, b = (int(x) for x in text.split(":"))
    except ValueError:
        raise UsageError(f"sectorviz export: --warps {text!r} is not A:B") from None
    if not 0 <= a < b:
        raise UsageError(f"sectorviz export: --warps {text!r} is not 0 <= A < B")
    if b - a > MAX_EXPORTED_WARPS:
        raise UsageError(f"sectorviz export: --warps {text} asks for {b - a:,} diagrams; at "
                         f"most {MAX_EXPORTED_WARPS:,} pages or files per export")
    return range(a, b)


def _assumed(pattern: Pattern) -> Pattern:
    """`pattern` with the values its `assume_values` key assumes (model.assume), each
    stated on stderr, as report states them before its sheet."""
    pattern, _, assumed = assuming(pattern, pattern.assume_values, analyze)
    for line in stated(assumed):
        print(printable(line), file=sys.stderr)
    return pattern


def _check(args: argparse.Namespace, suffix: str) -> None:
    """Argument errors that argparse cannot see, as UsageError."""
    if args.sheet and suffix not in SHEET_SUFFIXES:
        raise UsageError(f"sectorviz export: --sheet writes {', '.join(SHEET_SUFFIXES)}, "
                         f"not {suffix or 'a file without suffix'}")
    if suffix not in DIAGRAM_SUFFIXES + SHEET_SUFFIXES:
        raise UsageError(f"sectorviz export: cannot tell the format of {args.output!r}; use "
                         f"{', '.join(sorted(set(DIAGRAM_SUFFIXES + SHEET_SUFFIXES)))}")
    if not 1 <= args.scale <= 4:
        raise UsageError(f"sectorviz export: --scale {args.scale:g} outside [1, 4]")
    if args.compare is not None and (args.warps is not None
                                     or args.kind in ("overview", "histogram")):
        raise UsageError("sectorviz export: --compare draws one grid or warp diagram per side")
    if args.explain and args.compare is None and args.kind in ("overview", "histogram"):
        raise UsageError("sectorviz export: --explain explains grid, warp and banks diagrams, "
                         f"not {args.kind}")
    if args.warps is not None and args.kind in ("overview", "histogram"):
        raise UsageError("sectorviz export: --warps draws grid or warp diagrams, "
                         f"not {args.kind}")
    standalone_problem(args, "export", suffix)


def run_export(argv: list[str]) -> int:
    """Parse `argv` (after 'export'), write OUT, return the exit status (0, or 2 on bad input).
    Files are written one at a time, each through a temporary file and a rename."""
    try:
        args = export_parser().parse_args(argv)
        out = Path(args.output)
        suffix = out.suffix.lower()
        _check(args, suffix)
        warps = _warp_range(args.warps) if args.warps is not None else None
    except UsageError as err:
        return fail(str(err))
    try:
        with work_budget(run_budget(args)):
            sheet = suffix in (".csv", ".md") or args.sheet
            if args.compare is not None:
                files = iter([comparison_file(args, out, suffix, sheet)])
            elif sheet:
                pattern = _assumed(with_engine(with_machine(
                    load_pattern(args.file, tuple(args.include_dir)), args), args))
                files = iter([(out, lambda: sheet_bytes(pattern, suffix, args.warp))])
            else:
                files = _diagrams(_assumed(with_engine(load_pattern(
                    args.file, tuple(args.include_dir)), args)), args, out, suffix, warps)
            for path, data in files:
                write_atomic(path, standalone_latex(data().decode(), sheet).encode()
                             if args.standalone else data())
    except SideError as err:
        return fail(str(err))
    except PatternError as err:
        return fail(pattern_error_line(args.file, err))
    except OSError as err:
        return fail(f"{err.filename or out}: {err.strerror or err}")
    except ValueError as err:
        from ..export.raster import NoPlatform  # Qt only when rasterizing
        if isinstance(err, NoPlatform):
            return fail(f"sectorviz: {err}")
        raise
    return 0


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


def _diagrams(pattern: Pattern, args: argparse.Namespace, out: Path, suffix: str,
              warps: range | None) -> Iterator[tuple[Path, Callable[[], bytes]]]:
    """(path, bytes maker) of each file: one file per warp of `warps` (pages of one file for
    a multi-page suffix), else OUT alone."""
    spec = DiagramSpec(kind=args.kind, warp=args.warp,
                       instruction=0 if args.instruction is None else listing_of(
                           pattern).index(args.instruction,
                                          "shared" if args.kind == "banks" else "global"),
                       execution=args.execution, theme=args.theme, legend=args.legend,
                       caption=args.caption, explain=args.explain)

    def draw(specs: Sequence[DiagramSpec]) -> Callable[[], bytes]:
        return lambda: diagram_bytes(pattern, specs, suffix, args.scale, args.transparent)

    if warps is None:
        return iter([(out, draw([spec]))])
    total = listing_of(pattern).warps
    if warps.stop > total:
        raise PatternError("--warps", f"warps {warps.start}:{warps.stop} outside [0, {total})")
    if suffix in MULTI_PAGE_SUFFIXES:
        return iter([(out, draw(_WarpSpecs(spec, warps)))])
    return ((out.with_name(f"{out.stem}-warp{w}{out.suffix}"), draw([replace(spec, warp=w)]))
            for w in warps)


class _WarpSpecs(Sequence[DiagramSpec]):
    """`spec` for each warp of a range, made when asked for (not a list of them all)."""

    def __init__(self, spec: DiagramSpec, warps: range):
        self.spec, self.warps = spec, warps

    def __len__(self) -> int:
        return len(self.warps)

    @overload
    def __getitem__(self, i: int) -> DiagramSpec: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[DiagramSpec]: ...

    def __getitem__(self, i: int | slice) -> DiagramSpec | Sequence[DiagramSpec]:
        if isinstance(i, slice):
            raise TypeError("no slices")
        return replace(self.spec, warp=self.warps[i])
