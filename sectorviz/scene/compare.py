"""Before and after: two analysed patterns (A, B: each a Side) -> matched instructions, ratios
and differences, and the comparison sheet; computed once here, printed by `sectorviz compare`,
its --json, and the exported slide and sheets (sectorviz.gather.compare makes the sides).

Matching rule (each instruction is matched at most once, in this order):
1. by name: an instruction of A pairs with the first unmatched one of B of the same name;
2. by line and position (CUDA kernels): the i-th instruction on the j-th source line that has
   instructions, with the same op;
3. by order: the rest pair in program order;
what is left of the longer side stands alone ("only in A" / "only in B"). Global and shared
instructions are matched apart, each by this rule.

Ratios are B / A (None where A's figure is 0): 0.22 means B needs 4.5x less. Grid figures
are the model's Stats (sectors, bytes = sectors x sector size, useful fraction); per-warp
figures are the sectors of all executions of the selected warp (scene.grid.run_totals).
Shared instructions: the model's SharedStats over the grid (wavefronts, ideal wavefronts,
bank conflicts, requests; the conflict ratio is wavefronts / ideal wavefronts, 1 when
conflict-free), and the wavefronts of all executions of the selected warp (model/banks.py);
a side without shared instructions shows "—" where the other shows its wavefronts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Sequence

import numpy as np

from ..model.banks import bank_rows
from ..model.results import Analysis, InstructionStats
from ..model.shared_stats import SharedInstructionStats, SharedStats
from ..model.values import Instruction, Listing, SharedWarpDetail, WarpDetail
from .explain import explanations, percent, shared_explanations
from .grid import run_totals
from .sheet import Row, Sheet, Step, readable_bytes
from .words import counted


@dataclass(frozen=True)
class Pair:
    """A matched pair (or a lone instruction): indices into A's and B's instructions."""

    a: int | None
    b: int | None
    matched_by: str  # "name", "line", "order" (the rules above), "only in A" or "only in B"
    space: str = "global"  # or "shared": indices into the shared instructions


@dataclass(frozen=True)
class Side:
    """One pattern of the comparison: its listing, its analysis and the selected warp's
    detail, global and (for a kernel with shared instructions) shared."""

    listing: Listing
    analysis: Analysis
    detail: WarpDetail
    shared: SharedWarpDetail | None = None

    def warp_sectors(self, k: int) -> int:
        """Sectors of all executions of instruction k by the selected warp."""
        return run_totals(self.detail.executions[k], self.listing.sector_bytes).sectors

    @cached_property
    def why(self) -> tuple[str, ...]:
        """The explanation of each instruction for the selected warp (scene.explain)."""
        return explanations(self.listing, self.detail)

    @property
    def all_warp_sectors(self) -> int:
        return sum(self.warp_sectors(k) for k in range(len(self.detail.executions)))

    @property
    def has_shared(self) -> bool:
        """Whether the kernel has shared-memory instructions."""
        return bool(self.listing.shared_instructions)

    def shared_stats(self, k: int) -> SharedInstructionStats | None:
        """The grid's bank accounting of shared instruction k (None: not counted)."""
        return self.analysis.shared[k] if self.analysis.shared else None

    def warp_wavefronts(self, k: int) -> tuple[int, int]:
        """(wavefronts, ideal wavefronts) of all executions of shared instruction k by the
        selected warp (model/banks.py)."""
        assert self.shared is not None  # given for a kernel with shared instructions
        width = self.listing.shared_instructions[k].width
        rows = [bank_rows(np.broadcast_to(b.address, b.active.shape)[:1], width, b.active[:1])
                for b in self.shared.executions[k]]
        return (sum(int(r.wavefronts[0]) for r in rows), sum(int(r.ideal[0]) for r in rows))

    @property
    def all_warp_wavefronts(self) -> tuple[int, int]:
        """(wavefronts, ideal wavefronts) of every shared instruction of the selected warp."""
        each = [self.warp_wavefronts(k) for k in range(len(self.listing.shared_instructions))]
        return sum(w for w, _ in each), sum(i for _, i in each)

    @property
    def grid_wavefronts(self) -> tuple[int, int] | None:
        """(wavefronts, ideal wavefronts) of the grid's shared instructions; None without
        shared instructions or where they were not counted (analysis.shared_note)."""
        t = self.analysis.shared_totals
        return (t.wavefronts, t.ideal_wavefronts) if self.has_shared and t is not None else None

    @cached_property
    def shared_why(self) -> tuple[str, ...]:
        """The explanation of each shared instruction for the selected warp (scene.explain)."""
        if self.shared is None:
            return ()
        return shared_explanations(self.listing, self.shared)


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


