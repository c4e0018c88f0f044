"""The `sectorviz report --json` document of a pattern's analysis, the one every command
that prints reports (report, compare, sweep, batch) and the app's sweep dock use."""

from __future__ import annotations

from ..model import Analysis, Pattern, warp_detail
from ..model.budget import Budget
from ..model.detail import warp_json
from .explain import explanations, shared_explanations


def report_json(pattern: Pattern, analysis: Analysis, warp: int | None,
                budget: Budget | None = None) -> dict:
    """The `report --json` document: the analysis, an "explanation" per instruction (about
    `warp`, or warp 0) and, with a `warp`, its per-lane detail under "warp"."""
    doc = analysis.to_json()
    detail = warp_detail(pattern, warp or 0, budget)
    for ins, words in zip(doc["instructions"], explanations(pattern, detail)):
        ins["explanation"] = words
    for ins, words in zip(doc["shared"], shared_explanations(pattern, warp or 0)):
        ins["explanation"] = words
    if warp is not None:
        doc["warp"] = warp_json(pattern, detail)
    return doc
