"""Before and after: two patterns (A, B) -> matched instructions, ratios and differences, and
the comparison sheet; computed once here, printed by `sectorviz compare`, its --json, and the
exported slide and sheets.

Matching rule (each instruction is matched at most once, in this order):
1. by name: an instruction of A pairs with the first unmatched one of B of the same name;
2. by line and position (CUDA kernels): the i-th instruction on the j-th source line that has
   instructions, with the same op;
3. by order: the rest pair in program order;
what is left of the longer side stands alone ("only in A" / "only in B").

Ratios are B / A (None where A's figure is 0): 0.22 means B needs 4.5x less. Grid figures
are the model's Stats (sectors, bytes = sectors x sector size, useful fraction); per-warp
figures are the sectors of all executions of the selected warp (scene.grid.run_totals).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

from ..model import Analysis, Pattern, PatternError, analyze, load_pattern, warp_detail
from ..model.frontend import instruction_index, kernel_for
from ..model.one_warp import WarpDetail
from ..model.results import InstructionStats
from .explain import explanations, percent
from .grid import run_totals
from .sheet import Row, Sheet, Step, readable_bytes

@dataclass(frozen=True)
class Pair:
    """A matched pair (or a lone instruction): indices into A's and B's instructions."""

    a: int | None
    b: int | None
    matched_by: str  # "name", "line", "order" (the rules above), "only in A" or "only in B"


@dataclass(frozen=True)
class Side:
    """One pattern of the comparison: its analysis and the selected warp's detail."""

    pattern: Pattern
    analysis: Analysis
    detail: WarpDetail

    def warp_sectors(self, k: int) -> int:
        """Sectors of all executions of instruction k by the selected warp."""
        return run_totals(list(self.detail.executions[k]), self.pattern.sector_bytes).sectors

    @cached_property
    def why(self) -> tuple[str, ...]:
        """The explanation of each instruction for the selected warp (scene.explain)."""
        return explanations(self.pattern, self.detail)

    @property
    def all_warp_sectors(self) -> int:
        return sum(self.warp_sectors(k) for k in range(len(self.detail.executions)))


def ratio(a: float, b: float) -> float | None:
    """b / a, None where a is 0."""
    return b / a if a else None


def factor_words(r: float | None) -> str:
    """A ratio B / A -> '4.5x less', '6x more', 'same', 'new' (A had none)."""
    if r is None:
        return "new"  # A had none
    if r == 1:
        return "same"
    if r == 0:
        return "none left"
    text = f"{1 / r if r < 1 else r:.2f}".rstrip("0").rstrip(".")
    return f"{text}x {'less' if r < 1 else 'more'}"


def _line_keys(pattern: Pattern) -> list[tuple[int, int, str] | None]:
    """(rank of its source line, position on that line, op) of each instruction; None without
    a line."""
    instructions = kernel_for(pattern).instructions
    lines = sorted({i.line for i in instructions if i.line is not None})
    seen: dict[int, int] = {}
    keys: list[tuple[int, int, str] | None] = []
    for ins in instructions:
        if ins.line is None:
            keys.append(None)
            continue
        seen[ins.line] = seen.get(ins.line, -1) + 1
        keys.append((lines.index(ins.line), seen[ins.line], ins.op))
    return keys


def match_instructions(a: Pattern, b: Pattern) -> tuple[Pair, ...]:
    """A's and B's instructions -> pairs by name, then line and position, then order (the
    module's rule), in A's program order, B's lone instructions last."""
    names_a = [i.name for i in kernel_for(a).instructions]
    names_b = [i.name for i in kernel_for(b).instructions]
    partner: dict[int, tuple[int, str]] = {}
    free = list(range(len(names_b)))
    for i, name in enumerate(names_a):
        j = next((j for j in free if names_b[j] == name), None)
        if j is not None:
            partner[i] = (j, "name")
            free.remove(j)
    keys_a, keys_b = _line_keys(a), _line_keys(b)
    for i, key in enumerate(keys_a):
        j = next((j for j in free if key is not None and keys_b[j] == key), None)
        if i not in partner and j is not None:
            partner[i] = (j, "line")
            free.remove(j)
    for i in range(len(names_a)):
        if i not in partner and free:
            partner[i] = (free.pop(0), "order")
    pairs = [Pair(i, *partner[i]) if i in partner else Pair(i, None, "only in A")
             for i in range(len(names_a))]
    return tuple(pairs + [Pair(None, j, "only in B") for j in free])


