"""The `sectorviz report --json` document of a pattern's analysis (JSON is an output format,
written here like CSV and SVG): the one every command that prints reports (report, compare,
sweep, batch, check) and the app's sweep dock use; and the `compare --json` document."""

from __future__ import annotations

from ..gather.explain import explanations, shared_explanations
from ..model import Analysis, Pattern, warp_detail
from ..model.budget import Budget
from ..model.compiler_changes import compiler_changes
from ..model.detail import warp_json
from ..model.frontend import counted_reading, kernel_for, reading_of
from ..scene.compare import Comparison, Pair
from ..scene.sheet import worst_instruction


def report_json(pattern: Pattern, analysis: Analysis, warp: int | None,
                budget: Budget | None = None) -> dict:
    """The `report --json` document: the analysis, the "worst" instruction (global or shared,
    scene.sheet.worst_instruction; null when all are at their ideal), an "explanation" per
    instruction (about `warp`, or warp 0), a CUDA kernel's "engine" ("compiled", "source") and
    "compiler" ("nvcc 13.0 for sm_90 at -O3", "... at -G" as written; null for patterns of
    accesses), "level" (what the compiled engine counted: "sass" or "ptx", "ptx" for a kernel
    holding wmma even where SASS was asked; null otherwise),
    "compiler_changes" (what the compiler changed against the source as written, each also
    said in its instructions' explanations; null unless the compiled engine reads the kernel;
    with "compiler_changes_note" when they could not be computed) and, with a `warp`, its
    per-lane detail under "warp"."""
    doc = analysis.to_json()
    reading = reading_of(pattern)
    doc["engine"] = reading and reading.engine
    doc["compiler"] = reading and reading.compiler
    doc["level"] = reading and counted_reading(reading, kernel_for(pattern)).level
    worst = worst_instruction(analysis)
    doc["worst"] = None if worst is None else worst.to_json()
    detail = warp_detail(pattern, warp or 0, budget)
    changes = compiler_changes(pattern, analysis)
    doc["compiler_changes"] = changes and [c.to_json() for c in changes.changes]
    if changes is not None and changes.note:
        doc["compiler_changes_note"] = changes.note
    for k, (ins, words) in enumerate(zip(doc["instructions"], explanations(pattern, detail))):
        said = changes.words_for(k) if changes is not None else ""
        ins["explanation"] = f"{words} {said}" if said else words
    for ins, words in zip(doc["shared"], shared_explanations(pattern, warp or 0)):
        ins["explanation"] = words
    if warp is not None:
        doc["warp"] = warp_json(pattern, detail)
    return doc


def comparison_json(c: Comparison, reports: tuple[dict, dict], only: Pair | None = None) -> dict:
    """The `compare --json` document: the two reports, the warp, the global and shared pairs,
    the totals."""
    return {"a": reports[0], "b": reports[1], "warp": c.warp,
            "instructions": [c.pair_json(p) for p in c.pairs if only is None or p == only],
            "shared": [c.shared_pair_json(p) for p in c.shared_pairs
                       if only is None or p == only],
            "totals": c.totals_json()}
