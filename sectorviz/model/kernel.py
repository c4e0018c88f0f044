"""Resolve a Pattern into concrete numbers, then run its accesses for any range of warps.

Warps follow CUDA's layout: in a block, t = x + y*bx + z*bx*by, lane = t % 32,
warp-in-block = t / 32; blocks in linear order, x fastest; global warp
g = block_linear * warps_per_block + warp_in_block. A block whose size is not a multiple of
32 ends in a partial warp whose missing lanes are never active.

`Kernel.trace(lo, hi)` yields, in program order, every execution of every access by warps
[lo, hi): one batch per access and loop iteration, as (warps, 32) arrays of
(lane) -> element index -> byte address, with the lanes that are active.
"""

from __future__ import annotations

import io
import threading
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Collection, Iterator, Mapping, cast

import numpy as np
from numpy.lib import format as npy_format

from .budget import BATCH_UNITS, Budget, current, reserve
from .errors import PatternError
from .expr import ArrayValues, ExprError, Scope, Value, evaluate, evaluate_truth
from .files import Roots, read_bytes, read_error
from .pattern import Access, ArraySpec, Expr, Loop, Pattern, expression, suggest
from .sectors import WARP_SIZE

if TYPE_CHECKING:
    from .affine import AffinePlan
    from .frontend import ClosedStep
    from .repeat import WarpAccess

MAX_BLOCK_THREADS = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)
MAX_VALUE_ELEMENTS = 2**27  # readable arrays are materialised: 1 GiB of int64 at most
VALUE_CHUNK = 2**20  # elements of values.expr evaluated at once
MAX_THREADS = 2**34  # a launch beyond this would take hours to stream
CUDA_MALLOC_ALIGN = 256
SHARED_ALIGN = 16  # bytes; a pattern's shared arrays start at multiples of this
MAX_ADDRESS = 2**63 - 1  # byte addresses are int64
# the mask of an expression outside a launch: a scalar True, which broadcasts as every lane
EVERY_LANE = cast(np.ndarray, np.bool_(True))


def evaluate_at(expr: Expr, scope: Scope, mask: np.ndarray) -> Value:
    """evaluate(), with an expression error moved to the expression's place."""
    try:
        return evaluate(expr.tree, scope, mask)
    except ExprError as err:
        raise PatternError(expr.place, err.message, err.column) from None


def truth_at(expr: Expr, scope: Scope, mask: np.ndarray) -> np.ndarray:
    """Lanes where `expr` is nonzero, as bools; errors moved to the expression's place."""
    try:
        return evaluate_truth(expr.tree, scope, mask)
    except ExprError as err:
        raise PatternError(expr.place, err.message, err.column) from None


class ConstantScope:
    """Names for launch, lengths and shapes: params only; `i` for values expressions."""

    def __init__(self, params: dict[str, int], extra: dict[str, np.ndarray] | None = None):
        self.params = params
        self.extra = extra or {}
        self.shape: tuple[int, ...] = ()

    def lookup(self, name: str, mask: np.ndarray, col: int) -> Value:
        if name in self.extra:
            return self.extra[name]
        if name in self.params:
            param: np.int64 = np.int64(self.params[name])
            return param
        raise ExprError(f"unknown name {name!r}" + suggest(name, self.params), col)

    def array_values(self, name: str, col: int) -> ArrayValues:
        raise ExprError(f"array {name!r} cannot be read here", col)


def constant(expr: Expr, params: dict[str, int]) -> int:
    return int(evaluate_at(expr, ConstantScope(params), EVERY_LANE))


@dataclass(frozen=True)
class ResolvedArray:
    """Element e (or (row, col)) of an array -> byte address address0 + linear(e) * elem_bytes."""

    spec: ArraySpec
    length: int
    rows: int | None
    cols: int | None
    ld: int | None
    address0: int  # base + offset_bytes

    @property
    def end(self) -> int:
        """One past the last byte of the array."""
        return self.address0 + self.length * self.spec.elem_bytes

    def linear(self, row: np.ndarray, col: np.ndarray) -> np.ndarray:
        """(row, col) -> element index, by layout and leading dimension."""
        index: np.ndarray = row * self.ld + col if self.spec.layout == "row-major" else \
            col * self.ld + row
        return index