def conflict_ratio(s: SharedStats) -> float | None:
    """Wavefronts / ideal wavefronts: 1 conflict-free, 32 a 32-way conflict (None: no
    request)."""
    return ratio(s.ideal_wavefronts, s.wavefronts)


def conflict_words(wavefronts: int, ideal: int) -> str:
    """'conflict-free', or '31,744 bank conflicts, 32x the ideal'."""
    if wavefronts == ideal:
        return "conflict-free"
    return (f"{counted(wavefronts - ideal, 'bank conflict')}, "
            f"{wavefronts / ideal:.2f}".rstrip("0").rstrip(".") + "x the ideal")


def shared_change(a: tuple[int, int] | None, b: tuple[int, int] | None,
                  noun: str = "") -> str:
    """A's and B's (wavefronts, ideal) (None: that side has none) -> '— → 2,048,
    conflict-free', '32 → 1, 32x less, conflict-free', '2,048 → —, none left'; B's figure
    counts `noun` where one is given ('1 wavefront')."""
    left = "—" if a is None else f"{a[0]:,}"
    if b is None:
        return f"{left} → —, none left"
    words = conflict_words(*b)
    if a is not None:
        words = f"{change_words(a[0], b[0])}, {words}"
    right = counted(b[0], noun) if noun else f"{b[0]:,}"
    return f"{left} → {right}, {words}"


def _ratio_of(pair: list[Any]) -> float | None:
    """[A, B] -> B / A; None where either is missing or A is 0."""
    return None if None in pair else ratio(*pair)


def change_words(x: float, y: float) -> str:
    """Figures A and B -> factor_words of B / A; 'same' where they are equal (0 → 0 too)."""
    return "same" if x == y else factor_words(ratio(x, y))


def _line_keys(instructions: Sequence[Instruction]) -> list[tuple[int, int, str] | None]:
    """(rank of its source line, position on that line, op) of each instruction; None without
    a line."""
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


def match_instructions(a: Listing, b: Listing) -> tuple[Pair, ...]:
    """A's and B's global instructions -> pairs by name, then line and position, then order
    (the module's rule), in A's program order, B's lone instructions last."""
    return _match(a.instructions, b.instructions, "global")


def match_shared(a: Listing, b: Listing) -> tuple[Pair, ...]:
    """A's and B's shared instructions -> pairs, by the same rule."""
    return _match(a.shared_instructions, b.shared_instructions, "shared")


def _match(ins_a: Sequence[Instruction], ins_b: Sequence[Instruction], space: str
           ) -> tuple[Pair, ...]:
    names_a, names_b = [i.name for i in ins_a], [i.name for i in ins_b]
    partner: dict[int, tuple[int, str]] = {}
    free = list(range(len(names_b)))
    for i, name in enumerate(names_a):
        j = next((j for j in free if names_b[j] == name), None)
        if j is not None:
            partner[i] = (j, "name")
            free.remove(j)
    keys_a, keys_b = _line_keys(ins_a), _line_keys(ins_b)
    for i, key in enumerate(keys_a):
        j = next((j for j in free if key is not None and keys_b[j] == key), None)
        if i not in partner and j is not None:
            partner[i] = (j, "line")
            free.remove(j)
    for i in range(len(names_a)):
        if i not in partner and free:
            partner[i] = (free.pop(0), "order")
    pairs = [Pair(i, *partner[i], space) if i in partner else Pair(i, None, "only in A", space)
             for i in range(len(names_a))]
    return tuple(pairs + [Pair(None, j, "only in B", space) for j in free])


