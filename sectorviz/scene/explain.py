"""Why an instruction costs what it costs: (listing, instruction, one warp's execution) -> one or
two sentences naming the cause and the ideal, computed from the lanes' addresses.

The one place these words are made; the sheet (`report`, the app's pane, exported sheets),
`report --json` ("explanation"), `report --explain`, the grid and banks tooltips, `export
--explain` and the comparison print them. Numbers: sectors are the
pattern's `sector_bytes`-byte sectors, "useful" bytes are the distinct bytes the active lanes
use, the ideal is the whole sectors those bytes need (scene.grid.run_totals).

Causes, first match wins: no active lane; one active lane; every lane on one word (broadcast);
an address read from an index array (data-dependent, pattern files only: a CUDA kernel's
loads are not traced to their sources); one spacing between adjacent active lanes (contiguous,
then aligned or not and crossing; strided below a sector; a lane per sector, a column walk
when the lanes' rows step by one); contiguous bytes in another lane order; lanes sharing words;
several runs of consecutive elements (a 2-D block's rows); irregular spacing. Inactive and
missing lanes and loops whose executions differ add a sentence.

Shared-memory requests (`shared_explanations`) are explained by model/banks.py's rule, from the
lanes' 4-byte words and their banks (scene.banks.bank_grid): no active lane; one; a broadcast
(every lane on one word); an index array's words; consecutive elements, in lane order or not
(one phase of 32 lanes, or 2 or 4 phases for 8- and 16-byte lanes); a stride or a 2-D tile's column
walk, with the padding (found by trying it on the bank model) that would make a conflict go away, or
the padding that already did; shared words; irregular spacing. Each names where the words fall (the
worst phase's banks) and the wavefronts against the ideal, and the n-way conflict if there is one.
"""

from __future__ import annotations

import numpy as np

from ..model.banks import BANK_BYTES, BANKS, bank_rows
from ..model.sectors import WARP_SIZE
from ..model.values import (
    Batch,
    Instruction,
    LaneExecution,
    Listing,
    ResolvedArray,
    SharedWarpDetail,
    WarpDetail,
)
from .banks import BankGrid, bank_grid
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
    start: int | None = None
    prev: int | None = None
    for lane in [int(x) for x in lanes] + [None]:
        if prev is not None and lane == prev + 1:  # prev is None exactly when start is
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