def _resolve_array(spec: ArraySpec, params: dict[str, int], next_free: int) -> ResolvedArray:
    place = f"arrays.{spec.name}"
    rows = cols = ld = None
    if spec.shape is not None:
        rows, cols = (constant(e, params) for e in spec.shape)
        if rows < 1 or cols < 1:
            raise PatternError(f"{place}.shape",
                               f"rows and cols must be positive, got [{rows}, {cols}]")
        minor = cols if spec.layout == "row-major" else rows
        ld = constant(spec.ld, params) if spec.ld is not None else minor
        if ld < minor:
            raise PatternError(f"{place}.ld", f"leading dimension {ld} is smaller than {minor}")
        major = rows if spec.layout == "row-major" else cols
        length = constant(spec.length, params) if spec.length else major * ld
        if length < (major - 1) * ld + minor:
            raise PatternError(f"{place}.length", f"{length} elements cannot hold the shape")
    else:
        assert spec.length is not None  # an array without a shape has a length (pattern.py)
        length = constant(spec.length, params)
    if length < 1:
        raise PatternError(f"{place}.length", f"must be at least 1, got {length}")
    base = spec.base if spec.base is not None else next_free
    arr = ResolvedArray(spec, length, rows, cols, ld, base + spec.offset_bytes)
    if arr.end > MAX_ADDRESS:
        raise PatternError(place, f"the array ends at byte {arr.end}, past the 64-bit "
                                  f"address range (at most {MAX_ADDRESS})")
    return arr


LAZY_KINDS = ("arange", "constant", "expr")  # values computed from the index alone


class Values:
    """A readable array's element values (int64), read as `values[index]`. Until `whole()`
    has built the whole array, the kinds of LAZY_KINDS are computed at the indices read only
    (one warp reads 32: its detail costs no n-element array); other kinds, and every kind
    after `whole()`, index the whole array, built once. Both give the same numbers."""

    def __init__(self, arr: ResolvedArray, params: dict[str, int], roots: Roots):
        self.arr, self.params, self.roots = arr, params, roots
        self.place = f"arrays.{arr.spec.name}.values"
        if arr.length > MAX_VALUE_ELEMENTS:
            raise PatternError(self.place, f"{arr.length} readable elements is over the limit "
                                           f"of {MAX_VALUE_ELEMENTS}; use a smaller length")
        self._whole: np.ndarray | None = None
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self.arr.length

    def whole(self) -> np.ndarray:
        """Every element -> int64 array of `length` (built on first use, held after)."""
        with self._lock:
            if self._whole is None:
                self._whole = _values(self.arr, self.params, self.roots)
        return self._whole

    def __getitem__(self, index: np.ndarray | np.integer[Any]) -> np.ndarray:
        """Element indices (an integer array, in [0, length)) -> their values, same shape."""
        v = self.arr.spec.values
        assert v is not None  # a readable array
        if self._whole is not None or v["kind"] not in LAZY_KINDS or not isinstance(
                index, (np.ndarray, np.integer)):
            found: np.ndarray = self.whole()[index]
            return found
        picks = np.array(index, dtype=np.int64)
        if v["kind"] == "arange":
            return picks
        if v["kind"] == "constant":
            return np.full(picks.shape, v["value"], dtype=np.int64)
        e = expression(v["expr"], f"{self.place}.expr")
        out = evaluate_at(e, ConstantScope(self.params, {"i": picks}), EVERY_LANE)
        values: np.ndarray = np.broadcast_to(np.asarray(out, dtype=np.int64),
                                             picks.shape).copy()
        return values


