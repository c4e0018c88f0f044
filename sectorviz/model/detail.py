"""One warp's per-lane detail as plain JSON-ready data (for `report --warp` and tooltips)."""

from __future__ import annotations

from typing import Any

from .errors import PatternError
from .frontend import kernel_for
from .pattern import Pattern
from .sectors import WARP_SIZE
from .values import WarpDetail

MAX_LISTED_EXECUTIONS = 1024  # executions (of 32 lane records each) one warp's listing holds


def lane_records(pattern: Pattern, detail: WarpDetail, k: int, run: int = 0
                 ) -> list[dict[str, Any]]:
    """Lanes of execution `run` of instruction k -> one dict per lane: lane, thread, block,
    active, element (or row and col), address (bytes) and sectors (absolute indices)."""
    execution = detail.executions[k][run]
    records = []
    for lane in range(WARP_SIZE):
        rec = {
            "lane": lane,
            "thread": [int(t[lane]) for t in detail.thread],
            "block": list(detail.block),
            "active": bool(execution.active[lane]),
        }
        if execution.active[lane]:
            if execution.row is not None:
                assert execution.col is not None  # row and col come together
                rec["row"], rec["col"] = int(execution.row[lane]), int(execution.col[lane])
            rec["element"] = int(execution.element[lane])
            rec["address"] = int(execution.address[lane])
            rec["sectors"] = list(range(int(execution.first_sector[lane]),
                                        int(execution.last_sector[lane]) + 1))
        records.append(rec)
    return records


def warp_json(pattern: Pattern, detail: WarpDetail) -> dict[str, Any]:
    """The `warp` object of `report --json --warp N`; PatternError, before anything is
    listed, when the warp runs over MAX_LISTED_EXECUTIONS executions in all."""
    runs = sum(len(r) for r in detail.executions)
    if runs > MAX_LISTED_EXECUTIONS:
        raise PatternError("--warp", f"warp {detail.warp} runs {runs:,} executions of "
                                     f"accesses; its per-lane detail lists at most "
                                     f"{MAX_LISTED_EXECUTIONS:,} ({MAX_LISTED_EXECUTIONS * 32:,}"
                                     " lanes); the report without --warp gives the sums")
    kernel = kernel_for(pattern)
    instructions = []
    for k, executions in enumerate(detail.executions):
        instructions.append({
            "name": kernel.instructions[k].name,
            "executions": [
                {"iteration": {v: int(x[0]) if x.ndim else int(x)
                               for v, x in run.iteration.items()},
                 "sectors": run.sectors, "useful_bytes": run.useful_bytes,
                 "lanes": lane_records(pattern, detail, k, j)}
                for j, run in enumerate(executions)],
        })
    return {"warp": detail.warp, "block": list(detail.block), "instructions": instructions}