@dataclass(frozen=True)
class Comparison:
    """A against B: the pairs and every figure the printers show."""

    a: Side
    b: Side
    warp: int
    pairs: tuple[Pair, ...]
    shared_pairs: tuple[Pair, ...]

    def pair_of(self, k: int | None) -> Pair | None:
        """The pair holding A's instruction k (None without a k)."""
        return None if k is None else next(p for p in self.pairs if p.a == k)

    @property
    def has_shared(self) -> bool:
        """Whether either side has shared-memory instructions."""
        return self.a.has_shared or self.b.has_shared

    def names(self, pair: Pair) -> tuple[str | None, str | None]:
        """A's and B's instruction names of a (global or shared) pair; None for a lone side."""
        def name(side: Side, k: int | None) -> str | None:
            listing = side.listing
            listed = (listing.instructions if pair.space == "global"
                      else listing.shared_instructions)
            return None if k is None else listed[k].name
        return name(self.a, pair.a), name(self.b, pair.b)

    def shared_stats(self, pair: Pair) -> tuple[SharedInstructionStats | None, ...]:
        """A's and B's grid bank accounting of a shared pair (None: lone side, or not
        counted)."""
        return tuple(None if k is None else side.shared_stats(k)
                     for side, k in ((self.a, pair.a), (self.b, pair.b)))

    def warp_wavefronts(self, pair: Pair
                        ) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
        """A's and B's (wavefronts, ideal) of a shared pair in the selected warp."""
        wa, wb = (None if k is None else side.warp_wavefronts(k)
                  for side, k in ((self.a, pair.a), (self.b, pair.b)))
        return wa, wb

    def shared_pair_json(self, pair: Pair) -> dict[str, Any]:
        """One shared pair's figures as [A, B] lists (null for a lone side, or grid figures
        not counted) and B / A ratios; the conflict ratio is wavefronts / ideal."""
        stats, warp = self.shared_stats(pair), self.warp_wavefronts(pair)

        def both(field: str) -> list[Any]:
            return [None if s is None else getattr(s, field) for s in stats]

        doc: dict[str, Any] = {"a": pair.a, "b": pair.b, "matched_by": pair.matched_by,
                               "name": list(self.names(pair))}
        for field in ("requests", "wavefronts", "ideal_wavefronts", "bank_conflicts",
                      "wavefronts_per_request"):
            doc[field] = both(field)
        doc["conflict_ratio"] = [None if s is None else conflict_ratio(s) for s in stats]
        doc["warp_wavefronts"] = [None if w is None else w[0] for w in warp]
        doc["warp_ideal_wavefronts"] = [None if w is None else w[1] for w in warp]
        doc["wavefronts_ratio"] = _ratio_of(doc["wavefronts"])
        doc["warp_wavefronts_ratio"] = _ratio_of(doc["warp_wavefronts"])
        doc["explanation"] = [None if k is None else side.shared_why[k]
                              for k, side in ((pair.a, self.a), (pair.b, self.b))]
        return doc

    def shared_totals_json(self) -> dict[str, Any]:
        """The shared totals, keys prefixed 'shared_' (the grid's, as each report's
        "shared_totals"; null where not counted) and 'warp_shared_' (the selected warp)."""
        totals = (self.a.analysis.shared_totals, self.b.analysis.shared_totals)
        doc: dict[str, Any] = {
            f"shared_{field}": [None if t is None else getattr(t, field) for t in totals]
            for field in ("wavefronts", "ideal_wavefronts", "bank_conflicts", "requests",
                          "wavefronts_per_request")}
        doc["shared_conflict_ratio"] = [None if t is None else conflict_ratio(t) for t in totals]
        doc["shared_wavefronts_ratio"] = _ratio_of(doc["shared_wavefronts"])
        wa, wb = self.a.all_warp_wavefronts, self.b.all_warp_wavefronts
        doc["warp_shared_wavefronts"] = [wa[0], wb[0]]
        doc["warp_shared_ideal_wavefronts"] = [wa[1], wb[1]]
        doc["warp_shared_wavefronts_ratio"] = ratio(wa[0], wb[0])
        return doc

    @property
    def shared_change(self) -> str:
        """Shared wavefronts over the grid: '— → 65,536, conflict-free'; where a side's were
        not counted (past the work budget), '— → not counted'."""
        sides = (self.a, self.b)
        if "not counted" in map(_missing, sides):
            return " → ".join(_missing(s) if s.grid_wavefronts is None else
                              f"{s.grid_wavefronts[0]:,}" for s in sides)
        a, b = (side.grid_wavefronts for side in sides)
        return shared_change(a, b)

    @property
    def warp_shared_change(self) -> str:
        """Shared wavefronts of the selected warp: '— → 2, conflict-free'."""
        a, b = (side.all_warp_wavefronts if side.has_shared else None
                for side in (self.a, self.b))
        return shared_change(a, b)

    def stats(self, pair: Pair) -> tuple[InstructionStats | None, InstructionStats | None]:
        return (None if pair.a is None else self.a.analysis.instructions[pair.a],
                None if pair.b is None else self.b.analysis.instructions[pair.b])

    def pair_json(self, pair: Pair) -> dict[str, Any]:
        """One pair's figures as [A, B] lists and B / A ratios (null where a side is missing)."""
        sa, sb = self.stats(pair)
        wa = None if pair.a is None else self.a.warp_sectors(pair.a)
        wb = None if pair.b is None else self.b.warp_sectors(pair.b)
        doc: dict[str, Any] = {
            "a": pair.a, "b": pair.b, "matched_by": pair.matched_by,
            "name": [None if s is None else s.name for s in (sa, sb)],
            "sectors": [None if s is None else s.sectors for s in (sa, sb)],
            "sector_bytes": [None if s is None else s.sector_traffic_bytes for s in (sa, sb)],
            "useful_fraction": [None if s is None else s.useful_fraction for s in (sa, sb)],
            "warp_sectors": [wa, wb]}
        ratios: tuple[float | None, float | None, float | None] = (None, None, None)
        if sa is not None and sb is not None:
            assert wa is not None and wb is not None  # both sides have the instruction
            ratios = (ratio(sa.sectors, sb.sectors),
                      ratio(sa.sector_traffic_bytes, sb.sector_traffic_bytes), ratio(wa, wb))
        doc["sectors_ratio"], doc["sector_bytes_ratio"], doc["warp_sectors_ratio"] = ratios
        doc["explanation"] = [None if k is None else side.why[k]
                              for k, side in ((pair.a, self.a), (pair.b, self.b))]
        return doc

    def totals_json(self) -> dict[str, Any]:
        """The totals: [A, B] and B / A ratios, and the headline."""
        ta, tb = self.a.analysis.totals, self.b.analysis.totals
        wa, wb = self.a.all_warp_sectors, self.b.all_warp_sectors
        return {"sectors": [ta.sectors, tb.sectors],
                "sectors_ratio": ratio(ta.sectors, tb.sectors),
                "sector_bytes": [ta.sector_traffic_bytes, tb.sector_traffic_bytes],
                "sector_bytes_ratio": ratio(ta.sector_traffic_bytes, tb.sector_traffic_bytes),
                "useful_fraction": [ta.useful_fraction, tb.useful_fraction],
                "warp_sectors": [wa, wb], "warp_sectors_ratio": ratio(wa, wb),
                **self.shared_totals_json(), "headline": self.headline}

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
        """'sector demand 36 MiB → 8 MiB, 4.5x less; useful 22.2% → 100%', and where either
        side has shared instructions '; shared wavefronts — → 65,536, conflict-free'."""
        shared = f"; shared wavefronts {self.shared_change}" if self.has_shared else ""
        return f"sector demand {self.demand_change}; useful {self.useful_change}{shared}"

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