def _values(arr: ResolvedArray, params: dict[str, int], roots: Roots) -> np.ndarray:
    """The element values of a readable array -> int64 array of `length` (a values file
    read inside the pattern's `roots`)."""
    v, n, place = arr.spec.values, arr.length, f"arrays.{arr.spec.name}.values"
    assert v is not None  # a readable array
    reserve(n * 8, f"{n:,} readable values", place)
    kind = v["kind"]
    if kind == "arange":
        return np.arange(n, dtype=np.int64)
    if kind == "constant":
        return np.full(n, v["value"], dtype=np.int64)
    if kind == "permutation":
        return np.random.default_rng(v["seed"]).permutation(n).astype(np.int64, copy=False)
    if kind == "uniform":
        return np.random.default_rng(v["seed"]).integers(v["low"], v["high"], n, dtype=np.int64)
    if kind == "expr":
        return _values_expr(expression(v["expr"], f"{place}.expr"), n, params)
    return _values_file(roots.resolve(v["path"], f"{place}.path"), n, f"{place}.path", roots)


def _values_expr(e: Expr, n: int, params: dict[str, int]) -> np.ndarray:
    """values.expr of i = 0..n-1 -> int64 array, evaluated VALUE_CHUNK elements at a time so
    that its temporaries stay small beside the result."""
    out = np.empty(n, dtype=np.int64)
    for lo in range(0, n, VALUE_CHUNK):
        hi = min(n, lo + VALUE_CHUNK)
        i = np.arange(lo, hi, dtype=np.int64)
        out[lo:hi] = evaluate_at(e, ConstantScope(params, {"i": i}), EVERY_LANE)
    return out


NPY_HEADER_BYTES = 65536  # the magic, version, length and header dict of a .npy file
NPY_VERSIONS = ((1, 0), (2, 0), (3, 0))  # the .npy format versions numpy writes


class _BadNpy(Exception):
    """What is wrong with a .npy file, in words."""


def _values_file(path: Path, n: int, place: str, roots: Roots | None = None) -> np.ndarray:
    """A 1-D integer .npy file (its header parsed, never unpickled) -> its first n values as
    int64. Only the header and then n values are read (inside `roots`, if given)."""
    try:
        offset, dtype = _npy_header(read_bytes(path, NPY_HEADER_BYTES, place, whole=False,
                                               roots=roots), n)
        size = offset + n * dtype.itemsize
        if dtype != np.int64:  # converted: the file's bytes and the int64 copy both live
            reserve(n * dtype.itemsize, f"{n:,} values read from {path.name}", place)
        data = read_bytes(path, size, place, whole=False, roots=roots)
        if len(data) < size:
            raise _BadNpy(f"it is shorter than its header says ({n} values of "
                          f"{dtype.itemsize} bytes after {offset} bytes of header)")
    except _BadNpy as err:
        raise read_error(path, place, str(err)) from None
    return np.frombuffer(data, dtype, count=n, offset=offset).astype(np.int64, copy=False)


def _npy_header(head: bytes, n: int) -> tuple[int, np.dtype]:
    """The first bytes of a .npy file (of a version in NPY_VERSIONS) -> (bytes before its
    data, dtype), for an array of at least n integers; _BadNpy otherwise. Version 3.0 differs
    from 2.0 only in a UTF-8 header, which an integer array's header never needs."""
    stream = io.BytesIO(head)
    try:
        version = npy_format.read_magic(stream)
    except Exception:  # noqa: BLE001 - no magic: numpy raises ValueError, short input EOF
        raise _BadNpy("not a .npy file (or its header is damaged)") from None
    if version not in NPY_VERSIONS:
        raise _BadNpy(f"it is a .npy file of format version {version[0]}.{version[1]}; only "
                      "1.0, 2.0 and 3.0 are read")
    try:
        read_header = (npy_format.read_array_header_1_0 if version == (1, 0)
                       else npy_format.read_array_header_2_0)
        shape, _, dtype = read_header(stream, max_header_size=NPY_HEADER_BYTES)
    except Exception:  # noqa: BLE001 - numpy's header reader raises many kinds on damaged
        # headers (ValueError, SyntaxError, tokenize.TokenError, RecursionError, ...)
        raise _BadNpy("not a .npy file (or its header is damaged)") from None
    if len(shape) != 1 or dtype.kind not in "iu":
        raise _BadNpy(f"it must hold a 1-D integer array, got {dtype} with shape {shape}")
    if shape[0] < n:
        raise _BadNpy(f"it holds {shape[0]} values, the array needs {n}")
    return stream.tell(), dtype


