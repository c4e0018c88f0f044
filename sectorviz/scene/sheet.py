"""The accounting sheet: (listing, analysis, the selected warp's details) -> the answer and
five steps as rows of text, each with its figures as plain numbers and their unit (what the
CSV holds). The one list of rows that `report`, the app's pane, Copy as Markdown/CSV and the
exported sheets print (export/sheets.py, ui/sheet_view.py); nothing here is drawn.

Answer first (sector demand against ideal, useful %, the worst instruction, global or
shared: worst_instruction), then 1 memory
operations, 2 logical bytes, 3 address expansion of the selected warp, 4 sectors per request
(this warp, then over the grid), 5 traffic at named boundaries with the assumption each rests
on and the Nsight Compute metric that measures it, and the passes of __constant__ reads;
6 shared memory (bank wavefronts per instruction), for a kernel with shared accesses.
Bytes are bytes, sectors are the pattern's `sector_bytes`-byte sectors; grid-wide numbers are
the model's Stats, never recomputed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model.banks import (
    LOAD_CONFLICTS,
    LOAD_WAVEFRONTS,
    STORE_CONFLICTS,
    STORE_WAVEFRONTS,
    bank_rows,
)
from ..model.cache import CacheResult, time_text
from ..model.measured import Measured
from ..model.ptxas_changes import ptx_width
from ..model.results import Analysis, ConstantStats, InstructionStats, Stats
from ..model.shared_stats import SharedStats
from ..model.values import (
    CompilerChanges,
    LaneExecution,
    Listing,
    SharedWarpDetail,
    WarpDetails,
)
from .explain import explanations, shared_explanations
from .grid import LINE_BYTES, run_totals
from .palette import waste_classes
from .words import NOT_RUN, counted

Figure = int | float | None  # a plain number (None: no such figure, e.g. a lone side)


@dataclass(frozen=True)
class Row:
    """One line of a sheet: `value` is the text the text, Markdown and LaTeX printers show;
    `figures` are the same value as plain numbers in `unit` (one per column of the sheet's
    `columns`), what the CSV holds; a row without figures is text only."""

    label: str
    value: str
    note: str = ""
    code: str = ""  # a copyable identifier (a profiler metric), shown in monospace
    instruction: int | None = None  # the instruction the row is about, if one
    figures: tuple[Figure, ...] = ()
    unit: str = ""  # of the figures: "sectors", "B", "%", "requests", ...


@dataclass(frozen=True)
class Step:
    number: int
    title: str
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Sheet:
    title: str  # one line: pattern, threads, warps, sector size
    answer: tuple[Row, ...]
    steps: tuple[Step, ...]
    columns: tuple[str, ...] = ("value",)  # what each of a row's figures is
    names: tuple[str, ...] = ()  # the instructions' names its labels start with (elided in text)


OP_WORDS = {"load": "load", "store": "store",
            "atom": "atomic read-modify-write whose old value is used",
            "red": "atomic reduction whose old value is discarded"}
NO_GLOBAL = "no global memory instruction"  # a kernel that reads and writes no global array
# what a "this warp" row says without the warp's execution of its instruction
WORKING = "working out…"  # its details are on their way
NOT_COUNTED = "not counted (step 3 says why)"  # they stopped with an error
CONSTANT_NOTE = ("__constant__ reads, through the constant cache: a request takes one pass per "
                 "distinct address; no global sectors")


SHARED_MODEL = (
    "32 banks of 4 bytes, bank = (byte address / 4) mod 32, as NVIDIA documents for compute "
    "capability 5.0 and later; lanes using one 4-byte word are served together (broadcast; of "
    "stores, one wins). 1-, 2- and 4-byte accesses are one phase of 32 lanes, 8-byte two of 16 "
    "lanes, 16-byte four of 8 lanes (the common measured behaviour); a phase takes as many "
    "wavefronts as the most distinct words one bank serves, ideally 1")
SHARED_WAVEFRONTS = {"load": LOAD_WAVEFRONTS, "store": STORE_WAVEFRONTS}
CONFLICTS_NOTE = ("wavefronts beyond the ideal; Nsight Compute's conflict counter can also "
                  "include stalls from other arbitration, so it may read higher")


def op_words(op: str) -> str:
    """An instruction's op ("load", "store", "atom", "red") in words."""
    return OP_WORDS.get(op, op)


