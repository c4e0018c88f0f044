"""Nsight Compute's source page, one row per SASS instruction, against sectorviz's prediction
of the same instruction, counted in SASS and in PTX, side by side.

The page comes from a report profiled with the SourceCounters section (validation/run.sh):

    ncu --section SourceCounters --kernel-name-base function --kernel-name FUNCTION \
        --launch-count 1 --force-overwrite -o REP APP ARGS
    ncu --import REP.ncu-rep --csv --page source --print-source sass > PATTERN.source.csv

(`--page source`, `--print-source sass|ptx|cuda|cuda,sass`, `--csv`: the Nsight Compute CLI's
console-output options, https://docs.nvidia.com/nsight-compute/NsightComputeCli/; not checked
here against an ncu, which this machine lacks: the command line is the one public scripts that
parse these pages run). The CSV holds, per profiled kernel, a "Kernel Name" line, a header
line, then one line per SASS instruction (the layout of exported pages those scripts show,
not stated in NVIDIA's guides, hence the plain reading below). Its columns are the Source
page's metrics as the Nsight Compute UI guide names them ("Source Page", "Pre-Defined Source
Metrics" and its table "Information on Memory Operations",
https://docs.nvidia.com/nsight-compute/NsightCompute/index.html#profiler-report-source-page):
`Address` (the instruction's address: its offset is that minus the kernel's first address),
`Source` (the SASS text), `Instructions Executed` (executions per warp, whatever the lanes'
predicates), `L2 Theoretical Sectors Global` (memory_l2_theoretical_sectors_global),
`L1 Wavefronts Shared` (memory_l1_wavefronts_shared), `L2 Theoretical Sectors Local`
(memory_l2_theoretical_sectors_local). A header may carry the metric name instead of the
label (`--print-metric-name name`) or the name before Nsight Compute 2021.2 (the guide's
table of renamed metrics); each column is found by any of those.

Paired by offset with `sectorviz report --json --level sass` (each instruction's
`sass_offset`): global loads and stores as requests (against Instructions Executed) and
sectors, shared ones as requests and wavefronts, local ones as requests and sectors; the ratio
is measured / predicted. Beside it, the PTX reading of the same access (its source line,
expression and PTX operation): per instruction where ptxas kept one SASS instruction per PTX
one, else as the access's totals (merged, unrolled or split by ptxas).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

from sectorviz.engine.ptx.sass_code import SASS_SPACES, SassOp
from sectorviz.model.measured import kernel_name

# what is read -> the headers that may name it: the UI guide's label, the metric's name, and
# its name before 2021.2, as the guide lists them
COLUMNS = {
    "address": ("Address",),
    "source": ("Source",),
    "executed": ("Instructions Executed",),
    "global sectors": ("L2 Theoretical Sectors Global", "memory_l2_theoretical_sectors_global",
                       "memory_l2_sectors_global"),
    "shared wavefronts": ("L1 Wavefronts Shared", "memory_l1_wavefronts_shared",
                          "memory_l1_sectors_shared"),
    "local sectors": ("L2 Theoretical Sectors Local", "memory_l2_theoretical_sectors_local",
                      "memory_l2_sectors_local"),
}
# report --json's list of a space -> (the figure predicted besides requests, its column)
SPACES = {
    "instructions": ("sectors", "global sectors"),
    "shared": ("wavefronts", "shared wavefronts"),
    "local": ("sectors", "local sectors"),
}
EXPORT = "ncu --import REP.ncu-rep --csv --page source --print-source sass"


class SourcePageError(ValueError):
    """A source page that cannot be read: one line saying why."""


class SourceRow(NamedTuple):
    """One SASS instruction of the page."""

    offset: int  # bytes from the kernel's first instruction
    opcode: str  # with its modifiers, without predicate and operands: "LDG.E.CONSTANT"
    counts: dict[str, float]  # COLUMNS key -> value, for the counted columns the page has


class Predicted(NamedTuple):
    """One instruction of `report --json`, with the figures the page measures."""

    access: tuple  # (list, line, column, source, op, array, ptx, file): one access's copies
    label: str  # "line 21: a[i]"
    sass: str | None  # "LDG.E", None counted in PTX
    offset: int | None
    requests: int
    figure: str  # "sectors" | "wavefronts"
    column: str  # the COLUMNS key measuring `figure`
    amount: int


def sass_opcode(text: str) -> str:
    """'@!P0 LDG.E.CONSTANT R3, desc[UR4][R2.64] ;' -> 'LDG.E.CONSTANT'."""
    words = text.replace(";", " ").split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else ""


def _index(header: list[str], key: str) -> int | None:
    """The first column of `header` named as COLUMNS[key] says, or None."""
    names = [cell.strip() for cell in header]
    return next((names.index(n) for n in COLUMNS[key] if n in names), None)


def _missing(path: Path, key: str) -> SourcePageError:
    first, *others = COLUMNS[key]
    also = f" (nor {', '.join(others)})" if others else ""
    return SourcePageError(f"{path.name}: no column {first!r}{also} in the source page's header;"
                           f" it needs the SourceCounters section and `{EXPORT}`")


def _count(cell: str, path: Path, offset: int) -> float:
    """A counter cell -> its value ('-': not applicable, 0; commas may group digits)."""
    text = cell.strip()
    if text in ("", "-"):
        return 0.0
    try:
        return float(text.replace(",", ""))
    except ValueError:
        raise SourcePageError(f"{path.name}: {text!r} at offset {offset:#06x} is no count") \
            from None


def _address(cell: str, path: Path) -> int:
    """An Address cell ('0x7fc48541d900') -> the address."""
    try:
        return int(cell.strip(), 16)
    except ValueError:
        raise SourcePageError(f"{path.name}: {cell.strip()!r} is no instruction address") \
            from None


def _kernels(path: Path) -> list[tuple[str | None, list[str], list[list[str]]]]:
    """The page's kernels: (Kernel Name or None, header, instruction lines)."""
    out: list[tuple[str | None, list[str], list[list[str]]]] = []
    name: str | None = None
    with path.open(newline="", encoding="utf-8-sig") as f:
        for row in csv.reader(f):
            if not any(cell.strip() for cell in row):
                continue
            if row[0].strip() == "Kernel Name":
                name = row[1].strip() if len(row) > 1 else ""
            elif _index(row, "address") is not None and _index(row, "source") is not None:
                out.append((name, row, []))
                name = None
            elif out:
                out[-1][2].append(row)
    return out


