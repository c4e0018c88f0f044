"""Sweep and batch results -> one table (a header, then rows of cells), and the table as CSV,
Markdown or aligned text.

A report's figures are its numbers flattened to columns: `warps`, `totals.sectors`, an
instruction's as `NAME.sectors` (global and shared alike), a boundary's as `NAME.bytes`,
`shared_totals.wavefronts`, `cache.dram_read_bytes`; places (line, column) are not figures.
CSV cells are plain numbers (export.sheets.plain_number); a missing figure is empty. Names
and file names are escaped for each format: CSV and Markdown by export.escape, the terminal's
text by model.errors.printable (a bidi override in a file name shows as \\u202e).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from ..export.escape import csv_cell, markdown_text
from ..export.sheets import plain_number
from ..model.elide import elided
from ..model.errors import printable
from ..scene.sweep_chart import metric_series

Cell = str | int | float
PLACES = {"line", "column"}  # where an instruction is, not what it costs
PER_INSTRUCTION = ("instructions", "shared", "constant")  # lists of one entry per instruction


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]


def figures(doc: dict, skip: tuple[str, ...] = ()) -> dict[str, int | float]:
    """A report's numbers by column name (see the module docstring), leaving out the
    top-level keys in `skip`."""
    out: dict[str, int | float] = {}
    for key, value in doc.items():
        if key not in skip:
            _flatten(out, key, value)
    return out


def _flatten(out: dict[str, int | float], path: str, value: object) -> None:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return
    if isinstance(value, (int, float)):
        out[path] = value
    elif isinstance(value, dict):
        for key, v in value.items():
            if key not in PLACES:
                _flatten(out, f"{path}.{key}", v)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                for key, v in item.items():
                    if key not in PLACES:
                        _flatten(out, f"{item['name']}.{key}", v)


def _table(keys: list[str], rows: list[dict[str, Cell]]) -> Table:
    """Rows of {column: cell} -> a Table whose header is `keys` then every other column in
    the order first seen; a row without a column has an empty cell."""
    header = list(dict.fromkeys(keys + [k for r in rows for k in r]))
    return Table(tuple(header), tuple(tuple(r.get(k, "") for k in header) for r in rows))


def sweep_table(params: list[str], points: list[dict]) -> Table:
    """One row per point: its params, its error ('' when it ran) and every figure."""
    rows = [{**p["params"], "error": p.get("error", ""), **figures(p.get("report", {}))}
            for p in points]
    return _table([*params, "error"], rows)


def metric_table(params: list[str], points: list[dict], metric: str) -> Table:
    """One row per point: its params, `metric` of each line (instruction, total) and its
    error: what the terminal shows of a sweep."""
    series = metric_series(points, metric)
    rows = [{**p["params"], **{s.name: s.values[i] for s in series if s.values[i] is not None},
             "error": p.get("error", "")} for i, p in enumerate(points)]
    return _table([*params, *(s.name for s in series), "error"], rows)


def batch_table(results: list[dict], per: str) -> Table:
    """Batch results -> one row per file (per='file': its file-wide figures) or per
    instruction (file, instruction, kind global/shared, the instruction's figures); a file
    that failed is one row with its error."""
    rows: list[dict[str, Cell]] = []
    for r in results:
        if "error" in r:
            rows.append({"file": r["file"], "error": r["error"]})
        elif per == "file":
            rows.append({"file": r["file"], "error": "",
                         **figures(r["report"], skip=PER_INSTRUCTION)})
        else:
            for kind, key in (("global", "instructions"), ("shared", "shared")):
                rows += [{"file": r["file"], "instruction": ins["name"], "kind": kind,
                          "error": "", **figures(ins, skip=("name", *PLACES))}
                         for ins in r["report"][key]]
    keys = ["file", "error"] if per == "file" else ["file", "instruction", "kind", "error"]
    return _table(keys, rows)


SUMMARY = ("file", "kernel", "sectors", "ideal", "x ideal", "useful %", "worst instruction",
           "conflicts")  # the columns `batch` prints without --wide
KERNEL_WIDTH = 28  # the summary's pattern names, at most (elided in the middle)


def summary_table(results: list[dict]) -> Table:
    """Batch results -> one short row per file: the pattern's name, its sectors against the
    ideal, its useful %, its worst instruction (elided; 'none' at the ideal) and its bank
    conflicts (empty without shared memory); a file that failed is its file and its error."""
    rows: list[dict[str, Cell]] = []
    for r in results:
        if "error" in r:
            rows.append({"file": r["file"], "error": r["error"]})
            continue
        report, totals = r["report"], r["report"]["totals"]
        shared = report["shared_totals"] if report["shared"] else None
        worst = report.get("worst")
        rows.append({"file": r["file"], "kernel": elided(report["pattern"], KERNEL_WIDTH),
                     "sectors": totals["sectors"], "ideal": totals["ideal_sectors"],
                     "x ideal": totals["sectors"] / totals["ideal_sectors"]
                     if totals["ideal_sectors"] else "",
                     "useful %": 100 * totals["useful_fraction"],
                     "worst instruction": elided(worst["name"]) if worst else "none",
                     "conflicts": shared["bank_conflicts"] if shared else ""})
    return _table(list(SUMMARY), rows)


def _text(cell: Cell) -> str:
    """A cell for a reader: integers with thousands separators, floats to 4 significant
    digits, text as it is."""
    if isinstance(cell, str):
        return cell
    return f"{cell:,}" if isinstance(cell, int) else f"{cell:.4g}"


def table_csv(t: Table) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(csv_cell(h) for h in t.header)
    writer.writerows([csv_cell(c) if isinstance(c, str) else plain_number(c) for c in row]
                     for row in t.rows)
    return out.getvalue()


def table_markdown(t: Table) -> str:
    """A GitHub-flavoured Markdown table, numbers right-aligned."""
    numeric = [any(not isinstance(r[i], str) for r in t.rows) for i in range(len(t.header))]
    lines = ["| " + " | ".join(markdown_text(h) for h in t.header) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(markdown_text(_text(c)) for c in row) + " |" for row in t.rows]
    return "\n".join(lines) + "\n"


def table_text(t: Table) -> str:
    """Aligned columns for a terminal: numbers right-aligned, text left, every cell
    printable (escaped before the columns are measured)."""
    cells = [[printable(h) for h in t.header]] + [[printable(_text(c)) for c in row]
                                                   for row in t.rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(t.header))]
    numeric = [any(not isinstance(r[i], str) for r in t.rows) for i in range(len(t.header))]
    lines = ["  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(r, widths, numeric))
             .rstrip() for r in cells]
    return "\n".join(lines) + "\n"


TABLE_WRITERS = {".csv": table_csv, ".md": table_markdown}
