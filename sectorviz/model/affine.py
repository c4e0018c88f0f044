"""Closed-form accounting for accesses whose addresses are affine in the thread coordinates.

When an access's element index (with lets inlined) is `c + sum(k_v * v)` over
v in (threadIdx.x/y/z, blockIdx.x/y/z), blockDim.x is a multiple of 32 and the guards are
comparisons of such expressions, then within a warp (lane) -> address is
`A_w + stride * lane`, and a guard holds for all lanes, none, or a run of them (it is
monotonic in the lane). Each chunk of warps becomes a RepeatedBatch (repeat.py, the one
currency of every closed form), counted per warp from `A_w` alone (counts depend only on
`A_w mod sector_bytes`) or, when the warps follow the global thread index, as one warp
repeated; only warps that a guard cuts are expanded to lanes. This is exact: it computes what
the lane-by-lane path computes, per warp instead of per lane.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, cast

import numpy as np

from .errors import PatternError
from .expr import Binary, Name, Node, Num, Unary
from .repeat import RepeatedBatch
from .sectors import WARP_SIZE

if TYPE_CHECKING:
    from .frontend import FrontEnd
    from .kernel import Kernel

VARS = ("threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z")
_SAFE = 2**62  # a form whose magnitude could pass this might wrap in int64: use the lane path
_COMPARISONS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


@dataclass(frozen=True)
class Affine:
    """const + sum(coef[v] * VARS[v]) with Python ints."""

    const: int
    coef: tuple[int, ...] = (0,) * len(VARS)

    def __add__(self, other: "Affine") -> "Affine":
        return Affine(self.const + other.const, tuple(a + b for a, b in zip(self.coef, other.coef)))

    def scaled(self, k: int) -> "Affine":
        return Affine(self.const * k, tuple(c * k for c in self.coef))

    @property
    def is_constant(self) -> bool:
        return not any(self.coef)

    def bounded(self, extents: tuple[int, ...]) -> bool:
        """True when |value| stays below 2^62 for coordinates in [0, extent)."""
        return abs(self.const) + sum(abs(c) * (e - 1) for c, e in zip(self.coef, extents)) < _SAFE


class AffineReader:
    """Expression trees -> Affine, or None when a tree is not affine in the coordinates."""

    def __init__(self, constants: dict[str, int], lets: Mapping[str, Node],
                 extents: tuple[int, ...]):
        self.constants, self.lets, self.extents = constants, lets, extents
        self._memo: dict[str, Affine | None] = {}

    def read(self, node: Node | None) -> Affine | None:
        form = self._read(node) if node is not None else None
        return form if form is not None and form.bounded(self.extents) else None

    def _read(self, node: Node) -> Affine | None:
        if isinstance(node, Num):
            return Affine(node.value)
        if isinstance(node, Name):
            return self._name(node.name)
        if isinstance(node, Unary) and node.op in "+-":
            inner = self._read(node.operand)
            return None if inner is None else inner.scaled(-1 if node.op == "-" else 1)
        if isinstance(node, Binary) and node.op in ("+", "-", "*", "<<"):
            left, right = self._read(node.left), self._read(node.right)
            if left is None or right is None:
                return None
            if node.op == "+":
                return left + right
            if node.op == "-":
                return left + right.scaled(-1)
            if node.op == "<<":
                return (left.scaled(2**right.const)
                        if right.is_constant and 0 <= right.const < 40 else None)
            if right.is_constant:
                return left.scaled(right.const)
            return right.scaled(left.const) if left.is_constant else None
        return None

    def _name(self, name: str) -> Affine | None:
        if name in VARS:
            coef = [0] * len(VARS)
            coef[VARS.index(name)] = 1
            return Affine(0, tuple(coef))
        if name in self.constants:
            return Affine(self.constants[name])
        if name in self.lets:
            if name not in self._memo:
                self._memo[name] = self._read(self.lets[name])
            return self._memo[name]
        return None

    def conditions(self, node: Node | None) -> list[tuple[Affine, str]] | None:
        """A guard -> [(d, op)] meaning every `d op 0` holds; None if not of that form."""
        if node is None:
            return []
        if isinstance(node, Name) and node.name in self.lets:
            return self.conditions(self.lets[node.name])
        if isinstance(node, Binary) and node.op == "&&":
            left, right = self.conditions(node.left), self.conditions(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, Binary) and node.op in _COMPARISONS:
            lhs, rhs = self.read(node.left), self.read(node.right)
            if lhs is None or rhs is None:
                return None
            return [(lhs + rhs.scaled(-1), node.op)]
        constant = self.read(node)
        if constant is not None and constant.is_constant:
            return [] if constant.const else [(Affine(1), "<")]  # always / never
        return None


@dataclass(frozen=True)
class AffinePlan:
    """An access in closed form: element index (or row and col) and guards, all affine."""

    k: int
    place: str
    address: Affine  # bytes
    checks: tuple[tuple[Affine, int, str, str], ...]  # (value, limit, place, what)
    conditions: tuple[tuple[Affine, str], ...]
    width: int

    @property
    def lane_stride(self) -> int:
        """Bytes between the addresses of neighbouring lanes."""
        return self.address.coef[0]


def plan_access(kernel: Kernel, k: int) -> AffinePlan | None:
    """The closed form of pattern access k, or None where only the lane path applies."""
    pattern, access = kernel.pattern, kernel.pattern.accesses[k]
    if access.loops or kernel.block[0] % WARP_SIZE:
        return None
    constants = dict(kernel.params)
    constants["warpSize"] = WARP_SIZE
    for axis, a in enumerate("xyz"):
        constants[f"blockDim.{a}"] = kernel.block[axis]
        constants[f"gridDim.{a}"] = kernel.grid[axis]
    extents = (*kernel.block, *kernel.grid)
    reader = AffineReader(constants, pattern.let_trees, extents)
    arr = kernel.arrays[access.array]
    if access.index is not None:
        element = reader.read(access.index.tree)
        if element is None:
            return None
        checks = [(element, arr.length, access.index.place, "element index")]
    else:
        assert access.at is not None and arr.rows is not None and arr.cols is not None
        assert arr.ld is not None
        row, col = (reader.read(e.tree) for e in access.at)  # a 2-D access of a matrix
        if row is None or col is None:
            return None
        major, minor = (row, col) if arr.spec.layout == "row-major" else (col, row)
        element = major.scaled(arr.ld) + minor
        checks = [(row, arr.rows, access.at[0].place, "row"),
                  (col, arr.cols, access.at[1].place, "col")]
    launch_guard, access_guards = (reader.conditions(g.tree if g else None)
                                   for g in (pattern.guard, access.guard))
    if launch_guard is None or access_guards is None:
        return None
    address = Affine(arr.address0) + element.scaled(arr.spec.elem_bytes)
    if not address.bounded(extents):
        return None
    return AffinePlan(k, access.place, address, tuple(checks), tuple(launch_guard + access_guards),
                      arr.spec.elem_bytes)


class WarpCoordinates:
    """Lane-0 coordinates of global warps [lo, hi), as (warps,) int64 arrays, each computed
    when a form first needs it; `at_lane0` values are kept, since accesses share forms."""

    def __init__(self, kernel: FrontEnd, lo: int, hi: int):
        self.lo, self.hi = lo, hi
        self._block_dims, self._grid_dims = kernel.block, kernel.grid
        self._warps_per_block = kernel.warps_per_block
        self._values: dict[int, np.ndarray] = {}
        self._forms: dict[Affine, np.ndarray] = {}

    @cached_property
    def warp(self) -> np.ndarray:
        """The global warp indices, (warps,)."""
        return np.arange(self.lo, self.hi, dtype=np.int64)

    @cached_property
    def _split(self) -> tuple[np.ndarray, np.ndarray]:
        """(block, warp in block) of each warp."""
        return np.divmod(self.warp, self._warps_per_block)

    def value(self, v: int) -> np.ndarray:
        """Coordinate VARS[v] of each warp's lane 0."""
        if v not in self._values:
            block, in_block = self._split
            dims, index = ((self._block_dims, in_block * WARP_SIZE) if v < 3
                           else (self._grid_dims, block))
            if v % 3 == 0:
                self._values[v] = index % dims[0]
            elif v % 3 == 1:
                self._values[v] = index // dims[0] % dims[1]
            else:
                self._values[v] = index // (dims[0] * dims[1])
        return self._values[v]

    def at_lane0(self, form: Affine) -> np.ndarray:
        """A form's value at each warp's lane 0 (do not modify the array returned)."""
        if form not in self._forms:
            total = np.full(len(self.warp), form.const, dtype=np.int64)
            for v, c in enumerate(form.coef):
                if c:
                    total += c * self.value(v)
            self._forms[form] = total
        return self._forms[form]