def read_source_page(path: Path, function: str, needed: set[str]) -> list[SourceRow]:
    """The SASS instructions of the first kernel of the page named `function` (template
    arguments aside; a page of one unnamed kernel is taken as it), with the counted columns
    `needed` (COLUMNS keys) that must be there and those of the rest the page has."""
    kernels = _kernels(path)
    if not kernels:
        raise SourcePageError(f"{path.name}: no header with Address and Source: not `{EXPORT}`")
    chosen = next((k for k in kernels if k[0] is not None
                   and kernel_name(k[0]).split("<")[0] == function), None)
    if chosen is None and len(kernels) == 1 and kernels[0][0] is None:
        chosen = kernels[0]
    if chosen is None:
        names = ", ".join(repr(k[0]) for k in kernels)
        raise SourcePageError(f"{path.name}: no kernel {function!r} in the page (it has {names})")
    _, header, lines = chosen
    counted = {key: _index(header, key) for key in ("executed", *(c for _, c in SPACES.values()))}
    for key in ("executed", *needed):
        if counted[key] is None:
            raise _missing(path, key)
    at, text = _index(header, "address"), _index(header, "source")
    assert at is not None and text is not None  # a header has both (_kernels)
    rows: list[SourceRow] = []
    base: int | None = None
    for line in lines:
        line = line + [""] * (len(header) - len(line))  # a short line's missing cells: empty
        address = _address(line[at], path)
        base = address if base is None else base
        offset = address - base
        rows.append(SourceRow(offset, sass_opcode(line[text]),
                              {k: _count(line[i], path, offset) for k, i in counted.items()
                               if i is not None}))
    return rows


def predictions(report: dict) -> list[Predicted]:
    """`report --json`'s global, shared and local instructions, in that order."""
    out = []
    for space, (figure, column) in SPACES.items():
        for ins in report.get(space, []):
            access = (space, ins["line"], ins["column"], ins["source"], ins["op"],
                      ins["array"], ins["ptx"], ins["file"])
            label = f"line {ins['line']}: {ins['source']}" if ins["line"] else ins["name"]
            out.append(Predicted(access, label, ins.get("sass"), ins.get("sass_offset"),
                                 ins["requests"], figure, column, ins[figure]))
    return out


def _number(value: float) -> str:
    return f"{value:,.0f}" if value == int(value) else f"{value:,.1f}"