def per_request(c: ConstantStats) -> float:
    """Distinct addresses per request of a __constant__ read (passes it serializes)."""
    return c.distinct_addresses / c.requests if c.requests else 0.0


def constant_summary(c: ConstantStats) -> str:
    """A __constant__ read's passes: '8 distinct addresses in 1 request (8.00 per request)'."""
    return (f"{counted(c.distinct_addresses, 'distinct address', 'distinct addresses')} in "
            f"{counted(c.requests, 'request')} "
            f"({per_request(c):.2f} per request)")


def readable_bytes(n: int) -> str:
    """Bytes -> '12 MiB', '1.5 KiB', '384 B' (binary units)."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.2f} {unit}"
    return f"{n} B"


def sectors_text(n: int) -> str:
    """12 -> '12 sectors', 1 -> '1 sector'."""
    return counted(n, "sector")


def ideal_per_request(stats: Stats) -> float:
    """An instruction's ideal sectors per request over the grid (0 without requests)."""
    return stats.ideal_sectors / stats.requests if stats.requests else 0.0


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


def cache_row(cache: CacheResult) -> Row:
    """The cache model's assumption in words: the row under the boundaries it estimates."""
    m = cache.machine
    return Row("cache model (an estimate under assumptions)",
               f"{m.name}, {m.order}, {readable_bytes(m.l2_bytes)} L2",
               f"assumes {cache.assumption}; DRAM bytes take at least "
               f"{time_text(cache.time_floor_s)} at peak bandwidth (a lower bound, not a "
               f"runtime)")


def measured_step(number: int, source: str, rows: tuple[Measured, ...] | None,
                  error: str | None = None) -> Step:
    """Step `number`: each boundary's prediction against what Nsight Compute measured (CSV
    `source`), ratio = measured / predicted; or why nothing is compared (`error`)."""
    title = f"Predicted against measured ({source}, Nsight Compute)"
    if rows is None:
        return Step(number, title, (Row("measured", "not compared", error or ""),))
    if not rows:
        return Step(number, title, (Row("measured", "no boundary's metric in the CSV",
                                        "profile with the metrics `sectorviz ncu-metrics` "
                                        "prints"),))
    return Step(number, title, tuple(
        Row(m.boundary, f"measured {readable_bytes(round(m.measured_bytes))} / predicted "
                        f"{readable_bytes(m.predicted_bytes)} = "
                        + ("-" if m.ratio is None else f"{m.ratio:.3f}"),
            f"{m.measured_bytes:,.0f} B measured, {m.predicted_bytes:,} B predicted"
            + ("; nothing predicted" if m.ratio is None else ""), m.metric,
            figures=(m.ratio,), unit="measured / predicted")
        for m in rows))


def _alignment(execution: LaneExecution, address0: int, sector_bytes: int) -> str:
    first = int(np.asarray(execution.address)[np.asarray(execution.active)][0])
    return (f"first lane at 0x{first:x} (array + {first - address0} B): "
            f"{first % sector_bytes} B into its sector, {first % LINE_BYTES} B into its "
            f"{LINE_BYTES} B line")


def _so_far(analysis: Analysis | None) -> str:
    """'' for a finished analysis; ' so far (done of all warps)' while a run goes on."""
    if analysis is None or analysis.warps_done is None:
        return ""
    return f" so far ({analysis.warps_done:,} of {counted(analysis.warps, 'warp')})"