def comparison(a: Side, b: Side) -> Comparison:
    """Two sides about one warp -> their Comparison."""
    assert a.detail.warp == b.detail.warp  # one selected warp
    return Comparison(a, b, a.detail.warp, match_instructions(a.listing, b.listing),
                      match_shared(a.listing, b.listing))


def _change(a: str, b: str, r: float | None) -> str:
    """'36 MiB → 8 MiB, 4.5x less'."""
    return f"{a} → {b}, {factor_words(r)}"


def _matched(pair: Pair) -> str:
    """'matched by name', or 'only in A'."""
    return pair.matched_by if pair.matched_by.startswith("only") else \
        f"matched by {pair.matched_by}"


def _pair_label(c: Comparison, pair: Pair) -> str:
    na, nb = c.names(pair)
    if na is None or nb is None:
        return f"{na or nb} ({pair.matched_by})"
    return na if na == nb else f"{na} → {nb}"


def comparison_sheet(c: Comparison, only: Pair | None = None) -> Sheet:
    """The comparison as a Sheet (every sheet printer prints it): the answer (sector demand,
    useful, sectors per warp; shared wavefronts over the grid and per warp), 1 the matched
    instructions, 2 why each costs what it costs (the selected warp), 3 the totals, and where
    either side has shared instructions 4 the matched shared instructions and their totals.
    `only` (a global or a shared pair) keeps steps 1, 2 and 4's pairs to that one pair."""
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
            unit="sectors")) + (_shared_answer(c) if c.has_shared else ())
    rows, why = [], []
    for p in (p for p in c.pairs if only is None or p == only):
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
        why += _why_rows(c, p, doc["explanation"], "")
    shared = [p for p in c.shared_pairs if only is None or p == only]
    for p in shared:
        why += _why_rows(c, p, c.shared_pair_json(p)["explanation"], " (shared)")
    title = (f"{c.a.listing.name} (A) → {c.b.listing.name} (B): "
             f"{c.a.listing.sector_bytes}-byte sectors")
    steps: tuple[Step, ...] = (
        Step(1, f"Instructions, A → B (sectors in warp {c.warp})", tuple(rows)),
        Step(2, f"Why (warp {c.warp})", tuple(why)),
        Step(3, "Totals over the grid, A → B", _totals_rows(c)))
    if c.has_shared:
        steps += (Step(4, f"Shared memory, A → B (bank wavefronts in warp {c.warp})",
                       tuple(_shared_pair_row(c, p) for p in shared) + _shared_totals_rows(c)),)
    return Sheet(title, answer, steps, columns=("A", "B", "B / A"))


