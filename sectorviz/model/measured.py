"""Measured counters side by side: an Nsight Compute CSV -> each boundary's predicted bytes
against what the profiler measured, with the ratio.

The CSV is what `ncu --csv --page raw --metrics M1,M2,... ./app` writes (the metric list is
`METRICS`, printed by `sectorviz ncu-metrics`): a header row of column names ("ID", "Kernel
Name", "Grid Size", "Block Size", ... then one column per metric), a units row ("" for the
identifying columns, "byte", "Kbyte", "sector", ... for the metrics), then one row per kernel
launch. Values are finite non-negative numbers and may carry thousands separators grouping by
three ("12,582,912"); a metric's column appears once; "Grid Size" and "Block Size", where
given, read "(x, y, z)" and must match the pattern's launch. Lines of ncu's own messages
("==PROF== Connected to process ...", "==WARNING== ..."), which share its standard output with
the report, are skipped. A launch is picked by kernel name (demangled, template arguments
kept: a leading "void " and the parameter list are dropped) and by its index among the
launches of that name.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

from .cache import DRAM_READ, DRAM_WRITE, L2_READ_HITS, L2_READ_MISSES, L2_READ_SECTORS
from .errors import PatternError
from .files import read_text
from .frontend import kernel_for
from .metrics import (
    ATOM_REQUESTS,
    ATOM_SECTORS,
    LOAD_REQUESTS,
    LOAD_SECTORS,
    RED_REQUESTS,
    RED_SECTORS,
    STORE_REQUESTS,
    STORE_SECTORS,
)
from .pattern import Pattern
from .results import Analysis

L2_WRITE_SECTORS = "lts__t_sectors_srcunit_tex_op_write.sum"
METRICS = (LOAD_SECTORS, STORE_SECTORS, ATOM_SECTORS, RED_SECTORS, LOAD_REQUESTS,
           STORE_REQUESTS, ATOM_REQUESTS, RED_REQUESTS, L2_READ_SECTORS, L2_WRITE_SECTORS,
           L2_READ_HITS, L2_READ_MISSES, DRAM_READ, DRAM_WRITE)
UNIT_BYTES = {"byte": 1, "Kbyte": 10**3, "Mbyte": 10**6, "Gbyte": 10**9, "Tbyte": 10**12,
              "KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
SECTOR_UNITS = {"sector": 32, "Ksector": 32 * 10**3, "Msector": 32 * 10**6}
MAX_CSV_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Measured:
    """One boundary: predicted and measured bytes, measured / predicted."""

    boundary: str
    metric: str
    predicted_bytes: int
    measured_bytes: float
    ratio: float | None  # None where nothing was predicted


@dataclass(frozen=True)
class Launch:
    """One row of the CSV: kernel name, grid and block as (x, y, z), metric -> bytes."""

    name: str
    grid: tuple[int, ...] | None
    block: tuple[int, ...] | None
    values: dict[str, float]  # in bytes: sector counts times 32


def kernel_name(text: str) -> str:
    """'void reduce<float, 256>(float*, int)' -> 'reduce<float, 256>'."""
    name = text.strip()
    if name.startswith("void "):
        name = name[5:].strip()
    depth = 0
    for i, c in enumerate(name):
        depth += (c == "<") - (c == ">")
        if c == "(" and depth == 0:
            return name[:i].strip()
    return name


_MEASUREMENT = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?\Z")
_DIMS = re.compile(r"\(?\s*(\d+)(?:\s*,\s*(\d+))?(?:\s*,\s*(\d+))?\s*\)?\Z")
QUOTED_CHARS = 40  # of a bad cell, at most this much is quoted


def _quoted(text: str) -> str:
    return repr(text if len(text) <= QUOTED_CHARS else text[:QUOTED_CHARS] + "...")


def _number(text: str, place: str) -> float:
    """A measurement cell -> its value: a finite non-negative number, commas (if any)
    grouping its digits by three; PatternError otherwise."""
    cleaned = text.strip()
    if not _MEASUREMENT.match(cleaned):
        raise PatternError(place, f"{_quoted(text)} is not a number a measurement can be "
                                  "(non-negative; commas, if any, grouping digits by three)")
    value = float(cleaned.replace(",", ""))
    if not math.isfinite(value):
        raise PatternError(place, f"{_quoted(text)} is too large to be a measurement")
    return value


def _dims(text: str | None, place: str) -> tuple[int, ...] | None:
    """'(4096, 1, 1)' -> (4096, 1, 1), missing components 1; None when absent or empty;
    PatternError for anything else (a negative or a word is no size)."""
    if text is None or not text.strip():
        return None
    found = _DIMS.match(text.strip())
    if found is None:
        raise PatternError(place, f"{_quoted(text)} is not a launch size such as (4096, 1, 1)")
    return tuple(int(g or 1) for g in found.groups())


def read_ncu_csv(path: str | Path, place: str = "--measured") -> list[Launch]:
    """An `ncu --csv --page raw` file -> its launches; PatternError ('PLACE, row R: ...')
    for a file that does not follow the format."""
    text = read_text(path, place, MAX_CSV_BYTES)
    lines = ["\n" if line.startswith("==") else line  # blank: rows keep their numbers
             for line in text.splitlines(keepends=True)]
    rows = list(csv.reader(io.StringIO("".join(lines))))
    start = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if start is None or len(rows) < start + 2:
        raise PatternError(place, "not an Nsight Compute raw CSV: no header row with "
                                  "'Kernel Name' followed by a units row")
    header, units = rows[start], rows[start + 1]
    if len(units) != len(header):
        raise PatternError(f"{place}, row {start + 2}", "the units row does not match the header")
    for column in METRICS:
        if header.count(column) > 1:
            raise PatternError(f"{place}, row {start + 1}", f"the metric {column} heads "
                                                            f"{header.count(column)} columns; "
                                                            "give it once")
    launches = []
    for r, row in enumerate(rows[start + 2:], start + 3):
        if not any(row):
            continue
        if len(row) != len(header):
            raise PatternError(f"{place}, row {r}", f"{len(row)} columns, the header has "
                                                    f"{len(header)}")
        cells = dict(zip(header, row))
        values = {}
        for column, unit, cell in zip(header, units, row):
            if column not in METRICS or cell.strip() in ("", "n/a"):
                continue
            scale = UNIT_BYTES.get(unit) or SECTOR_UNITS.get(unit)
            if scale is None and unit == "":
                scale = 1  # a count (requests)
            if scale is None:
                raise PatternError(f"{place}, row {r}", f"unknown unit {unit!r} of {column}")
            values[column] = _number(cell, f"{place}, row {r}, {column}") * scale
        launches.append(Launch(kernel_name(cells["Kernel Name"]),
                               _dims(cells.get("Grid Size"), f"{place}, row {r}, Grid Size"),
                               _dims(cells.get("Block Size"), f"{place}, row {r}, Block Size"),
                               values))
    return launches


def pick_launch(launches: list[Launch], name: str, index: int, grid: tuple[int, int, int],
                block: tuple[int, int, int], place: str = "--measured") -> Launch:
    """Launch `index` of kernel `name`; a missing name, index or a grid or block other than
    the pattern's is a one-line PatternError (at `place`, the CSV's)."""
    named = [x for x in launches if x.name == name]
    if not named:
        found = sorted({x.name for x in launches})
        raise PatternError(place, f"no launch of kernel {name!r} in the CSV (it has "
                                  f"{', '.join(map(repr, found)) or 'none'})")
    if not 0 <= index < len(named):
        raise PatternError("--launch", f"launch {index} of {name!r} outside [0, {len(named)})")
    launch = named[index]
    for what, theirs, ours in (("grid", launch.grid, grid), ("block", launch.block, block)):
        if theirs is not None and theirs != tuple(ours):
            raise PatternError(place, f"the measured launch of {name!r} has {what} {theirs}, "
                                      f"the pattern {tuple(ours)}")
    return launch


def compare(pattern: Pattern, analysis: Analysis, launches: list[Launch], name: str | None,
            index: int = 0, place: str = "--measured") -> tuple[Measured, ...]:
    """Launch `index` of kernel `name` (None: the pattern's CUDA kernel, else the CSV's only
    kernel) against the analysis' boundaries; one-line PatternError on a mismatch (at
    `place`, the CSV's)."""
    name = name or (pattern.kernel or {}).get("function")
    if name is None:
        found = sorted({x.name for x in launches})
        if len(found) != 1:
            raise PatternError(place, f"the CSV holds kernels "
                                      f"{', '.join(map(repr, found)) or 'none'}; "
                                      f"a pattern without a CUDA kernel must name one "
                                      f"(report --kernel NAME)")
        name = found[0]
    kernel = kernel_for(pattern)
    return side_by_side(analysis, pick_launch(launches, kernel_name(name), index, kernel.grid,
                                              kernel.block, place))


def side_by_side(analysis: Analysis, launch: Launch) -> tuple[Measured, ...]:
    """Each boundary whose metric (a sum of metrics) the launch measured -> predicted
    against measured bytes."""
    out = []
    for b in analysis.boundaries:
        names = [m.strip() for m in b.metric.split("+")]
        if not all(m in launch.values for m in names):
            continue
        got = sum(launch.values[m] for m in names)
        out.append(Measured(b.name, b.metric, b.bytes, got, got / b.bytes if b.bytes else None))
    return tuple(out)
