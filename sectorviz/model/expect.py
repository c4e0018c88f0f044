"""A pattern's `expect` key: the numbers its analysis must keep (for `sectorviz check`).

    "expect": {"totals": {"sectors": 262144, ...},
               "instructions": {"transposeNaive: c[col * m + row], st.global.f32 c":
                                {"sectors": 131072}, ...},
               "tolerance": 0}

`totals` names figures of the `report --json` totals (sectors, requests, ideal_sectors,
sector_bytes, ...) and of its shared totals with a `shared_` prefix (shared_wavefronts,
shared_bank_conflicts, ...); `instructions` names instructions, global or shared, each with
its figures: by the stable key `check --update` writes (a CUDA kernel's 'KERNEL: SOURCE, OP
ARRAY', no line number: see stable_keys), or by its report name ('line 16: c[...], st.f32',
as older `--update` runs wrote) while that still names it; a key whose source text was edited still
finds the one instruction of its kernel, op and array (matched). A figure holds when
|actual - expected| <= tolerance x |expected| (tolerance a fraction: 0 is exact, 0.05 five
per cent); beyond it, a Change: worse when a cost rose (or useful_fraction fell), better
otherwise, which `check` passes and `check --update` writes down.

Every expected figure is finite: a count (sectors, bytes, requests, ...) a whole number from 0
to 2^63 - 1 (an int64), a ratio (RATIO_FIGURES) a number in that range; the tolerance is from
0 to 1. Anything else (1e400, read as infinity, NaN, 1.5 sectors) is refused at its key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .elide import elided
from .errors import PatternError

GLOBAL_FIGURES = ("requests", "active_lanes", "logical_bytes", "useful_bytes", "sectors",
                  "ideal_sectors", "excess_sectors", "sectors_per_request", "useful_fraction",
                  "min", "max", "mode", "unique_sectors", "sector_size", "sector_bytes")
SHARED_FIGURES = ("requests", "active_lanes", "wavefronts", "ideal_wavefronts",
                  "bank_conflicts", "wavefronts_per_request", "min", "max", "mode")
RATIO_FIGURES = ("sectors_per_request", "useful_fraction", "wavefronts_per_request")
HIGHER_IS_BETTER = ("useful_fraction",)  # every other figure is a cost: better when it falls
MAX_FIGURE = 2**63 - 1  # an int64: no count the analysis gives is larger
MAX_TOLERANCE = 1  # a fraction of the expected figure
SHARED_PREFIX = "shared_"  # a shared total's figure in `totals`
TOTAL_FIGURES = GLOBAL_FIGURES + tuple(SHARED_PREFIX + f for f in SHARED_FIGURES)
EXPECT_KEYS = ("totals", "instructions", "tolerance")
DEFAULT_TOTALS = ("sectors", "requests")  # what --update writes into a pattern without expect
DEFAULT_GLOBAL = ("sectors",)  # ... for each global instruction
DEFAULT_SHARED = ("wavefronts",)  # ... for each shared instruction
Number = int | float
JsonObject = dict[str, Any]  # an object of a report or pattern, as json.loads gives it


@dataclass(frozen=True)
class Change:
    """One figure moved beyond the tolerance: `where` is 'totals' or the instruction's name
    in `expect`; `worse` a rise, or a fall of a figure where more is better (useful_fraction)."""

    where: str
    figure: str
    expected: Number
    actual: Number

    @property
    def up(self) -> bool:
        return self.actual > self.expected

    @property
    def worse(self) -> bool:
        return self.up != (self.figure in HIGHER_IS_BETTER)


def number_text(v: Number) -> str:
    """1179648 -> '1,179,648'; 4.5 -> '4.5'."""
    return f"{v:,}" if isinstance(v, int) else f"{v:,.6g}"


def _number(value: Any, place: str, whole: bool, top: int) -> Number:
    """`value` if it is a finite number (`whole`: a whole number) from 0 to `top`, else
    PatternError at `place` (NaN and infinities fail the range)."""
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= top
            or (whole and not float(value).is_integer())):
        kind = "a whole number" if whole else "a number"
        limit = "2^63 - 1" if top == MAX_FIGURE else str(top)
        raise PatternError(place, f"expected {kind} from 0 to {limit}, got {value!r}")
    return value


def _figure(value: Any, figure: str, place: str) -> Number:
    """An expected figure: a whole number, or for a ratio any number, from 0 to MAX_FIGURE."""
    return _number(value, place, figure not in RATIO_FIGURES, MAX_FIGURE)


def _figures(obj: Any, allowed: tuple[str, ...], place: str) -> dict[str, Number]:
    if not isinstance(obj, dict):
        raise PatternError(place, "expected an object {figure: number}")
    for key, value in obj.items():
        if key not in allowed:
            raise PatternError(f"{place}.{key}", f"unknown figure {key!r}; one of "
                                                 f"{', '.join(allowed)}")
        _figure(value, key, f"{place}.{key}")
    return obj


def check_expect(obj: Any) -> dict[str, Any]:
    """Validate an `expect` value's shape (figure names, numbers) -> it; PatternError at
    the first bad place. Which instructions exist is known only after the analysis."""
    if not isinstance(obj, dict):
        raise PatternError("expect", "expected an object {totals, instructions, tolerance}")
    for key in obj:
        if key not in EXPECT_KEYS:
            raise PatternError(f"expect.{key}", f"unknown key {key!r}; one of "
                                                f"{', '.join(EXPECT_KEYS)}")
    _figures(obj.get("totals", {}), TOTAL_FIGURES, "expect.totals")
    instructions = obj.get("instructions", {})
    if not isinstance(instructions, dict):
        raise PatternError("expect.instructions", "expected an object {name: {figure: number}}")
    every = tuple(dict.fromkeys(GLOBAL_FIGURES + SHARED_FIGURES))
    for name, figures in instructions.items():
        _figures(figures, every, f"expect.instructions.{name}")
    _number(obj.get("tolerance", 0), "expect.tolerance", False, MAX_TOLERANCE)
    return obj


def stable_keys(report: JsonObject, kernel: str | None, interpreted: bool = False
                ) -> list[str]:
    """Each instruction of a report (global, then shared) -> the name `check --update` writes:
    a CUDA kernel's 'KERNEL: SOURCE, OP ARRAY', its source text, op (its PTX instruction)
    and array, ' #2', ' #3'... on the later ones of equal keys; none depends on the line, so
    an edit above the kernel keeps them. An instruction without a line (a JSON pattern's
    access) keeps its name. `interpreted`: the keys older versions wrote for a kernel read
    as written, the op in words ('store')."""
    keys, seen = [], dict[str, int]()
    for s in (*report["instructions"], *report["shared"]):
        op = s["op"] if interpreted else s.get("ptx") or s["op"]
        key = s["name"] if s.get("line") is None else \
            f"{kernel}: {s['source']}, {op} {s['array']}"
        seen[key] = seen.get(key, 0) + 1
        keys.append(key if seen[key] == 1 else f"{key} #{seen[key]}")
    return keys


def _weak(key: str) -> str | None:
    """A stable key without its source text ('KERNEL: OP ARRAY'), what a fix of the
    expression keeps; None for a name that is not a stable key."""
    head, _, rest = key.partition(": ")
    _, comma, tail = rest.rpartition(", ")
    return f"{head}: {tail.split(' #')[0]}" if comma else None


def matched(names: list[str], report: JsonObject, kernel: str | None) -> dict[str, int]:
    """Expected instruction names -> the index (global, then shared) of the report's
    instruction each names: by stable key, else by the names an older `check --update`
    wrote (the report's name; the stable key with the op in words), else by kernel, op and
    array where exactly one unmatched instruction and one unmatched name share them (the
    source text edited). A name left out matches none."""
    keys = stable_keys(report, kernel)
    plain = [s["name"] for s in (*report["instructions"], *report["shared"])]
    found: dict[str, int] = {}
    for by in (keys, plain, stable_keys(report, kernel, interpreted=True)):
        for name in names:
            k = by.index(name) if name in by and name not in found else None
            if k is not None and k not in found.values():
                found[name] = k
    free = [k for k in range(len(keys)) if k not in found.values()]
    lone = [n for n in names if n not in found]
    for name in lone:
        same = [k for k in free if _weak(keys[k]) == _weak(name) is not None]
        if len(same) == 1 and [_weak(n) for n in lone].count(_weak(name)) == 1:
            found[name] = same[0]
    return found


def _actual(report: JsonObject) -> tuple[dict[str, Number], list[dict[str, Number]]]:
    """A report (Analysis.to_json) -> (totals by figure, with shared_ ones; each
    instruction's figures, global then shared)."""
    totals = {k: report["totals"][k] for k in GLOBAL_FIGURES}
    if report.get("shared_totals") is not None:
        totals |= {SHARED_PREFIX + k: report["shared_totals"][k] for k in SHARED_FIGURES}
    instructions = [{k: s[k] for k in GLOBAL_FIGURES} for s in report["instructions"]]
    instructions += [{k: s[k] for k in SHARED_FIGURES} for s in report["shared"]]
    return totals, instructions


def changes(expect: JsonObject, report: JsonObject, kernel: str | None) -> list[Change]:
    """Every figure of a checked `expect` that `report` (Analysis.to_json) has moved beyond
    the tolerance, up or down; PatternError for an instruction the kernel does not have (by
    `matched`) or a figure it has not."""
    totals, instructions = _actual(report)
    tolerance = expect.get("tolerance", 0)
    named = expect.get("instructions", {})
    found = matched(list(named), report, kernel)
    wanted = [("totals", totals, expect.get("totals", {}), "expect.totals")]
    for name, figures in named.items():
        place = f"expect.instructions.{elided(name)}"
        if name not in found:
            raise PatternError(place, f"the kernel has no such instruction (it has "
                                      f"{len(instructions)}; `sectorviz check --update` "
                                      f"names them)")
        wanted.append((name, instructions[found[name]], figures, place))
    out = []
    for where, actual, figures, place in wanted:
        for figure, expected in figures.items():
            if figure not in actual:
                raise PatternError(f"{place}.{figure}", f"{elided(where)} has no figure "
                                                        f"{figure!r}")
            if abs(actual[figure] - expected) > tolerance * abs(expected):
                out.append(Change(where, figure, expected, actual[figure]))
    return out


def updated_expect(expect: JsonObject | None, report: JsonObject, kernel: str | None
                   ) -> tuple[JsonObject, list[str]]:
    """`expect` with `report`'s current numbers in each figure it names, each instruction
    under its stable key (a pattern without one: the totals' sectors and requests, each
    global instruction's sectors and each shared one's wavefronts) -> (the new expect, the
    instructions it named that the kernel no longer has, left out)."""
    totals, instructions = _actual(report)
    keys = stable_keys(report, kernel)
    if expect is None:
        shared = len(report["instructions"])
        expect = {"totals": dict.fromkeys(DEFAULT_TOTALS, 0),
                  "instructions": {n: dict.fromkeys(DEFAULT_SHARED if k >= shared else
                                                    DEFAULT_GLOBAL, 0)
                                   for k, n in enumerate(keys)},
                  "tolerance": 0}
    named = expect.get("instructions", {})
    found = matched(list(named), report, kernel)
    new = dict(expect)
    if "totals" in expect:
        new["totals"] = {k: totals[k] for k in expect["totals"] if k in totals}
    if "instructions" in expect:
        new["instructions"] = {keys[found[n]]: {k: instructions[found[n]][k] for k in f
                                                if k in instructions[found[n]]}
                               for n, f in named.items() if n in found}
    return new, [n for n in named if n not in found]
