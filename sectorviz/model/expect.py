"""A pattern's `expect` key: the numbers its analysis must keep (for `sectorviz check`).

    "expect": {"totals": {"sectors": 262144, ...},
               "instructions": {"line 32: c[y * m + x]": {"sectors": 131072}, ...},
               "tolerance": 0}

`totals` names figures of the `report --json` totals (sectors, requests, ideal_sectors,
sector_bytes, ...) and of its shared totals with a `shared_` prefix (shared_wavefronts,
shared_bank_conflicts, ...); `instructions` names instructions, global or shared, by their
report name, each with its figures. A figure holds when |actual - expected| <= tolerance x
|expected| (tolerance a fraction: 0 is exact, 0.05 five per cent); more or fewer both breach,
so a change for the better is written down with `check --update` rather than passing unseen.

Every expected figure is finite: a count (sectors, bytes, requests, ...) a whole number from 0
to 2^63 - 1 (an int64), a ratio (RATIO_FIGURES) a number in that range; the tolerance is from
0 to 1. Anything else (1e400, read as infinity, NaN, 1.5 sectors) is refused at its key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import PatternError

GLOBAL_FIGURES = ("requests", "active_lanes", "logical_bytes", "useful_bytes", "sectors",
                  "ideal_sectors", "excess_sectors", "sectors_per_request", "useful_fraction",
                  "min", "max", "mode", "unique_sectors", "sector_size", "sector_bytes")
SHARED_FIGURES = ("requests", "active_lanes", "wavefronts", "ideal_wavefronts",
                  "bank_conflicts", "wavefronts_per_request", "min", "max", "mode")
RATIO_FIGURES = ("sectors_per_request", "useful_fraction", "wavefronts_per_request")
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
class Breach:
    """One figure off its expectation: `where` is 'totals' or the instruction's name."""

    where: str
    figure: str
    actual: Number
    expected: Number

    def __str__(self) -> str:
        sign = ">" if self.actual > self.expected else "<"
        return f"{self.where}: {self.figure} {number_text(self.actual)} {sign} expected " \
               f"{number_text(self.expected)}"


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


def _actual(report: JsonObject) -> tuple[dict[str, Number], dict[str, JsonObject]]:
    """A report (Analysis.to_json) -> (totals by figure, with shared_ ones; the instructions,
    global then shared, by name)."""
    totals = {k: report["totals"][k] for k in GLOBAL_FIGURES}
    if report.get("shared_totals") is not None:
        totals |= {SHARED_PREFIX + k: report["shared_totals"][k] for k in SHARED_FIGURES}
    instructions = {s["name"]: {k: s[k] for k in GLOBAL_FIGURES} for s in report["instructions"]}
    instructions |= {s["name"]: {k: s[k] for k in SHARED_FIGURES} for s in report["shared"]}
    return totals, instructions


def breaches(expect: JsonObject, report: JsonObject) -> list[Breach]:
    """Every figure of a checked `expect` that `report` (Analysis.to_json) does not keep;
    PatternError for an instruction the kernel does not have or a figure it has not."""
    totals, instructions = _actual(report)
    tolerance = expect.get("tolerance", 0)
    wanted = [("totals", totals, expect.get("totals", {}), "expect.totals")]
    for name, figures in expect.get("instructions", {}).items():
        place = f"expect.instructions.{name}"
        if name not in instructions:
            raise PatternError(place, f"the kernel has no instruction {name!r}; its "
                                      f"instructions: {', '.join(instructions)}")
        wanted.append((name, instructions[name], figures, place))
    found = []
    for where, actual, figures, place in wanted:
        for figure, expected in figures.items():
            if figure not in actual:
                raise PatternError(f"{place}.{figure}", f"{where} has no figure {figure!r}")
            if abs(actual[figure] - expected) > tolerance * abs(expected):
                found.append(Breach(where, figure, actual[figure], expected))
    return found


def updated_expect(expect: JsonObject | None, report: JsonObject
                   ) -> tuple[JsonObject, list[str]]:
    """`expect` with `report`'s current numbers in each figure it names (a pattern without
    one: the totals' sectors and requests, each global instruction's sectors and each shared
    one's wavefronts) -> (the new expect, the instructions it named that the kernel no
    longer has, left out)."""
    totals, instructions = _actual(report)
    if expect is None:
        shared = {s["name"] for s in report["shared"]}
        expect = {"totals": dict.fromkeys(DEFAULT_TOTALS, 0),
                  "instructions": {n: dict.fromkeys(DEFAULT_SHARED if n in shared else
                                                    DEFAULT_GLOBAL, 0) for n in instructions},
                  "tolerance": 0}
    named = expect.get("instructions", {})
    new = dict(expect)
    if "totals" in expect:
        new["totals"] = {k: totals[k] for k in expect["totals"] if k in totals}
    if "instructions" in expect:
        new["instructions"] = {n: {k: instructions[n][k] for k in f if k in instructions[n]}
                               for n, f in named.items() if n in instructions}
    return new, [n for n in named if n not in instructions]