def _answer(analysis: Analysis | None, error: str | None) -> tuple[Row, ...]:
    """Sector demand against ideal, useful %, and the worst instruction (global or shared)."""
    if analysis is None:
        return (Row("grid", "failed" if error else "computing…", error or
                    "runs in the background"),)
    t = analysis.totals
    useful = 100 * t.useful_fraction
    rows = [Row(f"sector demand{_so_far(analysis)}",
                f"{readable_bytes(t.sector_traffic_bytes)} ({sectors_text(t.sectors)}), "
                f"ideal {t.ideal_sectors:,}",
                f"{t.sectors / t.ideal_sectors:.2f}x the ideal" if t.ideal_sectors else "",
                figures=(t.sectors,), unit="sectors"),
            Row("useful", f"{useful:.1f}% of the fetched bytes",
                f"{t.useful_bytes:,} B used of {t.sector_traffic_bytes:,} B",
                figures=(useful,), unit="%")]
    worst = worst_instruction(analysis)
    every: tuple[InstructionStats | SharedStats, ...] = (*analysis.instructions, *analysis.shared)
    if worst is not None:
        rows.append(Row("worst instruction", worst.name, worst.words,
                        instruction=worst.instruction))
    elif any(s.requests for s in every):
        what = " and takes only its ideal bank wavefronts" if analysis.shared else ""
        rows.append(Row("worst instruction", "none: every instruction fetches only its ideal "
                                             f"sectors{what}"))
    return tuple(rows) + _merged_by_ptxas(analysis)


def _merged_by_ptxas(analysis: Analysis) -> tuple[Row, ...]:
    """A kernel counted in SASS: its accesses ptxas widened (a SASS row wider than its PTX
    operation), per line, array and opcode, with their requests."""
    found: dict[tuple[int | None, str, str], list[int]] = {}
    every = [(s, s.requests) for s in analysis.instructions] + \
        [(s, s.requests) for s in analysis.shared]
    for s, requests in every:
        if s.sass and ptx_width(s.ptx) and s.width > ptx_width(s.ptx):
            counts = found.setdefault((s.line, s.array, s.sass), [0, s.width // ptx_width(s.ptx),
                                                                  s.width])
            counts[0] += requests
    return tuple(Row("ptxas merged", f"line {line}: {array}, {requests:,} {sass} requests",
                     f"{factor} PTX accesses merged into each {width * 8}-bit one",
                     figures=(requests,), unit="requests")
                 for (line, array, sass), (requests, factor, width) in found.items())


@dataclass(frozen=True)
class Worst:
    """The costliest instruction against its ideal over the grid: `space` "global" (its
    cost in sectors) or "shared" (in bank wavefronts); `index` in its space's list, and
    `instruction` in the app's order (the global ones, then the shared ones); `ratio`
    actual / ideal (what the overview's colour is of), `excess` units beyond the ideal,
    `per_request` and `ideal_per_request` of those units, and the note in words."""

    space: str
    index: int
    instruction: int
    name: str
    unit: str
    ratio: float
    excess: int
    per_request: float
    ideal_per_request: float
    words: str

    def to_json(self) -> dict[str, Any]:
        """The `report --json` "worst" entry."""
        return {k: v for k, v in self.__dict__.items() if k != "words"}


def _figure(x: float) -> str:
    """32.0 -> '32', 4.5 -> '4.50': whole numbers without decimals."""
    return f"{x:.0f}" if x == int(x) else f"{x:.2f}"


def worst_instruction(analysis: Analysis) -> Worst | None:
    """The instruction in the overview's worst colour (waste class of its grid-wide ratio),
    the highest ratio among those, then the most excess; global instructions count sectors,
    shared ones bank wavefronts (once the run is complete). None when every instruction that
    ran is at its ideal."""
    n = len(analysis.instructions)
    candidates = [Worst("global", k, k, s.name, "sectors", s.sectors / s.ideal_sectors,
                        s.excess_sectors, s.sectors_per_request, ideal_per_request(s),
                        f"{s.sectors_per_request:.2f} sectors per request, ideal "
                        f"{ideal_per_request(s):.2f}; excess {s.excess_sectors:,} sectors")
                  for k, s in enumerate(analysis.instructions) if s.requests and s.ideal_sectors]
    candidates += [Worst("shared", k, n + k, s.name, "wavefronts",
                         s.wavefronts / s.ideal_wavefronts, s.bank_conflicts,
                         s.wavefronts_per_request, s.ideal_wavefronts / s.requests,
                         f"{_ways(s)}, {_figure(s.wavefronts_per_request)} wavefronts per "
                         f"request, ideal {_figure(s.ideal_wavefronts / s.requests)}; "
                         f"{s.bank_conflicts:,} bank conflicts")
                   for k, s in enumerate(analysis.shared) if s.requests and s.ideal_wavefronts]
    if not candidates:
        return None
    classes = waste_classes([c.ratio for c in candidates])
    worst, _ = max(zip(candidates, classes),
                   key=lambda cw: (cw[1], cw[0].ratio, cw[0].excess, -cw[0].instruction))
    return worst if worst.excess else None