def _holds(values: np.ndarray | np.int64, op: str) -> np.ndarray | np.bool_:
    """Where `values op 0` holds."""
    return _COMPARISONS[op](values, 0)


def affine_batch(plan: AffinePlan, coords: WarpCoordinates, as_loop: bool) -> RepeatedBatch:
    """Access `plan` by the warps of `coords` as a RepeatedBatch (byte addresses): lane l of
    a warp at lane0 + stride * l. When `as_loop` and the warps follow the global thread
    index whole and in range, one row executed once per warp (a loop over the warps,
    32 * stride bytes apart); else a row per warp, the warps a guard cuts with their lanes.
    Raises PatternError for the first active lane outside its array."""
    linear = _as_warp_loop(plan, coords) if as_loop else None
    if linear is not None:
        return linear
    n = len(coords.warp)
    full = np.ones(n, dtype=bool)
    none = np.zeros(n, dtype=bool)
    for d, op in plan.conditions:
        first, last = coords.at_lane0(d), coords.at_lane0(d) + d.coef[0] * (WARP_SIZE - 1)
        at_first, at_last = _holds(first, op), _holds(last, op)
        full &= at_first & at_last
        none |= ~at_first & ~at_last
    mixed = np.flatnonzero(~full & ~none)
    active = np.ones((len(mixed), WARP_SIZE), dtype=bool)
    for d, op in plan.conditions:
        active &= _holds(_lanes(coords.at_lane0(d)[mixed], d), op)
    _check_ranges(plan, coords, full, mixed, active)
    return _batch(coords.at_lane0(plan.address), plan, full, mixed, active, ())