@dataclass(frozen=True)
class Comparison:
    """A against B: the pairs and every figure the printers show."""

    a: Side
    b: Side
    warp: int
    pairs: tuple[Pair, ...]

    def pair_of(self, k: int | None) -> Pair | None:
        """The pair holding A's instruction k (None without a k)."""
        return None if k is None else next(p for p in self.pairs if p.a == k)

    def stats(self, pair: Pair) -> tuple[InstructionStats | None, InstructionStats | None]:
        return (None if pair.a is None else self.a.analysis.instructions[pair.a],
                None if pair.b is None else self.b.analysis.instructions[pair.b])

    def pair_json(self, pair: Pair) -> dict:
        """One pair's figures as [A, B] lists and B / A ratios (null where a side is missing)."""
        sa, sb = self.stats(pair)
        wa = None if pair.a is None else self.a.warp_sectors(pair.a)
        wb = None if pair.b is None else self.b.warp_sectors(pair.b)
        doc = {"a": pair.a, "b": pair.b, "matched_by": pair.matched_by,
               "name": [None if s is None else s.name for s in (sa, sb)],
               "sectors": [None if s is None else s.sectors for s in (sa, sb)],
               "sector_bytes": [None if s is None else s.sector_traffic_bytes for s in (sa, sb)],
               "useful_fraction": [None if s is None else s.useful_fraction for s in (sa, sb)],
               "warp_sectors": [wa, wb]}
        both = sa is not None and sb is not None
        doc["sectors_ratio"] = ratio(sa.sectors, sb.sectors) if both else None
        doc["sector_bytes_ratio"] = (ratio(sa.sector_traffic_bytes, sb.sector_traffic_bytes)
                                     if both else None)
        doc["warp_sectors_ratio"] = ratio(wa, wb) if both else None
        doc["explanation"] = [None if k is None else side.why[k]
                              for k, side in ((pair.a, self.a), (pair.b, self.b))]
        return doc

    def totals_json(self) -> dict:
        """The totals: [A, B] and B / A ratios, and the headline."""
        ta, tb = self.a.analysis.totals, self.b.analysis.totals
        wa, wb = self.a.all_warp_sectors, self.b.all_warp_sectors
        return {"sectors": [ta.sectors, tb.sectors],
                "sectors_ratio": ratio(ta.sectors, tb.sectors),
                "sector_bytes": [ta.sector_traffic_bytes, tb.sector_traffic_bytes],
                "sector_bytes_ratio": ratio(ta.sector_traffic_bytes, tb.sector_traffic_bytes),
                "useful_fraction": [ta.useful_fraction, tb.useful_fraction],
                "warp_sectors": [wa, wb], "warp_sectors_ratio": ratio(wa, wb),
                "headline": self.headline}

    @property
    def demand_change(self) -> str:
        """Sector demand over the grid: '36 MiB → 8 MiB, 4.5x less'."""
        ta, tb = self.a.analysis.totals, self.b.analysis.totals
        return _change(readable_bytes(ta.sector_traffic_bytes),
                       readable_bytes(tb.sector_traffic_bytes),
                       ratio(ta.sector_traffic_bytes, tb.sector_traffic_bytes))

    @property
    def useful_change(self) -> str:
        """Useful share of the fetched bytes over the grid: '22.2% → 100%'."""
        ta, tb = self.a.analysis.totals, self.b.analysis.totals
        return f"{percent(ta.useful_fraction)} → {percent(tb.useful_fraction)}"

    @property
    def headline(self) -> str:
        """'sector demand 36 MiB → 8 MiB, 4.5x less; useful 22.2% → 100%'."""
        return f"sector demand {self.demand_change}; useful {self.useful_change}"

    @property
    def warp_change(self) -> str:
        """Sectors of all instructions of the selected warp: '36 → 8, 4.5x less'."""
        wa, wb = self.a.all_warp_sectors, self.b.all_warp_sectors
        return _change(f"{wa:,}", f"{wb:,}", ratio(wa, wb))

    @property
    def warp_headline(self) -> str:
        """'36 → 8 sectors per warp (warp 0), 4.5x less'."""
        wa, wb = self.a.all_warp_sectors, self.b.all_warp_sectors
        return _change(f"{wa:,}", f"{wb:,} sectors per warp (warp {self.warp})", ratio(wa, wb))

    def focus(self) -> Pair:
        """The pair that changes most in the selected warp (the slide's default): the largest
        difference of per-warp sectors, the first such pair."""
        both = [p for p in self.pairs if p.a is not None and p.b is not None] or list(self.pairs)
        return max(both, key=lambda p: abs((self.a.warp_sectors(p.a) if p.a is not None else 0)
                                           - (self.b.warp_sectors(p.b) if p.b is not None else 0)))


def compare(a: Pattern, analysis_a: Analysis, b: Pattern, analysis_b: Analysis,
            warp: int = 0) -> Comparison:
    """Two analysed patterns and one warp index (valid in both) -> their Comparison."""
    return Comparison(Side(a, analysis_a, warp_detail(a, warp)),
                      Side(b, analysis_b, warp_detail(b, warp)), warp, match_instructions(a, b))


class SideError(Exception):
    """Bad input in one compared file: `path` and the PatternError it gave."""

    def __init__(self, path: str, error: PatternError):
        super().__init__(f"{path}: {error}")
        self.path, self.error = path, error