def _ways(s: SharedStats) -> str:
    """'32-way bank conflict' (every request alike), else 'typically 4-way bank conflicts,
    up to 8-way'."""
    if s.min == s.max:
        return f"{s.max}-way bank conflict"
    return f"typically {s.mode}-way bank conflicts, up to {s.max}-way"


def _wavefronts(s: SharedStats) -> str:
    return (f"{counted(s.wavefronts, 'wavefront')} in {counted(s.requests, 'request')} "
            f"({s.wavefronts_per_request:.2f} per request), ideal "
            f"{s.ideal_wavefronts:,}")


def _shared_rows(analysis: Analysis | None, waiting: Row | None) -> tuple[Row, ...]:
    """Step 6: per shared instruction its wavefronts against the ideal and its n-way
    conflicts, the totals, the bank model and the conflict metrics (once the run is done)."""
    if analysis is None:
        assert waiting is not None  # the row said while there is no analysis
        return (waiting,)
    if analysis.shared_note is not None:
        return (Row("shared memory", "not counted", analysis.shared_note),)
    if analysis.shared_totals is None:
        return (Row("shared memory", "counted when the run completes"),)
    rows = [Row(s.name, _wavefronts(s),
                f"{s.bank_conflicts:,} bank conflicts; n-way typical {s.mode}, min {s.min}, "
                f"max {s.max}; {op_words(s.op)}, {s.width} B per lane, array {s.array}",
                SHARED_WAVEFRONTS.get(s.op, ""), figures=(s.wavefronts,), unit="wavefronts")
            for s in analysis.shared]
    t = analysis.shared_totals
    rows += [Row("total", _wavefronts(t), f"{t.bank_conflicts:,} bank conflicts",
                 figures=(t.wavefronts,), unit="wavefronts"),
             Row("bank model", "32 banks of 4 B, phases by access width",
                 f"assumes {SHARED_MODEL}")]
    rows += [Row(f"bank conflicts, {op}s", f"{n:,}", CONFLICTS_NOTE, metric, figures=(n,),
                 unit="bank conflicts")
             for op, n, metric in (("load", _conflicts(analysis, "load"), LOAD_CONFLICTS),
                                   ("store", _conflicts(analysis, "store"), STORE_CONFLICTS))]
    return tuple(rows)


def _shared_warp_rows(listing: Listing, warp: int, shared: SharedWarpDetail | str,
                      instruction: int, run: int, pending: bool) -> tuple[Row, ...]:
    """Step 6 about `warp`: each shared instruction's wavefronts in execution `run` of
    shared instruction `instruction` (the first of the others), and why (scene.explain);
    the error that stopped `shared`, if one did, or that it is being worked out."""
    if isinstance(shared, str):
        return (Row(f"warp {warp}", WORKING if pending else "error", shared),)
    why = shared_explanations(listing, shared, instruction, run)
    rows = []
    for k, (ins, executions) in enumerate(zip(listing.shared_instructions, shared.executions)):
        j = run if k == instruction else 0
        at = len(listing.instructions) + k
        if not 0 <= j < len(executions):
            rows.append(Row(f"{ins.name}, this warp", NOT_RUN, instruction=at))
            continue
        b = executions[j]
        banks = bank_rows(np.broadcast_to(b.address, b.active.shape)[:1], ins.width,
                          b.active[:1])
        which = f", execution {j + 1} of {len(executions)}" if len(executions) > 1 else ""
        w = int(banks.wavefronts[0])
        rows.append(Row(f"{ins.name}, this warp{which}",
                        f"{counted(w, 'wavefront')}, ideal {int(banks.ideal[0])}, "
                        f"{int(banks.ways[0])}-way", why[k], instruction=at, figures=(w,),
                        unit="wavefronts"))
    return tuple(rows)


def _conflicts(analysis: Analysis, op: str) -> int:
    return sum(s.bank_conflicts for s in analysis.shared if s.op == op)


