"""Why an instruction costs what it costs: (pattern, instruction, one warp's execution) -> one or
two sentences naming the cause and the ideal, computed from the lanes' addresses.

The one place these words are made; the sheet (`report`, the app's pane, exported sheets),
`report --json` ("explanation") and the comparison print them. Numbers: sectors are the
pattern's `sector_bytes`-byte sectors, "useful" bytes are the distinct bytes the active lanes
use, the ideal is the whole sectors those bytes need (scene.grid.run_totals).

Causes, first match wins: no active lane; one active lane; every lane on one word (broadcast);
an address read from an index array (data-dependent, pattern files only: a CUDA kernel's
loads are not traced to their sources); one spacing between adjacent active lanes (contiguous,
then aligned or not and crossing; strided below a sector; a lane per sector, a column walk
when the lanes' rows step by one); contiguous bytes in another lane order; lanes sharing words;
several runs of consecutive elements (a 2-D block's rows); irregular spacing. Inactive and missing lanes and loops whose executions differ add a sentence.
"""

from __future__ import annotations

import numpy as np

from ..model import Pattern
from ..model.frontend import kernel_for
from ..model.one_warp import LaneExecution
from ..model.expr import plain_names_in, subscripts_in
from ..model.sectors import WARP_SIZE
from .grid import run_totals
from .words import counted


def percent(fraction: float) -> str:
    """0.125 -> '12.5%', 1.0 -> '100%' (one decimal at most)."""
    return f"{100 * fraction:.1f}".rstrip("0").rstrip(".") + "%"


def _sectors(n: int) -> str:
    return counted(n, "sector")


def _lanes(lanes: np.ndarray) -> list[str]:
    """Lane numbers -> runs: [0, 1, 2, 5] -> ['0-2', '5']."""
    runs: list[str] = []
    start = prev = None
    for lane in [int(x) for x in lanes] + [None]:
        if start is not None and lane == prev + 1:
            prev = lane
            continue
        if start is not None:
            runs.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = lane
    return runs


def _lane_words(lanes: np.ndarray) -> str:
    runs = _lanes(lanes)
    one = len(runs) == 1 and "-" not in runs[0]
    return ("Lane " if one else "Lanes ") + ", ".join(runs)


def data_dependent(pattern: Pattern, k: int) -> bool:
    """Instruction k of a pattern file takes its index from an array's values (a gather or
    scatter), through the lets it reads; False for CUDA kernels (not traced)."""
    if pattern.kernel is not None:
        return False
    access = pattern.accesses[k]
    lets = {name: e.tree for name, e in pattern.lets}
    todo = [e.tree for e in ((access.index,) if access.index is not None else access.at)]
    seen: set[str] = set()
    while todo:
        tree = todo.pop()
        if subscripts_in(tree):
            return True
        for name in plain_names_in(tree) & lets.keys() - seen:
            seen.add(name)
            todo.append(lets[name])
    return False


