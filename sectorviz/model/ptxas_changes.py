"""What ptxas changed: a compiled kernel counted in SASS (model.ptx.sass_reading) against the
same kernel counted in PTX, per source line and operation, in words and numbers: accesses it
merged into wider ones (a line whose SASS has an access wider than its PTX one and fewer
requests) and the registers it spilled (the SASS reading's spill rows). A change's "written"
figures are the PTX reading's, its "compiled" ones the SASS reading's: (requests, sectors)
for global and local memory, (requests, wavefronts) for shared memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .kernel import InstructionNamed
from .local_stats import LocalInstructionStats
from .results import Analysis
from .values import Change

_TYPE = re.compile(r"^[bsuf](\d+)$")
Key = tuple[str | None, int | None, str]  # (file, line, op)

SPILL_ARRAY = "local (spills)"  # the array the SASS reading's spill rows name


@dataclass(frozen=True)
class LineSums:
    """One reading's rows of a (file, line, op): requests, sectors or wavefronts, the
    row indices, and the rows."""

    requests: int
    second: int
    indices: tuple[int, ...]
    rows: tuple[InstructionNamed, ...]


MATRIX_ROW_BYTES = 16  # an ldmatrix / stmatrix lane's row: eight b16


def ptx_width(ptx: str | None) -> int:
    """Bytes per lane of a PTX memory operation (`ld.shared.v2.f32` -> 8, an ldmatrix's
    16-byte row); 0 if unknown (a cp.async's size is an operand)."""
    if not ptx or ptx.startswith("cp."):
        return 0
    parts = ptx.split()[0].split(".")
    if parts[0] in ("ldmatrix", "stmatrix"):
        return MATRIX_ROW_BYTES
    bits = next((int(m.group(1)) for p in reversed(parts) if (m := _TYPE.match(p))), 0)
    vector = next((int(p[1:]) for p in parts if p in ("v2", "v4", "v8")), 1)
    return bits // 8 * vector


def _sums(rows: Sequence[InstructionNamed], requests: Sequence[int], second: Sequence[int]
          ) -> dict[Key, LineSums]:
    """A reading's rows (with their requests and sectors or wavefronts) -> LineSums per key."""
    members: dict[Key, list[int]] = {}
    for k, row in enumerate(rows):
        members.setdefault((row.file, row.line, row.op), []).append(k)
    return {key: LineSums(sum(requests[k] for k in ks), sum(second[k] for k in ks),
                          tuple(ks), tuple(rows[k] for k in ks))
            for key, ks in members.items()}


def _merged(ptx: dict[Key, LineSums], sass: dict[Key, LineSums], unit: str,
            explained: bool) -> list[Change]:
    """The lines where a SASS access is wider than its PTX one and the requests fell."""
    out = []
    for key, after in sass.items():
        before = ptx.get(key)
        wide = max(after.rows, key=_widening)
        factor = _widening(wide)
        if before is None or factor < 2 or after.requests >= before.requests:
            continue
        file, line, op = key
        array = wide.array
        noun = {"load": "load", "store": "store"}.get(op, "access")
        fewer = before.requests - after.requests
        second = before.second - after.second
        seconds = (f"the same {unit}" if second == 0 else
                   f"{abs(second):,} {unit} {'fewer' if second > 0 else 'more'}")
        words = (f"ptxas merged {factor} {noun}s of {array} into one {wide.width * 8}-bit "
                 f"{noun} ({wide.sass}): {fewer:,} requests fewer ({after.requests:,} instead "
                 f"of {before.requests:,}; {seconds})")
        out.append(Change("ptxas merged", file, line, op, array, wide.source or "",
                          (before.requests, before.second), (after.requests, after.second),
                          line, after.indices if explained else (), words))
    return out


def _widening(row: InstructionNamed) -> int:
    """How many times wider a SASS access is than its PTX one (1 where the PTX width is not
    known)."""
    ptx = ptx_width(row.ptx)
    return row.width // ptx if ptx else 1


def _spilled(local: Sequence[LocalInstructionStats]) -> list[Change]:
    """The registers ptxas spilled: its spill rows, counted once for the kernel."""
    spills = [s for s in local if s.array == SPILL_ARRAY]
    if not spills:
        return []
    requests, sectors = sum(s.requests for s in spills), sum(s.sectors for s in spills)
    words = (f"ptxas spilled registers: {len(spills):,} local instruction"
             f"{'' if len(spills) == 1 else 's'}, {sectors:,} sectors ({requests:,} requests) "
             "the PTX does not have")
    first = spills[0]
    return [Change("ptxas spilled", first.file, first.line, "local", SPILL_ARRAY, "",
                   (0, 0), (requests, sectors), first.line, (), words)]


def _global(run: Analysis) -> dict[Key, LineSums]:
    rows = run.instructions
    return _sums(rows, [r.requests for r in rows], [r.sectors for r in rows])


def _shared(run: Analysis) -> dict[Key, LineSums]:
    rows = run.shared
    return _sums(rows, [r.requests for r in rows], [r.wavefronts for r in rows])


def ptxas_changes(ptx: Analysis, sass: Analysis) -> list[Change]:
    """The changes from a kernel's PTX reading to its SASS reading, by source line."""
    return _merged(_global(ptx), _global(sass), "sectors", True) + \
        _merged(_shared(ptx), _shared(sass), "wavefronts", False) + _spilled(sass.local)