class Threads:
    """Coordinates of global warps [lo, hi) as (warps, 32) int64 arrays, built on first use.

    `warp` (warps,) global warp indices; `thread` and `block` (x, y, z) per lane; `valid`
    marks lanes that exist (False past the end of a partial warp).
    """

    def __init__(self, warp: np.ndarray, block_dims: tuple[int, int, int],
                 grid_dims: tuple[int, int, int], warps_per_block: int):
        self.warp = warp
        self._block_dims, self._grid_dims = block_dims, grid_dims
        self._block_linear, in_block = np.divmod(warp, warps_per_block)
        self._t = in_block[:, None] * WARP_SIZE + np.arange(WARP_SIZE, dtype=np.int64)
        self.shape = self._t.shape

    @cached_property
    def valid(self) -> np.ndarray:
        bx, by, bz = self._block_dims
        return self._t < bx * by * bz

    @cached_property
    def thread(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        bx, by, bz = self._block_dims
        if by == bz == 1:
            zero = np.zeros(self.shape, dtype=np.int64)
            return self._t, zero, zero
        rest, tx = np.divmod(self._t, bx)
        tz, ty = np.divmod(rest, by)
        return tx, ty, tz

    @cached_property
    def block(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        gx, gy, _ = self._grid_dims
        rest, bxi = np.divmod(self._block_linear, gx)
        bzi, byi = np.divmod(rest, gy)
        x, y, z = (np.broadcast_to(b[:, None], self.shape) for b in (bxi, byi, bzi))
        return x, y, z


@dataclass(frozen=True)
class Instruction:
    """A static memory instruction: what the accounting sheet names and sizes."""

    name: str
    op: str  # "load" | "store"
    array: str  # the array's name; several, joined by ", ", for a pointer into several
    width: int  # bytes per lane access
    line: int | None = None  # source position, for kernels read from CUDA
    column: int | None = None
    source: str | None = None
    ptx: str | None = None  # the PTX operation, for compiled kernels ("st.global.f32")
    file: str | None = None  # the included file the line is in (None: the kernel's own)
    sass: str | None = None  # the SASS opcode with its width, counted in SASS ("LDS.128")
    sass_offset: int | None = None  # that SASS instruction's byte offset in the kernel's code

    @property
    def first_array(self) -> str:
        """The (lowest placed) array the instruction touches: where its offsets count from."""
        return self.array.split(", ")[0]


@dataclass(frozen=True)
class InstructionNamed:
    """Which instruction a row of figures is about: an Instruction's fields (mixed in before
    the figures' class, so they follow its fields: `class X(InstructionNamed, Figures)`)."""

    name: str = ""
    op: str = ""
    array: str = ""
    width: int = 0
    line: int | None = None
    column: int | None = None
    source: str | None = None
    ptx: str | None = None
    file: str | None = None
    sass: str | None = None
    sass_offset: int | None = None


def instruction_fields(ins: Instruction) -> dict[str, Any]:
    """An Instruction -> the InstructionNamed fields, as keywords."""
    return {f.name: getattr(ins, f.name) for f in fields(InstructionNamed)}


@dataclass(frozen=True)
class Batch:
    """One execution of one access by a range of warps: (warps, 32) arrays."""

    active: np.ndarray  # bool
    element: np.ndarray  # element index (linear, after layout)
    address: np.ndarray  # byte address of each lane's first byte
    row: np.ndarray | None
    col: np.ndarray | None
    iteration: dict[str, np.ndarray]  # loop var -> (warps, 32) values


_NO_PLANS: Mapping[int, "AffinePlan"] = MappingProxyType({})


def _constant_dims(dims: tuple[Expr, Expr, Expr], params: dict[str, int]
                   ) -> tuple[int, int, int]:
    """A launch's (x, y, z) expressions -> their constant values."""
    x, y, z = (constant(e, params) for e in dims)
    return x, y, z


class Launch:
    """A pattern's launch and arrays with every constant evaluated: grid, block, array
    placement (byte addresses), readable values, thread coordinates of any warp range. The
    base of both front ends: `Kernel` (pattern accesses) and the PTX engine's kernels."""

    lane_bytes = 0  # bytes per lane a trace holds beyond the batches (a PTX kernel's registers)
    # the optional parts of a front end (frontend.FrontEnd), none unless a front end has them
    constant_instructions: tuple[Instruction, ...] = ()
    local_instructions: tuple[Instruction, ...] = ()
    assumptions: tuple[str, ...] = ()
    assembler = ""  # what made the SASS a compiled kernel carries (`ptxas 13.0 for sm_90`)

    def __init__(self, pattern: Pattern, arrays: tuple[ArraySpec, ...] | None = None):
        """`arrays` replaces the pattern's own specs (a CUDA kernel fills in pointee dtypes)."""
        self.pattern = pattern
        self.params = pattern.integer_params  # what expressions read
        self.grid = _constant_dims(pattern.grid, self.params)
        self.block = _constant_dims(pattern.block, self.params)
        self._check_launch()
        self.threads_per_block = self.block[0] * self.block[1] * self.block[2]
        self.warps_per_block = -(-self.threads_per_block // WARP_SIZE)
        self.blocks = self.grid[0] * self.grid[1] * self.grid[2]
        self.warps = self.blocks * self.warps_per_block
        self.arrays: dict[str, ResolvedArray] = {}
        next_free = {"global": 0, "shared": 0}  # shared arrays: offsets in a block's memory
        for spec in pattern.arrays if arrays is None else arrays:
            arr = _resolve_array(spec, self.params, next_free[spec.space])
            self.arrays[spec.name] = arr
            align = SHARED_ALIGN if spec.space == "shared" else CUDA_MALLOC_ALIGN
            next_free[spec.space] = -(-arr.end // align) * align

    @cached_property
    def closed_forms(self) -> Mapping[int, "AffinePlan"]:
        """Global instructions counted per warp by affine plans: none unless a front end
        has them."""
        return _NO_PLANS

    def _check_launch(self) -> None:
        for key, dims, limits in (("grid", self.grid, MAX_GRID), ("block", self.block, MAX_BLOCK)):
            for axis, (value, limit) in enumerate(zip(dims, limits)):
                if not 1 <= value <= limit:
                    raise PatternError(f"launch.{key}[{axis}]",
                                       f"{value} is outside CUDA's limit [1, {limit}]")
        threads = self.block[0] * self.block[1] * self.block[2]
        if threads > MAX_BLOCK_THREADS:
            raise PatternError("launch.block", f"{threads} threads per block is over CUDA's "
                                               f"limit of {MAX_BLOCK_THREADS}")
        total = threads * self.grid[0] * self.grid[1] * self.grid[2]
        if total > MAX_THREADS:
            raise PatternError("launch", f"{total} threads is more than sectorviz analyzes "
                                         f"({MAX_THREADS}); shrink the grid")

    @cached_property
    def values(self) -> dict[str, Values]:
        """Readable arrays -> their element values (each evaluated where read, or whole)."""
        return {name: Values(arr, self.params, self.pattern.roots)
                for name, arr in self.arrays.items() if arr.spec.values is not None}

    @property
    def files_read(self) -> tuple[Path, ...]:
        """The `.npy` files the pattern's arrays take their values from (read when used)."""
        return tuple(Path(self.pattern.base_dir) / arr.spec.values["path"]
                     for arr in self.arrays.values()
                     if arr.spec.values is not None and "path" in arr.spec.values)

    def closed_trace(self, lo: int, most: int, sector_bytes: int, per_warp: bool = False
                     ) -> "ClosedStep | None":
        """No closed-form run of whole warps: the lane path counts every warp."""
        return None

    def warp_closed(self, warp: int, sector_bytes: int) -> "list[WarpAccess] | None":
        """No closed form of one warp's executions as its lane path lists them (loop
        variables, rows and columns included): one_warp.py runs the lane path."""
        return None

    def events(self, lo: int, hi: int, threads: Threads | None = None,
               skip: Collection[int] = ()) -> Iterator[tuple[str, int, Batch | None]]:
        """Every (space, instruction index in that space, execution) of warps [lo, hi)."""
        raise NotImplementedError

    def trace(self, lo: int, hi: int, threads: Threads | None = None,
              skip: Collection[int] = ()) -> Iterator[tuple[int, Batch | None]]:
        """Every (global instruction index, execution) of warps [lo, hi), in program order;
        each loop iteration of an access is one more execution. An instruction in `skip`
        yields (index, None) once instead, where the caller counts it by other means."""
        for space, k, batch in self.events(lo, hi, threads, skip):
            if space == "global":
                yield k, batch

    def space_trace(self, space: str, lo: int, hi: int, threads: Threads | None = None
                    ) -> Iterator[tuple[int, Batch]]:
        """Every (instruction index, execution) of warps [lo, hi) in `space` ("shared",
        "constant", "local": byte offsets or addresses in that memory)."""
        for where, k, batch in self.events(lo, hi, threads):
            if where == space and batch is not None:
                yield k, batch

    def whole_values(self) -> None:
        """Build every readable array whole (a grid-wide run reads most of them), within the
        open budget's memory cap."""
        for values in self.values.values():
            values.whole()

    def work_estimate(self, warps: int, closed: Collection[int] = ()) -> tuple[int, str]:
        """(units of work a run over `warps` warps takes at least, what asks for them): every
        lane runs the kernel at least once."""
        return warps * WARP_SIZE, self._asker(warps, [])

    def _asker(self, warps: int, parts: list[str]) -> str:
        """Who asks for the work: the launch's threads (or some warps), times `parts`."""
        who = (f"the launch of {self.blocks * self.threads_per_block:,} threads"
               if warps == self.warps else f"{warps:,} warp{'s' * (warps != 1)}")
        return who + (f" x ({', '.join(parts)})" if parts else "")

    # ------------------------------------------------------------ threads

    def threads(self, lo: int, hi: int) -> Threads:
        """Coordinates of global warps [lo, hi)."""
        if not 0 <= lo <= hi <= self.warps:
            raise PatternError("warp", f"warp range [{lo}, {hi}) outside [0, {self.warps})")
        return Threads(np.arange(lo, hi, dtype=np.int64), self.block, self.grid,
                       self.warps_per_block)


class Kernel(Launch):
    """A pattern-file kernel: its accesses to global arrays are the `instructions`, run by
    `trace`; those to shared arrays are the `shared_instructions`; `events` runs both."""

    def __init__(self, pattern: Pattern):
        super().__init__(pattern)
        self.lets = pattern.lets
        # access index -> (space, index among that space's instructions)
        self.spaces: list[tuple[str, int]] = []
        found: dict[str, list[Instruction]] = {"global": [], "shared": []}
        for a in pattern.accesses:
            spec = self.arrays[a.array].spec
            self.spaces.append((spec.space, len(found[spec.space])))
            found[spec.space].append(Instruction(a.name, a.op, a.array, spec.elem_bytes))
        self.instructions = tuple(found["global"])
        self.shared_instructions = tuple(found["shared"])

    def work_estimate(self, warps: int, closed: Collection[int] = ()) -> tuple[int, str]:
        """(units of work a run over `warps` warps takes at least, what asks for them): each
        access runs once per lane and chunk (a closed form: one execution), times the
        trips of its loops whose bounds are constants; a loop whose bounds vary counts once
        here, and is sized (and refused) where it starts."""
        units, parts = 0, []
        for access, (space, k) in zip(self.pattern.accesses, self.spaces):
            if space == "global" and k in closed:
                units += BATCH_UNITS
                continue
            trips = 1
            for loop in access.loops:
                trips *= _constant_trips(loop, self.params)
            units += max(trips, 1) * (warps * WARP_SIZE + BATCH_UNITS)
            if trips > 1:
                parts.append(f"{trips:,} executions of {access.place}")
        return units, self._asker(warps, parts)

    @cached_property
    def closed_forms(self) -> dict[int, "AffinePlan"]:
        """Accesses whose addresses are affine in the thread coordinates -> their plans, which
        the analysis counts per warp instead of per lane (see affine.py)."""
        from .affine import plan_access
        plans = {k: plan_access(self, a) for a, (space, k) in enumerate(self.spaces)
                 if space == "global"}
        return {k: plan for k, plan in plans.items() if plan is not None}

    def events(self, lo: int, hi: int, threads: Threads | None = None,
               skip: Collection[int] = ()) -> Iterator[tuple[str, int, Batch | None]]:
        """Every (space, instruction index in that space, execution) of warps [lo, hi), in
        program order; shared addresses are byte offsets in the block's shared memory. A
        global instruction in `skip` yields once with None. Each execution is charged to the
        open work budget: its lanes and BATCH_UNITS."""
        budget = current()
        threads = threads or self.threads(lo, hi)
        scope = ThreadScope(self, threads)
        running = threads.valid
        if self.pattern.guard is not None:
            running = running & truth_at(self.pattern.guard, scope, running)
        for access, (space, k) in zip(self.pattern.accesses, self.spaces):
            if space == "global" and k in skip:
                yield space, k, None  # the caller counts it here, keeping program order
                continue
            mask = running
            if access.guard is not None:
                mask = mask & truth_at(access.guard, scope, mask)
            for batch in self._loop_executions(access, 0, scope, mask, budget):
                budget.charge(mask.size + BATCH_UNITS, "this access", access.place)
                yield space, k, batch

    def _loop_executions(self, access: Access, depth: int, scope: "ThreadScope",
                         mask: np.ndarray, budget: Budget) -> Iterator[Batch]:
        """The executions of `access` from loop `depth` in: range(start, stop, step) per lane,
        with bounds evaluated once; a loop that would pass the budget is refused before it
        runs, and a lane stops where its variable would wrap past 64 bits."""
        if depth == len(access.loops):
            if mask.any():
                yield self._batch(access, scope, mask)
            return
        loop, place = access.loops[depth], f"{access.place}.loops[{depth}]"
        start = evaluate_at(loop.start, scope, mask)
        stop = evaluate_at(loop.stop, scope, mask)
        step = evaluate_at(loop.step, scope, mask)
        if np.any(mask & (np.broadcast_to(step, mask.shape) == 0)):
            raise PatternError(loop.step.place, "step must not be 0")
        trips = _most_trips(start, stop, step, mask)
        budget.check(int(min(trips, 2.0**62)) * (mask.size + BATCH_UNITS),
                     f"this loop of {trips:,.0f} iterations over {mask.size:,} lanes", place)
        var = np.broadcast_to(start, mask.shape).copy()
        alive = mask & np.where(step > 0, var < stop, var > stop)
        while alive.any():
            scope.loop_vars[loop.var] = var
            yield from self._loop_executions(access, depth + 1, scope, alive, budget)
            after = var + step
            wrapped = np.where(step > 0, after < var, after > var)
            var = after
            alive = alive & ~wrapped & np.where(step > 0, var < stop, var > stop)
        scope.loop_vars.pop(loop.var, None)

    def _batch(self, access: Access, scope: "ThreadScope", mask: np.ndarray) -> Batch:
        arr = self.arrays[access.array]
        row = col = None
        if access.index is not None:
            element = _full(evaluate_at(access.index, scope, mask), mask.shape)
            _check_range(element, mask, arr.length, access.index.place, "element index", scope)
        else:
            # no index: the access gives `at`, and its array has a shape (pattern.py)
            assert access.at is not None and arr.rows is not None and arr.cols is not None
            row = _full(evaluate_at(access.at[0], scope, mask), mask.shape)
            col = _full(evaluate_at(access.at[1], scope, mask), mask.shape)
            _check_range(row, mask, arr.rows, access.at[0].place, "row", scope)
            _check_range(col, mask, arr.cols, access.at[1].place, "col", scope)
            element = arr.linear(row, col)
        address = arr.address0 + element * arr.spec.elem_bytes
        return Batch(mask, element, address, row, col, dict(scope.loop_vars))


def _constant_trips(loop: Loop, params: dict[str, int]) -> int:
    """Trips of range(start, stop, step) when its bounds are constants over params, else 1."""
    try:
        start, stop, step = (constant(e, params) for e in (loop.start, loop.stop, loop.step))
    except PatternError:
        return 1
    if step == 0:
        return 1
    return max(0, -((start - stop) // step))


def _most_trips(start: Value, stop: Value, step: Value, mask: np.ndarray) -> float:
    """The most iterations any lane of `mask` runs range(start, stop, step) for (in float64,
    so bounds near the ends of int64 cannot overflow; exact enough to size the work)."""
    start, stop, step = (np.asarray(v, dtype=np.float64) for v in (start, stop, step))
    trips = np.ceil((stop - start) / np.where(step == 0, 1, step))
    return float(np.max(np.where(mask, trips, 0), initial=0))


def _full(values: Value, shape: tuple[int, ...]) -> np.ndarray:
    full: np.ndarray = np.broadcast_to(values, shape)
    return full


def _check_range(values: np.ndarray, mask: np.ndarray, limit: int, place: str, what: str,
                 scope: "ThreadScope") -> None:
    """Raise if an active lane's value lies outside [0, limit)."""
    if mask.all() and values.min() >= 0 and values.max() < limit:
        return
    bad = mask & ((values < 0) | (values >= limit))
    if bad.any():
        w, lane = np.argwhere(bad)[0]
        raise PatternError(place, f"{what} {int(values[w, lane])} outside [0, {limit}) "
                                  f"at warp {int(scope.threads.warp[w])} lane {int(lane)}")


class ThreadScope:
    """Names for per-thread expressions over a range of warps: (warps, 32) int64 values."""

    def __init__(self, kernel: Kernel, threads: Threads):
        self.kernel = kernel
        self.threads = threads
        self.shape = threads.shape
        self.loop_vars: dict[str, np.ndarray] = {}
        self._lets = dict(kernel.lets)
        self._let_cache: dict[str, tuple[np.ndarray, Value]] = {}
        self._builtins: dict[str, Value] = {"warpSize": np.int64(WARP_SIZE)}
        for axis, a in enumerate("xyz"):
            self._builtins[f"threadIdx.{a}"] = threads.thread[axis]
            self._builtins[f"blockIdx.{a}"] = threads.block[axis]
            self._builtins[f"blockDim.{a}"] = np.int64(kernel.block[axis])
            self._builtins[f"gridDim.{a}"] = np.int64(kernel.grid[axis])

    def lookup(self, name: str, mask: np.ndarray, col: int) -> Value:
        if name in self.loop_vars:
            return self.loop_vars[name]
        if name in self._builtins:
            return self._builtins[name]
        if name in self._lets:
            return self._let(name, mask)
        if name in self.kernel.params:
            param: np.int64 = np.int64(self.kernel.params[name])
            return param
        raise ExprError(f"unknown name {name!r}", col)

    def _let(self, name: str, mask: np.ndarray) -> Value:
        cached = self._let_cache.get(name)
        if cached is not None and not np.any(mask & ~cached[0]):
            return cached[1]
        value = evaluate_at(self._lets[name], self, mask)
        self._let_cache[name] = (np.broadcast_to(mask, self.shape), value)
        return value

    def array_values(self, name: str, col: int) -> ArrayValues:
        return self.kernel.values[name]