def load_comparison(file_a: str, file_b: str, warp: int = 0,
                    progress: Callable[[int, int], None] | None = None) -> Comparison:
    """Two pattern files -> their Comparison about `warp`, spending the open work budget;
    a PatternError from either file (the warp out of its range too) as SideError."""
    sides = []
    for path in (file_a, file_b):
        try:
            pattern = load_pattern(path)
            warps = kernel_for(pattern).warps
            if not 0 <= warp < warps:
                raise PatternError("--warp", f"warp {warp} outside [0, {warps})")
            sides.append(Side(pattern, analyze(pattern, progress=progress),
                              warp_detail(pattern, warp)))
        except PatternError as err:
            raise SideError(path, err) from err
    a, b = sides
    return Comparison(a, b, warp, match_instructions(a.pattern, b.pattern))


def side_instruction(c: Comparison, file_a: str, key: str | None) -> int | None:
    """A's instruction by index or name (None without a key); SideError naming `file_a`
    when it has none such."""
    if key is None:
        return None
    try:
        return instruction_index(c.a.pattern, key)
    except PatternError as err:
        raise SideError(file_a, err) from err


def _change(a: str, b: str, r: float | None) -> str:
    """'36 MiB → 8 MiB, 4.5x less'."""
    return f"{a} → {b}, {factor_words(r)}"


def _pair_label(c: Comparison, pair: Pair) -> str:
    sa, sb = c.stats(pair)
    if sa is None or sb is None:
        return f"{(sa or sb).name} ({pair.matched_by})"
    return sa.name if sa.name == sb.name else f"{sa.name} → {sb.name}"


def comparison_sheet(c: Comparison, only: Pair | None = None) -> Sheet:
    """The comparison as a Sheet (every sheet printer prints it): the answer (sector demand,
    useful, sectors per warp), 1 the matched instructions, 2 why each costs what it costs
    (the selected warp), 3 the totals. `only` keeps steps 1 and 2 to one pair."""
    ta, tb = c.a.analysis.totals, c.b.analysis.totals
    wa, wb = c.a.all_warp_sectors, c.b.all_warp_sectors
    demand = (ta.sector_traffic_bytes, tb.sector_traffic_bytes)
    answer = (
        Row("sector demand", c.demand_change, f"{ta.sectors:,} → {tb.sectors:,} sectors",
            figures=(*demand, ratio(*demand)), unit="B"),
        Row("useful", f"{c.useful_change} of the fetched bytes",
            f"{ta.useful_bytes:,} B → {tb.useful_bytes:,} B used",
            figures=(100 * ta.useful_fraction, 100 * tb.useful_fraction, None), unit="%"),
        Row(f"sectors per warp (warp {c.warp})", c.warp_change, figures=(wa, wb, ratio(wa, wb)),
            unit="sectors"))
    pairs = [p for p in c.pairs if only is None or p == only]
    rows, why = [], []
    for p in pairs:
        sa, sb = c.stats(p)
        doc = c.pair_json(p)
        fa, fb = doc["warp_sectors"]
        if sa is not None and sb is not None:
            value = _change(f"{fa:,}", f"{fb:,} sectors", doc["warp_sectors_ratio"])
            note = (f"grid {readable_bytes(sa.sector_traffic_bytes)} → "
                    f"{readable_bytes(sb.sector_traffic_bytes)}; useful "
                    f"{percent(sa.useful_fraction)} → {percent(sb.useful_fraction)}; matched by "
                    f"{p.matched_by}")
        else:
            value = f"{fa if fb is None else fb:,} sectors"
            note = p.matched_by
        rows.append(Row(_pair_label(c, p), value, note, unit="sectors",
                        figures=(fa, fb, doc["warp_sectors_ratio"])))
        why += [Row(f"{side}: {s.name}", words) for side, s, words
                in (("A", sa, doc["explanation"][0]), ("B", sb, doc["explanation"][1]))
                if s is not None]
    totals = [Row(label, _change(f"{x:,}", f"{y:,}", ratio(x, y)), figures=(x, y, ratio(x, y)),
                  unit=unit)
              for label, x, y, unit in (
                  ("sectors", ta.sectors, tb.sectors, "sectors"),
                  ("ideal sectors", ta.ideal_sectors, tb.ideal_sectors, "sectors"),
                  ("excess sectors", ta.excess_sectors, tb.excess_sectors, "sectors"),
                  ("requests", ta.requests, tb.requests, "requests"))]
    totals.append(Row("sectors per request", f"{ta.sectors_per_request:.2f} → "
                                             f"{tb.sectors_per_request:.2f}",
                      figures=(ta.sectors_per_request, tb.sectors_per_request, None),
                      unit="sectors per request"))
    title = (f"{c.a.pattern.name} (A) → {c.b.pattern.name} (B): "
             f"{c.a.pattern.sector_bytes}-byte sectors")
    return Sheet(title, answer, (
        Step(1, f"Instructions, A → B (sectors in warp {c.warp})", tuple(rows)),
        Step(2, f"Why (warp {c.warp})", tuple(why)),
        Step(3, "Totals over the grid, A → B", tuple(totals))), columns=("A", "B", "B / A"))