def _why_rows(c: Comparison, pair: Pair, words: list[str | None], tag: str) -> list[Row]:
    """'A: name', 'B: name' rows of a pair's explanations (a lone side's only)."""
    rows = []
    for side, name, text in zip("AB", c.names(pair), words):
        if name is not None:
            assert text is not None  # a side with the instruction has its explanation
            rows.append(Row(f"{side}: {name}{tag}", text))
    return rows


def _totals_rows(c: Comparison) -> tuple[Row, ...]:
    """Step 3: the global totals over the grid, A → B."""
    ta, tb = c.a.analysis.totals, c.b.analysis.totals
    totals = [Row(label, f"{x:,} → {y:,}, {change_words(x, y)}", figures=(x, y, ratio(x, y)),
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
    return tuple(totals)


def _shared_answer(c: Comparison) -> tuple[Row, ...]:
    """The answer's shared rows: wavefronts over the grid and in the selected warp."""
    doc = c.shared_totals_json()
    grid = [None if side.grid_wavefronts is None else w
            for side, w in zip((c.a, c.b), doc["shared_wavefronts"])]
    warp = [w if side.has_shared else None
            for side, w in zip((c.a, c.b), doc["warp_shared_wavefronts"])]
    ideal = [None if g is None else i for g, i in zip(grid, doc["shared_ideal_wavefronts"])]
    notes = ["ideal wavefronts " + " → ".join(_figure(i, _missing(side))
                                              for i, side in zip(ideal, (c.a, c.b)))]
    notes += [f"{tag}: {side.analysis.shared_note}"
              for tag, side in (("A", c.a), ("B", c.b)) if side.analysis.shared_note]
    return (Row("shared wavefronts", c.shared_change, "; ".join(notes),
                figures=(*grid, _ratio_of(grid)), unit="wavefronts"),
            Row(f"shared wavefronts per warp (warp {c.warp})", c.warp_shared_change,
                figures=(*warp, _ratio_of(warp)), unit="wavefronts"))


def _missing(side: Side | None) -> str:
    """What a side shows for a shared grid figure it lacks: 'not counted' where its shared
    instructions were not counted (analysis.shared_note), else '—' (it has none)."""
    counted_not = side is not None and side.has_shared and side.analysis.shared_totals is None
    return "not counted" if counted_not else "—"


def _figure(x: int | float | None, missing: str, digits: int | None = None) -> str:
    """A figure as text ('1,024', '1.00' with `digits`), `missing` where there is none."""
    if x is None:
        return missing
    return f"{x:,}" if digits is None else f"{x:.{digits}f}"


def _shared_pair_row(c: Comparison, pair: Pair) -> Row:
    """One shared pair: its wavefronts in the selected warp, A → B; the grid's in the note."""
    doc = c.shared_pair_json(pair)
    missing = [_missing(None if k is None else side)
               for k, side in ((pair.a, c.a), (pair.b, c.b))]

    def change(key: str, digits: int | None = None) -> str:
        return " → ".join(_figure(x, m, digits) for x, m in zip(doc[key], missing))

    note = (f"grid wavefronts {change('wavefronts')}, ideal {change('ideal_wavefronts')}; "
            f"per request {change('wavefronts_per_request', 2)}; {_matched(pair)}")
    return Row(_pair_label(c, pair), shared_change(*c.warp_wavefronts(pair), noun="wavefront"),
               note, figures=(*doc["warp_wavefronts"], doc["warp_wavefronts_ratio"]),
               unit="wavefronts")


def _shared_totals_rows(c: Comparison) -> tuple[Row, ...]:
    """Step 4's totals over the grid: wavefronts, ideal, bank conflicts, requests, and
    wavefronts per request and per ideal, A → B ('—' for a side without them)."""
    doc = c.shared_totals_json()
    shown = [side.grid_wavefronts for side in (c.a, c.b)]
    rows = []
    for label, key, unit, digits in (
            ("wavefronts", "shared_wavefronts", "wavefronts", None),
            ("ideal wavefronts", "shared_ideal_wavefronts", "wavefronts", None),
            ("bank conflicts", "shared_bank_conflicts", "bank conflicts", None),
            ("requests", "shared_requests", "requests", None),
            ("wavefronts per request", "shared_wavefronts_per_request", "wavefronts per request",
             2),
            ("conflict ratio (wavefronts / ideal)", "shared_conflict_ratio", "ratio", 2)):
        x, y = (v if s is not None else None for v, s in zip(doc[key], shown))
        value = f"{_figure(x, _missing(c.a), digits)} → {_figure(y, _missing(c.b), digits)}"
        if digits is None and x is not None and y is not None:
            value += f", {change_words(x, y)}"
        rows.append(Row(label, value, figures=(x, y, _ratio_of([x, y]) if digits is None
                                               else None), unit=unit))
    return tuple(rows)
