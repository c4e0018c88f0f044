"""(pattern, analysis, selection) -> the accounting sheet (scene.sheet), with the selected
warp's details computed here (an error in them shown in the sheet's rows)."""

from __future__ import annotations

from ..model import Analysis, Pattern
from ..model.listing import listing_of
from ..model.one_warp import warp_details
from ..model.values import CompilerChanges, WarpDetails
from ..scene import sheet
from ..scene.sheet import Sheet


def accounting_sheet(pattern: Pattern, analysis: Analysis | None, warp: int = 0,
                     instruction: int = 0, run: int = 0, error: str | None = None,
                     changes: CompilerChanges | None = None,
                     details: WarpDetails | None = None) -> Sheet:
    """The sheet of `pattern` for `warp` (execution `run` of `instruction`) and the grid's
    `analysis` (None before the first result, or when it failed with `error`), with what the
    compiler changed against the source as written (`changes`); `details`: the warp's, when
    the caller has them (the app's worker computes them), else computed here."""
    return sheet.accounting_sheet(listing_of(pattern), analysis,
                                  details or warp_details(pattern, warp), instruction, run,
                                  error, changes)
