"""The accounting sheet as rows of text: Analysis -> table cells, units spelled out."""

from __future__ import annotations

from .analysis import Analysis, ConstantStats, Stats

COLUMNS = ("instruction", "op", "width B", "requests", "logical B", "sectors", "sector B",
           "ideal", "excess", "sectors/req", "min", "max", "mode", "useful %")


OP_WORDS = {"load": "load", "store": "store",
            "atom": "atomic read-modify-write whose old value is used",
            "red": "atomic reduction whose old value is discarded"}


def op_words(op: str) -> str:
    """An instruction's op ("load", "store", "atom", "red") in words."""
    return OP_WORDS.get(op, op)


CONSTANT_NOTE = ("__constant__ reads, through the constant cache: a request takes one pass per "
                 "distinct address; no global sectors")


def per_request(c: ConstantStats) -> float:
    """Distinct addresses per request of a __constant__ read (passes it serializes)."""
    return c.distinct_addresses / c.requests if c.requests else 0.0


def constant_summary(c: ConstantStats) -> str:
    return (f"{c.distinct_addresses:,} distinct addresses in {c.requests:,} requests "
            f"({per_request(c):.2f} per request)")


def readable_bytes(n: int) -> str:
    """Bytes -> '12 MiB', '1.5 KiB', '384 B' (binary units)."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.2f} {unit}"
    return f"{n} B"


def _cells(name: str, op: str, width: str, s: Stats) -> list[str]:
    return [name, op, width, f"{s.requests:,}", f"{s.logical_bytes:,}", f"{s.sectors:,}",
            f"{s.sectors * s.sector_bytes:,}", f"{s.ideal_sectors:,}", f"{s.excess_sectors:,}",
            f"{s.sectors_per_request:.2f}", str(s.min), str(s.max), str(s.mode),
            f"{100 * s.useful_fraction:.1f}"]


def sheet_rows(analysis: Analysis) -> list[list[str]]:
    """Header, one row per instruction, then the totals row."""
    rows = [list(COLUMNS)]
    rows += [_cells(s.name, s.op, str(s.width), s) for s in analysis.instructions]
    rows.append(_cells("total", "", "", analysis.totals))
    return rows


def aligned_table(rows: list[list[str]]) -> str:
    """Rows of cells -> a plain-text table, text left-aligned, numbers right-aligned."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]

    def fmt(row):
        return "  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()
    return "\n".join(fmt(r) for r in rows)


def report_text(analysis: Analysis) -> str:
    """The accounting sheet of `sectorviz report`: table, totals in units, named boundaries."""
    t = analysis.totals
    lines = [
        f"{analysis.pattern_name}: {analysis.threads:,} threads in {analysis.warps:,} warps, "
        f"{analysis.sector_bytes}-byte sectors",
        "",
        aligned_table(sheet_rows(analysis)),
        *[f"  {op}: {op_words(op)}" for op in ("atom", "red")
          if any(s.op == op for s in analysis.instructions)],
        "",
        f"logical bytes {readable_bytes(t.logical_bytes)}; sector demand "
        f"{readable_bytes(t.sectors * t.sector_bytes)} ({t.sectors:,} sectors); "
        f"useful {100 * t.useful_fraction:.1f}%; unique sectors {t.unique_sectors:,}",
        "",
        "Traffic at named boundaries (request-side demand is not a DRAM measurement):",
    ]
    for b in analysis.boundaries:
        lines.append(f"  {b.name}: {readable_bytes(b.bytes)} ({b.sectors:,} sectors)")
        lines.append(f"      assumes {b.assumption}")
        lines.append(f"      measured by {b.metric}")
    if analysis.constant:
        lines += ["", f"Constant cache: {CONSTANT_NOTE}"]
        lines.append(aligned_table([["instruction", "array", "requests", "distinct addresses",
                                     "per request"]] + [
            [c.instruction, c.name, f"{c.requests:,}", f"{c.distinct_addresses:,}",
             f"{per_request(c):.2f}"] for c in analysis.constant]))
    return "\n".join(lines)
