"""What the compiler changed: a CUDA kernel pattern read by both engines (compiled: the PTX
nvcc emits; source: the source as written), its global memory instructions matched by source
line, operation and array, each difference named and sized in requests and sectors.

Matching: the instructions of each engine are summed per (file, line, op, array); a group only
one engine has is matched to the other engine's unmatched group of the same file, op and array
at the nearest line (a hoisted load carries the line before its loop). A matched pair whose
logical bytes (active lanes x width) are fewer compiled is "hoisted" (a load kept in a
register) or "sunk" (a store kept in a register until after its loop), unless its requests
are wider: "vector" (the reading as written keeps a line's repeated loads, so their bytes may
be fewer too); equal lanes grouped into other requests is "unrolled remainder"; more bytes is
"more". A written load the compiled code lacks is "forwarded", a written store it
lacks "removed store", a compiled access the source lacks "added"; local loads and stores of a
line (per-thread arrays the compiler put in local memory) are "local memory". Each change
names the compiled global instructions whose explanation says it (those of its group, else
those of its line). Requests are warp executions with an active lane; sectors as the analysis
counts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from .analysis import analyzed
from .budget import Budget, default_work
from .errors import PatternError
from .frontend import counted_reading, kernel_for, read_as, reading_of
from .kernel import InstructionNamed
from .local_stats import LocalInstructionStats
from .memo import MEMO
from .pattern import Pattern, with_kernel
from .ptxas_changes import ptxas_changes
from .python_kernel import python_language
from .results import Analysis, InstructionStats
from .values import Change, CompilerChanges

KIND = "compiler changes"  # their memo kind
WRITTEN_SHARE = 4  # the reading as written spends at most 1/4 of the default work budget: the
# compiled reading is the report, the comparison a note that gives up rather than wait
#: (file, line, op, array): where both engines' instructions meet
Key = tuple[str | None, int | None, str, str]


@dataclass(frozen=True)
class Counts:
    """One engine's instructions of a group, summed: requests, sectors, logical bytes, the
    widest width (B per lane), the source texts and PTX operations, the instruction indices."""

    requests: int
    sectors: int
    logical_bytes: int
    width: int
    sources: tuple[str, ...]
    ptx: tuple[str, ...]
    indices: tuple[int, ...]


#: the analysis as written, or why it could not be counted ("as written it could not ...")
Written = Analysis | str


def compiler_changes(pattern: Pattern, compiled: Analysis | None = None,
                     written: Callable[[], Written | None] | None = None
                     ) -> CompilerChanges | None:
    """A kernel pattern read by the compiled engine -> what the compiler changed against the
    source as written (None for any other reading, and for a PTX file or a kernel written in
    Python: no source is read as written); `compiled` is the pattern's analysis when the
    caller has it, and `written` gives its reading as written (written_reading) when the
    caller has that worked out elsewhere (None from it: read it here), asked for after what
    ptxas changed is found. Cached in the one cache while the files both engines read are
    unchanged."""
    if not compared(pattern):
        return None
    return MEMO.get(KIND, read_as(pattern),
                    lambda: _changes(pattern, compiled or analyzed(pattern), written))


def compared(pattern: Pattern) -> bool:
    """Whether the pattern's reading is compared with the source as written: a CUDA kernel
    read by the compiled engine."""
    reading = reading_of(pattern)
    return not (reading is None or reading.engine != "compiled" or
                "ptx" in (pattern.kernel or {}) or python_language(pattern.kernel) is not None)


def written_reading(pattern: Pattern) -> Written:
    """The pattern's kernel read as written (the source engine: its -G compile), within its
    share of the work budget, or the line saying why it could not be counted."""
    source = with_kernel(pattern, "kernel.engine", engine="source")
    try:
        return analyzed(source, budget=Budget(work=default_work() // WRITTEN_SHARE))
    except PatternError as err:
        return f"as written it could not be counted: {err.message}"
    except MemoryError:  # the compiled reading stands on its own
        return "as written it could not be counted: out of memory"


def cached_compiler_changes(pattern: Pattern) -> CompilerChanges | None:
    """The changes `compiler_changes` has cached for `pattern` (still valid), else None:
    computes nothing (the app's sheet, while its runner computes them off the UI thread)."""
    value: CompilerChanges | None = MEMO.peek(KIND, read_as(pattern))
    return value


def _changes(pattern: Pattern, compiled: Analysis,
             written: Callable[[], Written | None] | None) -> CompilerChanges:
    by_ptxas = _by_ptxas(pattern, compiled)
    found = written() if written is not None else None
    if found is None:
        found = written_reading(pattern)
    if isinstance(found, str):
        return CompilerChanges(by_ptxas, found)
    return CompilerChanges(_in_order([*diff(found, compiled), *by_ptxas]))


def _by_ptxas(pattern: Pattern, compiled: Analysis) -> tuple[Change, ...]:
    """What ptxas changed (ptxas_changes.py) where the kernel is counted in SASS: against
    the PTX reading, run within the same share of the budget as the reading as written."""
    reading = reading_of(pattern)
    if reading is None or counted_reading(reading, kernel_for(pattern)).level != "sass":
        return ()  # a kernel holding wmma is counted in PTX: ptxas changed nothing counted
    try:
        ptx = analyzed(with_kernel(pattern, "kernel.level", level="ptx"),
                       budget=Budget(work=default_work() // WRITTEN_SHARE))
    except (PatternError, MemoryError):  # the SASS reading stands on its own
        return ()
    return _in_order(ptxas_changes(ptx, compiled))


def _in_order(changes: Iterable[Change]) -> tuple[Change, ...]:
    return tuple(sorted(changes, key=lambda ch: (ch.file or "", ch.line or 0, ch.op)))


def diff(written: Analysis, compiled: Analysis) -> tuple[Change, ...]:
    """The changes from the analysis as written to the compiled one, by source line."""
    w, c = groups(written.instructions), groups(compiled.instructions)
    pairs = _pairs(w, c)
    changes = [ch for wk, ck in pairs
               if (ch := _change(wk, w.get(wk) if wk else None, ck, c.get(ck) if ck else None,
                                 c)) is not None]
    changes += _local(written.local, compiled.local, c)
    return _in_order(changes)


def _key(s: InstructionNamed) -> Key:
    return s.file, s.line, "atom" if s.op == "red" else s.op, s.array


def groups(stats: Sequence[InstructionStats]) -> dict[Key, Counts]:
    """Instructions -> their Counts per (file, line, op, array), in program order."""
    members: dict[Key, list[int]] = {}
    for k, s in enumerate(stats):
        members.setdefault(_key(s), []).append(k)
    return {key: _counts([stats[k] for k in ks], ks) for key, ks in members.items()}


def _counts(stats: Sequence[InstructionStats], indices: Sequence[int]) -> Counts:
    return Counts(sum(s.requests for s in stats), sum(s.sectors for s in stats),
                  sum(s.logical_bytes for s in stats), max(s.width for s in stats),
                  tuple(dict.fromkeys(s.source or s.array for s in stats)),
                  tuple(dict.fromkeys(s.ptx for s in stats if s.ptx)), tuple(indices))


def _pairs(w: dict[Key, Counts], c: dict[Key, Counts]
           ) -> list[tuple[Key | None, Key | None]]:
    """Matched (written, compiled) keys: the same key, else the nearest line of the same file,
    op and array; a key either side lacks pairs with None."""
    pairs: list[tuple[Key | None, Key | None]] = [(k, k) for k in w if k in c]
    left = [k for k in c if k not in w]
    for k in (k for k in w if k not in c):
        near = [o for o in left if (o[0], o[2], o[3]) == (k[0], k[2], k[3])]
        if near:
            best = min(near, key=lambda o: abs((o[1] or 0) - (k[1] or 0)))
            left.remove(best)
            pairs.append((k, best))
        else:
            pairs.append((k, None))
    return pairs + [(None, k) for k in left]


def _on_line(c: dict[Key, Counts], file: str | None, line: int | None) -> tuple[int, ...]:
    return tuple(sorted(k for key, n in c.items() if key[:2] == (file, line)
                        for k in n.indices))


def _quoted(texts: Iterable[str]) -> str:
    return ", ".join(f"`{t}`" for t in texts)


def _n(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _sector_words(ds: int) -> str:
    return "the same sectors" if ds == 0 else _n(abs(ds), "sector") + (" fewer" if ds > 0
                                                                      else " more")


def _figures(noun: str, w: tuple[int, int], c: tuple[int, int]) -> str:
    """'8,064 loads fewer than as written (128 instead of 8,192; 32,256 sectors fewer)'."""
    dr, ds = w[0] - c[0], w[1] - c[1]
    if dr == 0:
        return (f"{_n(c[0], noun)} either way, {_sector_words(ds)} than as written ({c[1]:,} "
                f"instead of {w[1]:,})")
    return (f"{_n(abs(dr), noun)} {'fewer' if dr > 0 else 'more'} than as written ({c[0]:,} "
            f"instead of {w[0]:,}; {_sector_words(ds)})")


def _change(wk: Key | None, w: Counts | None, ck: Key | None, c: Counts | None,
            compiled: dict[Key, Counts]) -> Change | None:
    """The change of one matched pair (None: the same requests and sectors)."""
    key = wk or ck
    assert key is not None
    file, line, op, array = key
    noun = {"load": "load", "store": "store"}.get(op, "atomic")
    wf = (w.requests, w.sectors) if w else (0, 0)
    cf = (c.requests, c.sectors) if c else (0, 0)
    if wf == cf and (w is None) == (c is None):
        return None
    moved = ck[1] if ck is not None and wk is not None and ck[1] != wk[1] else None
    kind, words = _kind(noun, array, w, c, moved, wf, cf)
    at = c.indices if c is not None else _on_line(compiled, file, line)
    source = ", ".join(w.sources if w else c.sources if c else ())
    return Change(kind, file, line, op, array, source, wf, cf, ck[1] if ck else None, at,
                  words)


def _kind(noun: str, array: str, w: Counts | None, c: Counts | None, moved: int | None,
          wf: tuple[int, int], cf: tuple[int, int]) -> tuple[str, str]:
    """(kind, sentence) of a pair whose figures differ."""
    figures = _figures(noun, wf, cf)
    if c is None:
        assert w is not None
        if noun == "load":
            return "forwarded", (f"the compiler kept {_quoted(w.sources)} in a register (the "
                                 f"value an earlier load or store of it left): {figures}")
        return ("removed store", f"the compiler dropped the {noun} to {_quoted(w.sources)} (a "
                                 f"later store to it replaces the value): {figures}")
    if w is None:
        return "added", (f"the compiled code has {_quoted(c.ptx)} of `{array}` here, "
                         f"which the source as written does not: {figures}")
    where = f", {noun}ed at line {moved}" if moved is not None else ""
    ptx = _quoted(c.ptx)
    if c.width > w.width:  # before the bytes: as written, repeated loads are not merged
        return "vector", (f"the compiler merged {_quoted(w.sources)} into {ptx} ({c.width} B "
                          f"per lane): {figures}")
    if c.logical_bytes < w.logical_bytes:
        if noun == "store":
            return "sunk", (f"the compiler kept {_quoted(w.sources)} in a register and stores "
                            f"it after its loop{where}: {figures}")
        return "hoisted", (f"the compiler kept {_quoted(w.sources)} in a register{where} "
                           f"(hoisted out of its loop): {figures}")
    if c.logical_bytes > w.logical_bytes:
        return "more", f"the compiled code ({ptx}) runs {_quoted(w.sources)} more often: {figures}"
    return "unrolled remainder", (
        f"the compiler unrolled the loop of {_quoted(w.sources)} (a remainder loop runs the last "
        f"iterations), so lanes group into requests differently: {figures}")


def _local(written: Sequence[LocalInstructionStats], compiled: Sequence[LocalInstructionStats],
           c: dict[Key, Counts]) -> list[Change]:
    """Per line, local traffic the compiled code has beyond what the source as written has."""
    def by_line(stats: Sequence[LocalInstructionStats]
                ) -> dict[tuple[str | None, int | None], list[LocalInstructionStats]]:
        out: dict[tuple[str | None, int | None], list[LocalInstructionStats]] = {}
        for s in stats:
            out.setdefault((s.file, s.line), []).append(s)
        return out

    w, out = by_line(written), []
    for (file, line), stats in by_line(compiled).items():
        mine = w.get((file, line), [])
        cf = (sum(s.requests for s in stats), sum(s.sectors for s in stats))
        wf = (sum(s.requests for s in mine), sum(s.sectors for s in mine))
        if cf[0] <= wf[0] and cf[1] <= wf[1]:
            continue
        ops = _quoted(dict.fromkeys(s.ptx or s.op for s in stats))
        text = stats[0].source or ""
        words = (f"the compiler keeps a per-thread array of this line in local memory ({ops}): "
                 f"{cf[0] - wf[0]:,} local requests and {cf[1] - wf[1]:,} sectors of local "
                 f"traffic more than as written")
        out.append(Change("local memory", file, line, "local", "", text, wf, cf, line,
                          _on_line(c, file, line), words))
    return out