def _batch(base: np.ndarray, plan: AffinePlan, full: np.ndarray, mixed: np.ndarray,
           lanes: np.ndarray, loops: tuple[tuple[int, int], ...]) -> RepeatedBatch:
    """Rows at `base` with one class of lanes `stride` bytes apart (every lane exists: the
    block's x extent is a multiple of 32)."""
    offsets = plan.lane_stride * np.arange(WARP_SIZE, dtype=np.int64)[None, :]
    return RepeatedBatch(base, offsets, np.zeros(len(base), dtype=np.int64),
                         np.ones((1, WARP_SIZE), dtype=bool), full, mixed, lanes, loops)


def _thread_step(form: Affine, block: tuple[int, ...], grid: tuple[int, ...]) -> int | None:
    """b when `form` is const + b * (global linear thread index) over the launch, else None.
    Then lane 0 of global warp w has the value const + 32 * b * w, and lane l adds b * l."""
    b = form.coef[0]
    bx, by, bz = block
    tpb = bx * by * bz
    steps = (1, bx, bx * by, tpb, tpb * grid[0], tpb * grid[0] * grid[1])
    extents = (*block, *grid)
    if all(c == b * m or e == 1 for c, m, e in zip(form.coef, steps, extents)):
        return b
    return None


def _as_warp_loop(plan: AffinePlan, coords: WarpCoordinates) -> RepeatedBatch | None:
    """The warps of `coords` as one row repeated over them, without per-warp work, when every
    form of the plan follows the global thread index and every lane of every warp is active
    and in range; else None."""
    lo, last = coords.lo, coords.hi - 1
    dims = coords._block_dims, coords._grid_dims
    forms = [plan.address] + [d for d, _ in plan.conditions] + [f for f, *_ in plan.checks]
    maybe_steps = [_thread_step(f, *dims) for f in forms]
    if None in maybe_steps or coords.hi <= lo:
        return None
    steps = cast(list[int], maybe_steps)

    def ends(form: Affine, b: int) -> list[int]:
        """The form at lanes 0 and 31 of the first and last warps (its extremes)."""
        return [form.const + WARP_SIZE * b * w + b * lane for w in (lo, last)
                for lane in (0, WARP_SIZE - 1)]

    for (d, op), b in zip(plan.conditions, steps[1:]):
        if not all(_holds(np.int64(v), op) for v in ends(d, b)):
            return None
    for (form, limit, *_), b in zip(plan.checks, steps[1 + len(plan.conditions):]):
        if not all(0 <= v < limit for v in ends(form, b)):
            return None
    stride = plan.lane_stride
    base = np.array([plan.address.const + WARP_SIZE * stride * lo], dtype=np.int64)
    return _batch(base, plan, np.ones(1, dtype=bool), np.zeros(0, dtype=np.int64),
                  np.zeros((0, WARP_SIZE), dtype=bool), ((coords.hi - lo, WARP_SIZE * stride),))


def _lanes(at_lane0: np.ndarray, form: Affine) -> np.ndarray:
    """(warps,) lane-0 values of a form -> (warps, 32) values of every lane."""
    return at_lane0[:, None] + form.coef[0] * np.arange(WARP_SIZE, dtype=np.int64)


def _check_ranges(plan: AffinePlan, coords: WarpCoordinates, full: np.ndarray,
                  mixed: np.ndarray, active: np.ndarray) -> None:
    """Raise for the first active lane whose index (or row, col) is outside its range.
    Affine values are extreme at lane 0 or lane 31, so whole warps check just those two."""
    for form, limit, place, what in plan.checks:
        first = coords.at_lane0(form)
        last = first + form.coef[0] * (WARP_SIZE - 1)
        bad = full & ((np.minimum(first, last) < 0) | (np.maximum(first, last) >= limit))
        values = _lanes(first[mixed], form)
        bad[mixed[(active & ((values < 0) | (values >= limit))).any(axis=1)]] = True
        if bad.any():
            w = int(np.flatnonzero(bad)[0])
            lanes = _lanes(first[w:w + 1], form)[0]
            live = active[np.searchsorted(mixed, w)] if not full[w] else np.ones(WARP_SIZE, bool)
            lane = int(np.flatnonzero(live & ((lanes < 0) | (lanes >= limit)))[0])
            raise PatternError(place, f"{what} {int(lanes[lane])} outside [0, {limit}) at warp "
                                      f"{int(coords.warp[w])} lane {lane}")