def explain_execution(run: LaneExecution, width: int, sector_bytes: int,
                      valid: np.ndarray | None = None, gather: bool = False) -> str:
    """One execution of an instruction (`width`-byte accesses) by one warp -> the sentence(s)
    saying why it touches its sectors; `valid` marks lanes that have a thread, `gather` an
    address read from an index array."""
    active = np.asarray(run.active, dtype=bool)
    valid = np.ones(WARP_SIZE, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    main = _cause(run, active, width, sector_bytes, gather)
    extra = []
    inactive, missing = np.flatnonzero(valid & ~active), np.flatnonzero(~valid)
    if len(missing):
        extra.append(f"{_lane_words(missing)} have no thread (a partial warp).")
    if len(inactive) and active.any():
        extra.append(f"{_lane_words(inactive)} {'is' if len(inactive) == 1 else 'are'} "
                     f"inactive.")
    return " ".join([main] + extra)


def _cause(run: LaneExecution, active: np.ndarray, width: int, sb: int, gather: bool) -> str:
    """The main sentence: the cause and the numbers."""
    n = int(active.sum())
    totals = run_totals([run], sb)
    s, used, ideal = totals.sectors, totals.useful_bytes, totals.ideal_sectors
    useful = f"{used:,} useful bytes ({percent(totals.useful_fraction)})"
    if n == 0:
        return "No lane of this warp is active: 0 sectors."
    address = np.asarray(run.address, dtype=np.int64)
    if n == 1:
        return f"One lane is active: {_sectors(s)} for {used:,} useful bytes."
    distinct = np.unique(address[active])
    if len(distinct) == 1:
        return (f"Every active lane reads the same {width}-byte word: {_sectors(s)} "
                f"(broadcast), {used} of its {s * sb} bytes used.")
    if gather:
        return (f"The index array sends the {n} lanes to {_sectors(s)} "
                f"(data-dependent): {_sectors(s)} for {useful}, ideal {ideal}.")
    pairs = active[:-1] & active[1:]
    gaps = np.unique(np.diff(address)[pairs])
    first_offset = int(distinct[0]) % sb
    crossing = int((active & (np.asarray(run.last_sector) > np.asarray(run.first_sector))).sum())
    contiguous = bool((np.diff(distinct) == width).all())
    if len(gaps) == 1 and abs(int(gaps[0])) == width or (contiguous and len(distinct) == n):
        return _contiguous(n, width, s, used, ideal, first_offset, crossing,
                           in_order=len(gaps) == 1)
    if len(distinct) < n:
        return (f"Lanes share words: {len(distinct)} distinct addresses for {n} lanes, "
                f"{_sectors(s)} for {useful}, ideal {ideal}.")
    if len(gaps) == 1:
        gap = abs(int(gaps[0]))
        if gap >= max(sb, width):
            walk = "Lanes walk down a column, " if _column_walk(run, active) else "Lanes are "
            own = "sectors" if crossing else "sector"  # a crossing lane has two
            return (f"{walk}{gap:,} B apart, so every lane touches its own {own}: "
                    f"{_sectors(s)} for {useful}. Consecutive lanes accessing consecutive "
                    f"elements would need {ideal}.")
        if gap > width:
            return (f"Lanes are {gap} B apart (a stride of {gap / width:g} {width}-byte elements), "
                    f"so {_sectors(s)} hold {useful}; consecutive elements would need "
                    f"{ideal}.")
    lengths = np.diff(np.flatnonzero(np.r_[True, np.diff(distinct) != width, True]))
    runs = len(lengths)
    if lengths.min() >= 2:  # no lane on its own: runs of consecutive elements
        ideal_words = "the ideal" if s == ideal else f"ideal {ideal}"
        return (f"Lanes access {runs} runs of consecutive {width}-byte elements: {_sectors(s)} "
                f"for {useful}, {ideal_words}.")
    apart = np.abs(np.diff(address)[pairs])
    return (f"Adjacent lanes are {int(apart.min()):,} to {int(apart.max()):,} B apart: "
            f"{_sectors(s)} for {useful}, ideal {ideal}.")


def _contiguous(n: int, width: int, s: int, used: int, ideal: int, offset: int,
                crossing: int, in_order: bool) -> str:
    """Lanes whose accesses tile one run of bytes without holes."""
    what = f"consecutive {width}-byte elements" + (" (a vector access)" if width in (8, 16)
                                                   else "")
    order = "" if in_order else " in another lane order (the order does not matter)"
    if s > ideal and crossing:
        return (f"Lanes access {what}{order}, but {crossing} of {n} cross a sector boundary: "
                f"the {used:,} bytes span {_sectors(s)} instead of {ideal}.")
    if s > ideal:
        return (f"Lanes access {what}{order}, but the first starts {offset} B into a sector, "
                f"so the {used:,} bytes span {_sectors(s)} instead of {ideal}.")
    cross = (f"; {crossing} of {n} elements cross a sector boundary, yet together they fill "
             f"whole sectors" if crossing else "")
    return f"Lanes access {what}{order}, aligned{cross}: {_sectors(s)} for {used:,} B, the ideal."


def _column_walk(run: LaneExecution, active: np.ndarray) -> bool:
    """The active lanes keep one column and step one row at a time (a 2-D array)."""
    if run.row is None or run.col is None:
        return False
    row, col = np.asarray(run.row)[active], np.asarray(run.col)[active]
    return bool((col == col[0]).all() and (np.abs(np.diff(row)) == 1).all())


def explanations(pattern: Pattern, detail, instruction: int | None = None,
                 run: int = 0) -> tuple[str, ...]:
    """One warp's `detail` -> the explanation of every instruction: execution `run` of
    `instruction`, the first execution of the others; a loop whose executions differ in
    sectors says by how much."""
    kernel, sb = kernel_for(pattern), pattern.sector_bytes
    out = []
    for k, ins in enumerate(kernel.instructions):
        runs = detail.executions[k]
        j = run if k == instruction else 0
        if not 0 <= j < len(runs):
            out.append("Not run by this warp.")
            continue
        words = explain_execution(runs[j], ins.width, sb, detail.valid,
                                  data_dependent(pattern, k))
        counts = [r.sectors for r in runs]
        if min(counts) != max(counts):
            words += (f" Over its {len(runs)} executions in this warp it takes "
                      f"{min(counts)} to {max(counts)} sectors.")
        out.append(words)
    return tuple(out)