def explain_execution(run: LaneExecution, width: int, sector_bytes: int,
                      valid: np.ndarray | None = None, gather: bool = False) -> str:
    """One execution of an instruction (`width`-byte accesses) by one warp -> the sentence(s)
    saying why it touches its sectors; `valid` marks lanes that have a thread, `gather` an
    address read from an index array."""
    active = np.asarray(run.active, dtype=bool)
    valid = np.ones(WARP_SIZE, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    main = _cause(run, active, width, sector_bytes, gather)
    return " ".join([main] + _lane_notes(active, valid))


def _lane_notes(active: np.ndarray, valid: np.ndarray) -> list[str]:
    """The sentences about lanes without a thread and inactive lanes (none if all run)."""
    notes = []
    inactive, missing = np.flatnonzero(valid & ~active), np.flatnonzero(~valid)
    if len(missing):
        notes.append(f"{_lane_words(missing)} have no thread (a partial warp).")
    if len(inactive) and active.any():
        notes.append(f"{_lane_words(inactive)} {'is' if len(inactive) == 1 else 'are'} "
                     f"inactive.")
    return notes


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
    gaps = np.unique(_adjacent_steps(address, active))
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
    return f"{_apart(address, active)}: {_sectors(s)} for {useful}, ideal {ideal}."


def _adjacent_steps(address: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Byte steps from each active lane to the next lane where that one is active too (lane
    order, signed)."""
    steps: np.ndarray = np.diff(address)[active[:-1] & active[1:]]
    return steps


def _apart(address: np.ndarray, active: np.ndarray) -> str:
    """'Adjacent lanes are 4 to 64 B apart': the byte distances between adjacent active lanes,
    or between consecutive active ones where no two active lanes are adjacent (at least two
    lanes active)."""
    steps = _adjacent_steps(address, active)
    if len(steps):
        who, apart = "Adjacent lanes", np.abs(steps)
    else:
        who, apart = "Consecutive active lanes", np.abs(np.diff(address[active]))
    low, high = int(apart.min()), int(apart.max())
    return f"{who} are {low:,} B apart" if low == high else f"{who} are {low:,} to {high:,} B apart"


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


def explanations(listing: Listing, detail: WarpDetail, instruction: int | None = None,
                 run: int = 0) -> tuple[str, ...]:
    """One warp's `detail` -> the explanation of every instruction: execution `run` of
    `instruction`, the first execution of the others; a loop whose executions differ in
    sectors says by how much."""
    sb = listing.sector_bytes
    out = []
    for k, ins in enumerate(listing.instructions):
        runs = detail.executions[k]
        j = run if k == instruction else 0
        if not 0 <= j < len(runs):
            out.append("Not run by this warp.")
            continue
        words = explain_execution(runs[j], ins.width, sb, detail.valid,
                                  ("global", k) in listing.gathers)
        fewest, most = runs.sector_range(sb)
        if fewest != most:
            words += (f" Over its {len(runs)} executions in this warp it takes "
                      f"{fewest} to {most} sectors.")
        out.append(words)
    return tuple(out)


# ---------------------------------------------------------------- shared memory


def _waves(n: int) -> str:
    return counted(n, "wavefront")


def _bank_cost(grid: BankGrid, width: int) -> str:
    """': 1 wavefront, conflict-free' or ', so the request takes 32 wavefronts where 1 would
    do (32-way conflict)': the request's wavefronts against the ideal."""
    if grid.wavefronts == grid.ideal:
        why = (f", the ideal for {width}-byte accesses" if grid.phase_lanes < WARP_SIZE
               else "")
        return f": {_waves(grid.wavefronts)}, conflict-free{why}"
    return (f", so the request takes {_waves(grid.wavefronts)} where {grid.ideal} would do "
            f"({grid.ways}-way conflict)")


def _phase_banks(grid: BankGrid) -> tuple[dict[int, set[int]], int]:
    """The phase with the most distinct words in one bank -> (bank -> its distinct words in
    that phase, the worst bank)."""
    phases: dict[int, dict[int, set[int]]] = {}
    for c in grid.cells:
        phases.setdefault(c.phase, {}).setdefault(c.bank, set()).add(c.word)
    banks = max(phases.values(), key=lambda b: (max(len(w) for w in b.values()), -len(b)))
    return banks, max(banks, key=lambda b: (len(banks[b]), -b))


def _bank_spread(grid: BankGrid) -> str:
    """Where the words of the worst phase fall: 'all in bank 0', 'in 16 banks, 2 words
    each', 'one per bank over all 32 banks', ..."""
    banks, worst = _phase_banks(grid)
    counts = sorted({len(w) for w in banks.values()})
    words = sum(len(w) for w in banks.values())
    if len(banks) == 1:
        return f"all in bank {worst}"
    if counts == [1]:
        return ("one per bank over all 32 banks" if len(banks) == BANKS
                else f"one per bank in {len(banks)} banks")
    if len(counts) == 1:
        return f"in {len(banks)} banks, {counts[0]} words each"
    return f"{words} words in {len(banks)} banks, bank {worst} serving {len(banks[worst])}"


def _where(grid: BankGrid, width: int) -> str:
    """Where the words fall, by phase for accesses wider than 4 bytes: ', one per bank over
    all 32 banks' or '; 8-byte accesses are served in 2 phases of 16 lanes, and in each the
    words fall in 16 banks, 2 words each'."""
    if grid.phase_lanes == WARP_SIZE:
        return f", {_bank_spread(grid)}"
    return (f"; {width}-byte accesses are served in {WARP_SIZE // grid.phase_lanes} phases of "
            f"{grid.phase_lanes} lanes, and in each the words fall {_bank_spread(grid)}")


def _padding(address: np.ndarray, active: np.ndarray, width: int, gap: int,
             column: bool, padded_already: bool = False) -> str:
    """For lanes `gap` bytes apart in a conflict: the fewest elements of padding per step that
    would make the request conflict-free, computed with the bank model (`column`: rows of a
    tile, `padded_already`: rows padded already, by too little); '' if none up to 8."""
    rank = np.cumsum(active) - 1
    first = int(address[active][0])
    for pad in range(1, 9):
        step = gap + pad * width
        padded = first + rank * step
        rows = bank_rows(padded[None, :], width, active[None, :])
        if rows.wavefronts[0] == rows.ideal[0]:
            spread = _bank_spread(bank_grid(padded, width, active))
            elements = (f"{'one' if pad == 1 else pad}{' more' * padded_already} element"
                        + "s" * (pad != 1))
            if column:
                return (f" Padding each row by {elements} (stride {step / BANK_BYTES:g} words) "
                        f"spreads them {spread}.")
            return (f" A stride of {step / BANK_BYTES:g} words ({elements} more) would "
                    f"spread them {spread}.")
    return ""


def _column(row: np.ndarray | None, col: np.ndarray | None, active: np.ndarray
            ) -> int | None:
    """The column the active lanes walk down one row at a time, None if they do not."""
    if row is None or col is None:
        return None
    r, c = np.asarray(row)[active], np.asarray(col)[active]
    if (c == c[0]).all() and (np.diff(r) == 1).all():
        return int(c[0])
    return None


def explain_shared(batch: Batch, ins: Instruction, array: ResolvedArray | None = None,
                   valid: np.ndarray | None = None, gather: bool = False) -> str:
    """One execution of shared instruction `ins` by one warp (row 0 of `batch`: byte offsets
    in the block's shared memory) -> why it takes its wavefronts, by model/banks.py; `array`
    (a pattern file's) names a 2-D tile's column walk and padding, `gather` an index read
    from an array."""
    active = np.asarray(batch.active[0], dtype=bool)
    address = np.broadcast_to(batch.address, batch.active.shape)[0].astype(np.int64)
    valid = np.ones(WARP_SIZE, dtype=bool) if valid is None else np.asarray(valid, dtype=bool)
    main = _shared_cause(address, active, ins, array, batch, gather)
    return " ".join([main] + _lane_notes(active, valid))


def _shared_cause(address: np.ndarray, active: np.ndarray, ins: Instruction,
                  array: ResolvedArray | None, batch: Batch, gather: bool) -> str:
    """The main sentence about a shared request: the lanes' words, their banks, the cost."""
    width, n = ins.width, int(active.sum())
    verb = "write" if ins.op == "store" else "read"
    if n == 0:
        return "No lane of this warp is active: no request."
    grid = bank_grid(address, width, active)
    cost, where = _bank_cost(grid, width), _where(grid, width)
    lanes = _lane_words(np.flatnonzero(active))
    words = {c.word for c in grid.cells}
    element = "word" if width == BANK_BYTES else f"{width}-byte element"
    distinct = np.unique(address[active])
    if len(distinct) == 1:
        banks = sorted({c.bank for c in grid.cells})
        where = f"bank {banks[0]}" if len(banks) == 1 else f"banks {', '.join(map(str, banks))}"
        if n == 1:
            return f"One lane is active: one {element} ({where}), {_waves(grid.wavefronts)}."
        phases = len({c.phase for c in grid.cells})
        each = f" in each of its {phases} phases" if phases > 1 else ""
        wins = "; one store wins" if ins.op == "store" else ""
        return (f"Every active lane {verb}s the same {element} ({where}): "
                f"{_waves(grid.wavefronts)} (a broadcast{each}{wins}).")
    if gather:
        return (f"The index array sends the {n} lanes to {len(words)} distinct words{where}"
                f"{cost}.")
    gaps = np.unique(np.abs(_adjacent_steps(address, active)))
    if len(gaps) == 1 and int(gaps[0]) == width:
        return f"{lanes} {verb} consecutive {width}-byte elements{where}{cost}."
    if len(distinct) == n and (np.diff(distinct) == width).all():
        return (f"{lanes} {verb} consecutive {width}-byte elements in another lane order"
                f"{where}{cost}.")
    if len(gaps) == 1 and int(gaps[0]) > width:
        return _strided(address, active, ins, array, batch, grid, int(gaps[0]), lanes, verb)
    if len(words) < n * -(-width // BANK_BYTES):
        return (f"Lanes share words: {len(words)} distinct words for {n} lanes (each served "
                f"once, a broadcast){where}{cost}.")
    return f"{_apart(address, active)}{where}{cost}."


def _strided(address: np.ndarray, active: np.ndarray, ins: Instruction,
             array: ResolvedArray | None, batch: Batch, grid: BankGrid, gap: int, lanes: str,
             verb: str) -> str:
    """Lanes `gap` bytes apart (more than an element): a column walk of a 2-D tile or a
    stride, their banks, the cost and, in a conflict, the padding that removes it."""
    width, n = ins.width, int(active.sum())
    cost, where = _bank_cost(grid, width), _where(grid, width)
    column = _column(batch.row[0] if batch.row is not None else None,
                     batch.col[0] if batch.col is not None else None, active)
    what = "words" if width == BANK_BYTES else f"{width}-byte elements"
    if column is not None and array is not None and array.rows is not None:
        head = (f"{lanes} {verb} column {column} of a {array.rows}x{array.cols} "
                f"{array.spec.dtype or f'{width}-byte'} tile")
        if grid.wavefronts == grid.ideal and array.ld != array.cols:
            words = "" if width == BANK_BYTES else f" ({gap // BANK_BYTES} words)"
            return (f"{head}; each row is padded to {array.ld} elements{words}, so the column "
                    f"walk hits {len(_phase_banks(grid)[0])} different banks"
                    f"{' per phase' if grid.phase_lanes < WARP_SIZE else ''}{cost}.")
        head += f": the {n} {what} are {gap:,} B apart"
    else:
        head = f"{lanes} are {gap:,} B apart ({gap / BANK_BYTES:g} words)"
    padded = column is not None and array is not None and array.ld != array.cols
    pad = "" if grid.wavefronts == grid.ideal else _padding(address, active, width, gap,
                                                            column is not None, padded)
    return f"{head}{where}{cost}.{pad}"


def shared_explanations(listing: Listing, shared: SharedWarpDetail,
                        instruction: int | None = None, run: int = 0) -> tuple[str, ...]:
    """The explanation of every shared instruction in the warp of `shared`: execution `run`
    of shared instruction `instruction`, the first execution of the others; a loop whose
    executions differ in wavefronts says by how much."""
    out = []
    for k, (ins, runs, counts) in enumerate(zip(listing.shared_instructions, shared.executions,
                                                shared.wavefronts)):
        j = run if k == instruction else 0
        if not 0 <= j < len(runs):
            out.append("Not run by this warp.")
            continue
        words = explain_shared(runs[j], ins, listing.arrays.get(ins.first_array), shared.valid,
                               ("shared", k) in listing.gathers)
        if min(counts) != max(counts):
            words += (f" Over its {len(runs)} executions in this warp it takes "
                      f"{min(counts)} to {max(counts)} wavefronts.")
        out.append(words)
    return tuple(out)
