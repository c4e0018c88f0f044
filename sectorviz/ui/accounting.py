"""The accounting sheet's five steps as rows that explain themselves (no Qt).

(WarpView, Analysis) -> Steps: 1 memory operations, 2 logical bytes, 3 address expansion of
the current warp, 4 sectors per request (this warp, then over the grid), 5 traffic at named
boundaries. Bytes are bytes, sectors are `sector_bytes`-byte sectors; Markdown and CSV copies
hold the same cells.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import numpy as np

from ..model import Analysis
from ..model.analysis import LaneExecution
from ..model.sheet import CONSTANT_NOTE, constant_summary, op_words, readable_bytes
from .document import WarpView

LINE_BYTES = 128  # an L1 cache line: 4 sectors


@dataclass(frozen=True)
class Row:
    label: str
    value: str
    note: str = ""
    instruction: int | None = None  # the instruction the row is about, if one


@dataclass(frozen=True)
class Step:
    number: int
    title: str
    rows: tuple[Row, ...]


def sectors_text(n: int) -> str:
    """12 -> '12 sectors', 1 -> '1 sector'."""
    return f"{n} sector" + ("" if n == 1 else "s")


def lane_spacing(execution: LaneExecution) -> str:
    """Byte distance between adjacent active lanes -> 'lanes 4096 B apart', 'broadcast', ..."""
    active, address = np.asarray(execution.active), np.asarray(execution.address, dtype=np.int64)
    pairs = active[:-1] & active[1:]
    gaps = np.unique(np.diff(address)[pairs])
    if not active.any():
        return "no active lane"
    if len(gaps) == 0:
        return "no two adjacent active lanes"
    if len(gaps) == 1:
        gap = int(gaps[0])
        return "all lanes at one address (broadcast)" if gap == 0 else f"lanes {gap} B apart"
    return f"irregular: adjacent lanes {int(gaps.min())} to {int(gaps.max())} B apart"


def _alignment(execution: LaneExecution, address0: int, sector_bytes: int) -> str:
    first = int(np.asarray(execution.address)[np.asarray(execution.active)][0])
    return (f"first lane at 0x{first:x} (array + {first - address0} B): "
            f"{first % sector_bytes} B into its sector, {first % LINE_BYTES} B into its "
            f"{LINE_BYTES} B line")


def _ideal(useful: int, sector_bytes: int) -> int:
    return -(-useful // sector_bytes)


def _pending(analysis: Analysis | None, error: str | None) -> Row | None:
    if analysis is not None:
        return None
    return Row("grid", "failed" if error else "computing…", error or "runs in the background")


def _so_far(analysis: Analysis | None) -> str:
    """'' for a finished analysis; ' so far (done of all warps)' while a run goes on."""
    if analysis is None or analysis.warps_done is None:
        return ""
    return f" so far ({analysis.warps_done:,} of {analysis.warps:,} warps)"


def accounting_steps(view: WarpView, analysis: Analysis | None,
                     error: str | None = None) -> tuple[Step, ...]:
    """The five steps for the current warp (`view`) and the whole grid (`analysis`)."""
    kernel, sb = view.kernel, view.pattern.sector_bytes
    stats = analysis.instructions if analysis is not None else (None,) * len(kernel.instructions)
    waiting = _pending(analysis, error)
    so_far = _so_far(analysis)
    ops, logical, expansion, sectors = [], [], [], []
    sel = view.selection
    for k, (ins, st) in enumerate(zip(kernel.instructions, stats)):
        runs = view.detail.executions[k] if view.detail else ()
        arr = kernel.arrays[ins.first_array]
        loops = f"; {len(runs)} executions in this warp" if len(runs) > 1 else ""
        ops.append(Row(ins.name, f"{op_words(ins.op)}, {ins.width} B per lane",
                       f"array {ins.array} ({arr.spec.dtype})" + loops, k))
        if st is not None:
            logical.append(Row(ins.name, readable_bytes(st.logical_bytes),
                               f"{st.active_lanes:,} active lanes × {ins.width} B", k))
        run = sel.run if k == sel.instruction else 0
        ex = runs[run] if runs else None
        if ex is None:
            expansion.append(Row(ins.name, "not run by this warp", "", k))
            sectors.append(Row(f"{ins.name}, this warp", "not run by this warp", "", k))
        else:
            spacing = lane_spacing(ex)
            expansion.append(Row(ins.name, spacing, _alignment(ex, arr.address0, sb), k))
            which = f", execution {run + 1} of {len(runs)}" if len(runs) > 1 else ""
            all_runs = (f"{sum(r.sectors for r in runs)} sectors over its {len(runs)} executions"
                        if len(runs) > 1 else "")
            sectors.append(Row(f"{ins.name}, this warp{which}",
                               f"{spacing}: {sectors_text(ex.sectors)}, ideal {_ideal(ex.useful_bytes, sb)}",
                               all_runs, k))
        if st is not None:
            sectors.append(Row(
                f"{ins.name}, grid{so_far}",
                f"typical {st.mode}, min {st.min}, max {st.max} sectors per request",
                f"{st.sectors:,} sectors ({readable_bytes(st.sectors * sb)}) in {st.requests:,} "
                f"requests; ideal {st.ideal_sectors:,}, excess {st.excess_sectors:,}; "
                f"useful {100 * st.useful_fraction:.1f}%", k))
    if analysis is not None:
        t = analysis.totals
        logical.append(Row(f"total{so_far}", readable_bytes(t.logical_bytes),
                           f"{t.logical_bytes:,} B requested by {analysis.threads:,} threads"))
        sectors.append(Row(f"total, grid{so_far}", f"{t.sectors:,} sectors = "
                                          f"{readable_bytes(t.sectors * sb)}",
                           f"ideal {t.ideal_sectors:,}, excess {t.excess_sectors:,}, useful "
                           f"{100 * t.useful_fraction:.1f}%, {t.sectors_per_request:.2f} "
                           f"sectors per request"))
        bounds = [Row(f"{b.name}{so_far}", f"{readable_bytes(b.bytes)} ({b.sectors:,} sectors)",
                      f"assumes {b.assumption}; profiler metric {b.metric}")
                  for b in analysis.boundaries]
        bounds += [Row(f"{c.instruction} (constant cache)", constant_summary(c), CONSTANT_NOTE)
                   for c in analysis.constant]
    else:
        logical.append(waiting)
        sectors.append(waiting)
        bounds = [waiting]
    block = "" if view.detail is None else f", block {tuple(view.detail.block)}"
    warp_rows = expansion if view.detail is not None else [Row("warp", "error", view.error or "")]
    return (
        Step(1, "Memory operations", tuple(ops)),
        Step(2, "Logical bytes", tuple(logical)),
        Step(3, f"Address expansion (warp {sel.warp}{block})", tuple(warp_rows)),
        Step(4, f"Sectors per request ({sb} B sectors)", tuple(sectors)),
        Step(5, "Traffic at named boundaries", tuple(bounds)),
    )


def to_markdown(steps: tuple[Step, ...]) -> str:
    """Steps -> one Markdown table per step under a '### n. title' heading."""
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    out = []
    for step in steps:
        out += [f"### {step.number}. {step.title}", "", "| item | value | note |",
                "| --- | --- | --- |"]
        out += [f"| {cell(r.label)} | {cell(r.value)} | {cell(r.note)} |" for r in step.rows]
        out.append("")
    return "\n".join(out)


def to_csv(steps: tuple[Step, ...]) -> str:
    """Steps -> CSV with columns step, item, value, note."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["step", "item", "value", "note"])
    for step in steps:
        for r in step.rows:
            writer.writerow([f"{step.number}. {step.title}", r.label, r.value, r.note])
    return buf.getvalue()