def accounting_sheet(listing: Listing, analysis: Analysis | None, details: WarpDetails,
                     instruction: int = 0, run: int = 0, error: str | None = None,
                     changes: CompilerChanges | None = None) -> Sheet:
    """The sheet for the warp of `details` (steps 3 and 4 show execution `run` of
    `instruction`, the first execution of the others) and the grid (`analysis`: partial while
    a run goes on, its rows then say "so far"; None before the first result or when it
    failed with `error`); with a compiled kernel's `changes` against the source as written,
    each instruction's explanation says them and a last step lists them."""
    sb, warp = listing.sector_bytes, details.warp
    detail = None if isinstance(details.detail, str) else details.detail
    warp_error = details.detail if isinstance(details.detail, str) else None
    stats: tuple[InstructionStats | None, ...] = (
        analysis.instructions if analysis is not None else (None,) * len(listing.instructions))
    waiting = None if analysis is not None else _answer(None, error)[0]
    so_far = _so_far(analysis)
    ops, logical, expansion, sectors = [], [], [], []
    why = explanations(listing, detail, instruction, run) if detail else ()
    if changes is not None:
        why = tuple(f"{w} {changes.words_for(k)}".rstrip() for k, w in enumerate(why))
    for k, (ins, st) in enumerate(zip(listing.instructions, stats)):
        runs = detail.executions[k] if detail else ()
        arr = listing.arrays[ins.first_array]
        loops = f"; {len(runs)} executions in this warp" if len(runs) > 1 else ""
        ops.append(Row(ins.name, f"{op_words(ins.op)}, {ins.width} B per lane",
                       f"array {ins.array} ({arr.spec.dtype})" + loops, instruction=k))
        if st is not None:
            logical.append(Row(ins.name, readable_bytes(st.logical_bytes),
                               f"{counted(st.active_lanes, 'active lane')} × {ins.width} B",
                               instruction=k, figures=(st.logical_bytes,), unit="B"))
        j = run if k == instruction else 0
        ex = runs[j] if 0 <= j < len(runs) else None
        if ex is None:
            unknown = NOT_RUN if detail else WORKING if details.pending else NOT_COUNTED
            expansion.append(Row(ins.name, unknown, instruction=k))
            sectors.append(Row(f"{ins.name}, this warp", unknown, instruction=k))
        else:
            spacing = lane_spacing(ex)
            expansion.append(Row(ins.name, spacing, _alignment(ex, arr.address0, sb),
                                 instruction=k))
            which = f", execution {j + 1} of {len(runs)}" if len(runs) > 1 else ""
            all_runs = (f"{sectors_text(run_totals(runs, sb).sectors)} over its "
                        f"{len(runs)} executions" if len(runs) > 1 else "")
            sectors.append(Row(f"{ins.name}, this warp{which}",
                               f"{spacing}: {sectors_text(ex.sectors)}, ideal "
                               f"{run_totals([ex], sb).ideal_sectors}",
                               f"{all_runs}. {why[k]}" if all_runs else why[k], instruction=k,
                               figures=(ex.sectors,), unit="sectors"))
        if st is not None:
            sectors.append(Row(
                f"{ins.name}, grid{so_far}",
                f"typical {st.mode}, min {st.min}, max {st.max} sectors per request",
                f"{sectors_text(st.sectors)} ({readable_bytes(st.sector_traffic_bytes)}) in "
                f"{counted(st.requests, 'request')}; ideal {st.ideal_sectors:,}, excess "
                f"{st.excess_sectors:,}; useful {100 * st.useful_fraction:.1f}%",
                instruction=k, figures=(st.sectors,), unit="sectors"))
    if not listing.instructions:
        ops.append(Row("global memory", NO_GLOBAL, "the kernel reads and writes no global "
                                                   "array: no sectors to count"))
    if analysis is not None:
        t = analysis.totals
        logical.append(Row(f"total{so_far}", readable_bytes(t.logical_bytes),
                           f"{t.logical_bytes:,} B requested by "
                           f"{counted(analysis.threads, 'thread')}",
                           figures=(t.logical_bytes,), unit="B"))
        sectors.append(Row(f"total, grid{so_far}", f"{sectors_text(t.sectors)} = "
                                          f"{readable_bytes(t.sector_traffic_bytes)}",
                           f"ideal {t.ideal_sectors:,}, excess {t.excess_sectors:,}, useful "
                           f"{100 * t.useful_fraction:.1f}%, {t.sectors_per_request:.2f} "
                           f"sectors per request; unique sectors {t.unique_sectors:,}",
                           figures=(t.sectors,), unit="sectors"))
        bounds = [Row(f"{b.name}{so_far}",
                      f"{readable_bytes(b.bytes)} ({sectors_text(b.sectors)})",
                      f"assumes {b.assumption}", b.metric, figures=(b.bytes,), unit="B")
                  for b in analysis.boundaries]
        bounds += [Row(f"{c.instruction} (constant cache)", constant_summary(c), CONSTANT_NOTE,
                       figures=(c.distinct_addresses,), unit="distinct addresses")
                   for c in analysis.constant]
        if analysis.cache is not None:
            bounds.append(cache_row(analysis.cache))
    else:
        assert waiting is not None  # the row said while there is no analysis
        logical.append(waiting)
        sectors.append(waiting)
        bounds = [waiting]
    block = "" if detail is None else f", block {tuple(detail.block)}"
    warp_rows = expansion if detail is not None else [
        Row("warp", WORKING if details.pending else "error", warp_error or "")]
    title = (f"{listing.name}: {counted(listing.threads, 'thread')} in "
             f"{counted(listing.warps, 'warp')}, {sb}-byte sectors"
             + ("" if listing.reading is None else f"; {listing.reading}"))
    steps = [
        Step(1, "Memory operations", tuple(ops)),
        Step(2, "Logical bytes", tuple(logical)),
        Step(3, f"Address expansion (warp {warp}{block})", tuple(warp_rows)),
        Step(4, f"Sectors per request ({sb} B sectors)", tuple(sectors)),
        Step(5, "Traffic at named boundaries (request-side demand, not a DRAM measurement)",
             tuple(bounds)),
    ]
    if listing.shared_instructions:
        assert details.shared is not None  # given for a kernel with shared instructions
        shared = instruction - len(listing.instructions)
        steps.append(Step(6, "Shared memory: bank wavefronts per warp request (per block, not "
                             "global sectors)",
                          _shared_rows(analysis, waiting)
                          + _shared_warp_rows(listing, warp, details.shared, shared, run,
                                              details.pending)))
    if changes is not None and (changes.changes or changes.note):
        steps.append(Step(len(steps) + 1, "What the compiler changed (compiled against as "
                                          "written)", _change_rows(changes)))
    names = tuple(i.name for i in listing.instructions + listing.shared_instructions)
    return Sheet(title, _answer(analysis, error), tuple(steps), names=names)