def _ratio(measured: float | None, predicted: int | None) -> str:
    return "-" if measured is None or not predicted else f"{measured / predicted:.3f}"


ROW = "  {:>6}  {:<12} {:<10} {:>12} {:>12} {:>6}   {:>12} {:>6}  {}"


def _measures(p: Predicted) -> tuple[tuple[str, str, int], tuple[str, str, int]]:
    """(metric, column, predicted) for requests and for the instruction's figure."""
    return ("requests", "executed", p.requests), (p.figure, p.column, p.amount)


def instruction_lines(sass_report: dict, ptx_report: dict, rows: list[SourceRow]) -> list[str]:
    """The comparison, one line per measured figure of each predicted SASS instruction (in
    code order), then the accesses whose PTX reading has another number of instructions (their
    totals), then the page's memory instructions nothing was predicted at."""
    if sass_report.get("level") != "sass":
        return [f"  counted in PTX only ({sass_report.get('compiler')}): no SASS offsets to "
                "pair with the source page"]
    sass = sorted((p for p in predictions(sass_report) if p.offset is not None),
                  key=lambda p: p.offset or 0)
    ptx_of: dict[tuple, list[Predicted]] = defaultdict(list)
    for p in predictions(ptx_report):
        ptx_of[p.access].append(p)
    sass_of: dict[tuple, list[Predicted]] = defaultdict(list)
    for p in sass:
        sass_of[p.access].append(p)
    by_offset: dict[int | None, SourceRow] = {r.offset: r for r in rows}
    out = [ROW.format("offset", "SASS", "metric", "SASS pred.", "measured", "ratio",
                      "PTX pred.", "ratio", "access")]
    for p in sass:
        row = by_offset.get(p.offset)
        copies, ptx = sass_of[p.access], ptx_of.get(p.access, [])
        twin = ptx[copies.index(p)] if len(ptx) == len(copies) else None
        for k, (metric, column, predicted) in enumerate(_measures(p)):
            measured = row.counts.get(column) if row else None
            ptx_value = _measures(twin)[k][2] if twin else None
            out.append(ROW.format(
                f"{p.offset:#06x}" if k == 0 else "", p.sass if k == 0 else "", metric,
                _number(predicted), "-" if measured is None else _number(measured),
                _ratio(measured, predicted), "-" if ptx_value is None else _number(ptx_value),
                _ratio(measured, ptx_value), p.label if k == 0 else "").rstrip())
        if row is None:
            out.append(f"          not in the source page: no instruction at {p.offset:#06x}")
        elif SassOp(0, row.opcode, 0).shown != p.sass:
            out.append(f"          the page has {row.opcode} at {p.offset:#06x}: the profiled "
                       "build is not the one predicted (arch, nvcc version)")
    out += _access_totals(sass_of, ptx_of, by_offset)
    predicted_at = {p.offset for p in sass}
    for r in rows:
        if r.offset not in predicted_at and r.opcode.split(".")[0] in SASS_SPACES:
            counts = ", ".join(f"{_number(v)} {k}" for k, v in r.counts.items() if v)
            out.append(f"  {r.offset:#06x}  {r.opcode}: predicted nowhere; measured "
                       f"{counts or 'nothing'}")
    return out


def _access_totals(sass_of: dict[tuple, list[Predicted]], ptx_of: dict[tuple, list[Predicted]],
                   by_offset: dict[int | None, SourceRow]) -> list[str]:
    """Per access counted in a different number of SASS and PTX instructions: its totals,
    measured over its SASS instructions, against both readings."""
    out = []
    for access, copies in sass_of.items():
        ptx = ptx_of.get(access, [])
        if len(ptx) == len(copies):
            continue
        first = copies[0]
        out.append(f"  {first.label} ({access[6]}): {len(copies)} SASS instructions, "
                   f"{len(ptx)} PTX")
        for k, (metric, column, _) in enumerate(_measures(first)):
            sass_total = sum(_measures(c)[k][2] for c in copies)
            ptx_total = sum(_measures(c)[k][2] for c in ptx)
            found = [by_offset[c.offset].counts.get(column) for c in copies
                     if c.offset in by_offset]
            measured = sum(v for v in found if v is not None) if found else None
            out.append(f"    {metric}: SASS {_number(sass_total)}, PTX {_number(ptx_total)}, "
                       f"measured {'-' if measured is None else _number(measured)}: ratio "
                       f"{_ratio(measured, sass_total)} (SASS), {_ratio(measured, ptx_total)} "
                       "(PTX)")
    return out
