"""The tasks a sweep and a batch hand to the pool, and the one-line result of each.

A sweep point is the pattern's document with some `params` entries replaced (patterns are
immutable: each point is a new Pattern built from the edited document); its result is
{"report": what `sectorviz report --json` prints for it} or {"error": "the one line"}. A
batch task is a file; its result is {"file": path, "report": ...} or {"file": ..., "error"}.
Each task runs under its own work budget, so one point past the limit fails alone.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..export.report_json import report_json
from ..model import Pattern, PatternError, analyze, load_pattern, pattern_from_dict
from ..model.assume import assuming
from ..model.budget import Budget
from ..model.errors import internal_error
from ..model.pattern import suggest


@dataclass(frozen=True)
class PointTask:
    """One combination: the pattern document with those params, its folder, the budget."""

    doc: dict
    base_dir: str
    work: int | None  # the work budget in units (None: the default)


@dataclass(frozen=True)
class FileTask:
    path: str
    work: int | None


def combinations(ranges: list[tuple[str, tuple[int, ...]]]) -> list[dict[str, int]]:
    """[(name, values), ...] -> every combination {name: value}, the first name slowest."""
    names = [name for name, _ in ranges]
    return [dict(zip(names, combo)) for combo in itertools.product(*(v for _, v in ranges))]


def with_params(doc: dict, values: dict[str, int]) -> dict:
    """The pattern document with `values` replacing its `params` entries; PatternError
    (place '--param NAME') for a name the pattern has no param of."""
    params = doc.get("params", {})
    for name in values:
        if name not in params:
            known = ", ".join(params) or "none"
            raise PatternError(f"--param {name}", f"the pattern has no param {name!r}"
                                                  f"{suggest(name, params)} (its params: {known})")
    return {**doc, "params": {**params, **values}}


def point_report(task: PointTask) -> dict:
    """{"report": the point's `report --json` document} or {"error": one line}."""
    return _report(lambda: pattern_from_dict(task.doc, task.base_dir), task.work)


def file_report(task: FileTask) -> dict:
    """{"file": path, "report": its `report --json` document} or {"file", "error"}."""
    return {"file": task.path, **_report(lambda: load_pattern(Path(task.path)), task.work)}


def _report(build: Callable[[], Pattern], work: int | None) -> dict:
    """{"report": ...} for the pattern build() makes, run under a budget of `work` units
    (with the values its `assume_values` key assumes, named under "assumed_values" as
    `report --json` names them), or {"error": the one line} when it cannot be built or
    analysed."""
    budget = Budget(work) if work else Budget()
    try:
        pattern = build()
        pattern, analysis, assumed = assuming(pattern, pattern.assume_values,
                                              lambda p: analyze(p, budget=budget))
        doc = report_json(pattern, analysis, None, budget)
        return {"report": {**doc, "assumed_values": assumed} if assumed else doc}
    except PatternError as err:
        return {"error": str(err)}
    except Exception as err:  # noqa: BLE001 - a bug in one task never stops the others
        return {"error": internal_error(err)}
