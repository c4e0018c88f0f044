"""The sheet while the selected warp's details are being worked out, and after they stopped
with an error: its "this warp" rows say so, not "not run by this warp", and step 3 calls a
wait no error."""

from __future__ import annotations

from sectorviz.gather.sheet import accounting_sheet
from sectorviz.model import load_pattern
from sectorviz.model.values import WarpDetails
from sectorviz.paths import examples_dir
from sectorviz.scene.sheet import NOT_COUNTED, WORKING
from sectorviz.scene.words import NOT_RUN

TILE = examples_dir() / "shared-tile-column.sectorviz.json"  # global and shared instructions


def _this_warp(details: WarpDetails) -> tuple[list[str], list[str]]:
    """(step 3's values, the values of every "this warp" row of steps 4 and 6)."""
    sheet = accounting_sheet(load_pattern(TILE), None, details=details)
    steps = {s.number: s for s in sheet.steps}
    warp_rows = [r.value for n in (4, 6) for r in steps[n].rows if ", this warp" in r.label]
    return [r.value for r in steps[3].rows], warp_rows


def test_a_warp_being_worked_out_says_so_in_every_row():
    text = "warp 5: working out its lanes…"
    step3, rows = _this_warp(WarpDetails(5, text, text, pending=True))
    assert step3 == [WORKING] and rows and set(rows) == {WORKING}
    assert NOT_RUN not in rows


def test_a_warp_whose_details_failed_names_the_error_once():
    step3, rows = _this_warp(WarpDetails(5, "lane 3: out of bounds", "lane 3: out of bounds"))
    assert step3 == ["error"]
    # the shared step keeps its one error row; the global rows point to step 3
    assert NOT_COUNTED in rows and NOT_RUN not in rows