def _change_rows(changes: CompilerChanges) -> tuple[Row, ...]:
    """One row per change: the line and access, the kind, the sentence."""
    if not changes.changes:
        return (Row("as written", "not compared", changes.note or ""),)
    return tuple(Row(f"line {c.line}: {c.source}" if c.source else f"line {c.line}", c.kind,
                     c.sentence,
                     instruction=c.instructions[0] if c.instructions else None)
                 for c in changes.changes)


Cell = str | int | float


def _cells(sheet: Sheet, r: Row) -> list[Cell]:
    """A row's figure columns: its plain numbers ("" for a missing one), or its text in the
    first column when it has no figures."""
    if not r.figures:
        text: list[Cell] = [r.value]
        return text + [""] * (len(sheet.columns) - 1)
    return ["" if f is None else f for f in r.figures]


def sheet_table(sheet: Sheet) -> list[list[Cell]]:
    """The sheet as one table (header first): section, item, the sheet's figure columns
    (plain numbers), unit, note, metric; the answer rows are section 'answer'. What the CSV
    holds."""
    rows: list[list[Cell]] = [["section", "item", *sheet.columns, "unit", "note", "metric"]]
    sections = [("answer", r) for r in sheet.answer]
    sections += [(f"{s.number}. {s.title}", r) for s in sheet.steps for r in s.rows]
    rows += [[section, r.label, *_cells(sheet, r), r.unit, r.note, r.code]
             for section, r in sections]
    return rows
