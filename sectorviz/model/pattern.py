"""Pattern files (`*.sectorviz.json`, format `sectorviz.pattern/1`) -> an immutable Pattern.

A Pattern is the validated, parsed description of one kernel's memory instructions. It keeps
the document it came from (`to_dict()`), so an editor can change a copy and build a new one.
Nothing in a pattern file is executed: expressions go through `expr.parse`, files are read
with numpy's pickle-free loader.
"""

from __future__ import annotations

import difflib
import gc
import json
import math
import re
import threading
from collections import ChainMap
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NoReturn

from .cache import Machine, machine
from .errors import PatternError
from .expect import check_expect
from .expr import (
    BUILTIN_VECTORS,
    FUNCTIONS,
    Node,
    Num,
    TreeNames,
    first_column,
    names_in,
)
from .expr_shape import Parsed, parsed_at
from .files import MAX_TEXT_BYTES, Roots, pattern_roots, read_text
from .json_keys import DuplicateKey, first_duplicate, unique_pairs
from .json_text import indented_json
from .python_kernel import PYTHON_KEYS, PYTHON_TEXTS, check_python_keys, triton_block

FORMAT = "sectorviz.pattern/1"

DTYPE_BYTES = {
    "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2,
    "int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8,
}
_VECTOR_BASE_BYTES = {"char": 1, "uchar": 1, "short": 2, "ushort": 2, "int": 4, "uint": 4,
                      "long": 8, "ulong": 8, "longlong": 8, "ulonglong": 8, "float": 4,
                      "double": 8}
DTYPE_BYTES |= {f"{base}{n}": size * n  # CUDA's vector types: float4 is 16 bytes
                for base, size in _VECTOR_BASE_BYTES.items() for n in (1, 2, 3, 4)}
DTYPE_BYTES |= {"half2": 4, "__half2": 4, "__nv_bfloat162": 4}
LAYOUTS = ("row-major", "col-major")
VALUE_KINDS = {
    "arange": set(), "expr": {"expr"}, "constant": {"value"}, "permutation": {"seed"},
    "uniform": {"low", "high", "seed"}, "file": {"path"},
}
TOP_KEYS = {"format", "name", "notes", "sector_size", "sector_bytes", "launch", "params", "arrays",
            "let", "guard", "accesses", "kernel", "machine", "expect", "assume_values"}
#: what `assume_values` (and report --assume-values) may assume (assume.py)
ASSUME_KINDS = ("uniform",)
KERNEL_KEYS = {"source", "code", "ptx", "function", "dynamic_shared_bytes", "engine", "level",
               "arch", "flags", *PYTHON_TEXTS, *PYTHON_KEYS}
KERNEL_TEXTS = ("source", "code", "ptx", *PYTHON_TEXTS)  # where the kernel is: one of these
COMPILE_KEYS = ("engine", "arch", "flags")  # how a .cu is compiled; a PTX file is compiled
ENGINES = ("compiled", "source")  # what counts a kernel: the PTX nvcc emits, or the source
LEVELS = ("sass", "ptx")  # what the compiled engine counts: the SASS ptxas makes, or the PTX
MAX_FLAGS = 64  # entries of kernel.flags
ARCH = re.compile(r"sm_\d{2,3}[af]?")  # the compiled engine's target: sm_90, sm_90a, sm_100f
# Shared memory per block on sm_90 (H100, H200), the most any GPU gives: static `__shared__`
# variables at most 48 KiB, static plus dynamic at most 227 KiB (CUDA Programming Guide,
# "Technical Specifications per Compute Capability").
MAX_STATIC_SHARED = 48 * 1024
MAX_BLOCK_SHARED = 227 * 1024
MAX_DYNAMIC_SHARED = MAX_BLOCK_SHARED  # bytes of `extern __shared__` memory a launch may ask
LAUNCH_KEYS = {"grid", "block"}
ARRAY_KEYS = {"dtype", "length", "shape", "layout", "ld", "base", "offset_bytes", "values",
              "space"}
SPACES = ("global", "shared")
ACCESS_KEYS = {"name", "op", "array", "index", "at", "guard", "loops"}
LOOP_KEYS = {"var", "start", "stop", "step"}
BUILTIN_NAMES = {f"{v}.{a}" for v in BUILTIN_VECTORS for a in "xyz"} | {"warpSize"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*\Z")  # \Z: "a\n" is no name ($ would pass it)
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1
MAX_SECTOR_BYTES = 4096  # bytes; the per-phase tables of the closed forms have this many rows
MAX_LOOPS = 16  # nested loops per access
MAX_DEPTH = 200  # levels of an expression with the lets it reads expanded in place
LET_LEVELS = 3  # extra levels a let read costs: its evaluation nests a few more calls
MAX_INT_DIGITS = 40  # a JSON integer literal longer than this is never converted


@dataclass(frozen=True)
class LongInteger:
    """A JSON integer literal of more than MAX_INT_DIGITS characters, kept unconverted (by
    its length) so the place that reads it can refuse it by name."""

    digits: int

    def __repr__(self) -> str:
        return f"an integer of {self.digits:,} digits"


def _json_int(text: str) -> int | LongInteger:
    """A JSON integer literal -> int, or LongInteger when too long to be any 64-bit value."""
    return int(text) if len(text) <= MAX_INT_DIGITS else LongInteger(len(text))


# ---------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Expr:
    """An expression with its source text and the place it came from; equal texts at equal
    places are equal expressions (the parse follows from the text)."""

    text: str
    place: str
    parsed: Parsed = field(compare=False, repr=False)

    @property
    def tree(self) -> Node:
        return self.parsed.tree

    @property
    def names(self) -> set[str]:
        return names_in(self.tree)

    @property
    def tree_names(self) -> TreeNames:
        """The names the tree reads and their levels (a column: expr.first_column)."""
        return self.parsed.names


ONE = Parsed.of_tree(Num(1, 1))  # a launch dimension not given


@dataclass(frozen=True)
class ArraySpec:
    """One array: element i lives at bytes [address(i), address(i) + elem_bytes)."""

    name: str
    dtype: str | None  # a DTYPE_BYTES name, "bytes:k", or None: the kernel's pointee type
    elem_bytes: int  # 0 until a CUDA kernel's pointee type fills it in
    length: Expr | None  # None: derived from shape and ld
    shape: tuple[Expr, Expr] | None
    layout: str
    ld: Expr | None
    base: int | None
    offset_bytes: int
    values: dict[str, Any] | None
    space: str = "global"  # "shared": per block, addresses are offsets in its shared memory


@dataclass(frozen=True)
class Loop:
    var: str
    start: Expr
    stop: Expr
    step: Expr


@dataclass(frozen=True)
class Access:
    """One memory instruction: (lane) -> element index (or (row, col)) of `array`."""

    name: str
    op: str  # "load" | "store"
    array: str
    index: Expr | None
    at: tuple[Expr, Expr] | None
    guard: Expr | None
    loops: tuple[Loop, ...]
    place: str


@dataclass(frozen=True, eq=False)
class Pattern:
    """A validated pattern. `source` is the canonical JSON text it was built from; two patterns
    are equal when they come from the same text in the same folder with the same include
    folders (`include_dirs`, the user's --include-dir: where else its files may be read)."""

    name: str
    notes: str
    sector_bytes: int
    grid: tuple[Expr, Expr, Expr]
    block: tuple[Expr, Expr, Expr]
    params: tuple[tuple[str, int | float], ...]  # a float: only a kernel's argument
    arrays: tuple[ArraySpec, ...]
    lets: tuple[tuple[str, Expr], ...]
    guard: Expr | None
    accesses: tuple[Access, ...]
    source: str
    base_dir: str
    # {"source", "code" or "ptx", "function"}: a CUDA kernel instead of accesses
    kernel: dict[str, Any] | None = None
    machine: Machine | None = None  # the cache model's machine (cache.py), if one is set
    include_dirs: tuple[str, ...] = ()
    assume_values: str | None = None  # values for arrays a kernel needs and lacks (assume.py)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Pattern) and (self.source, self.base_dir, self.include_dirs) \
            == (other.source, other.base_dir, other.include_dirs)

    def __hash__(self) -> int:
        return hash((self.source, self.base_dir, self.include_dirs))

    @property
    def roots(self) -> Roots:
        """Where its kernel source, includes and values files may be read from."""
        return pattern_roots(self.base_dir, self.include_dirs)

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(self.source)
        return doc

    @property
    def integer_params(self) -> dict[str, int]:
        """The integer params by name: the constants expressions read."""
        return {n: v for n, v in self.params if not isinstance(v, float)}

    def array(self, name: str) -> ArraySpec:
        return next(a for a in self.arrays if a.name == name)

    @cached_property
    def let_trees(self) -> LetTrees:
        """Its lets, name -> tree; a let's tree is built when first read (one map per pattern,
        not one per access)."""
        return LetTrees(self.lets)


class LetTrees(Mapping[str, Node]):
    """Let name -> its expression's tree, built when first read (a reader that follows the
    lets one access uses builds only those)."""

    def __init__(self, lets: Iterable[tuple[str, Expr]]):
        self._exprs = dict(lets)

    def __getitem__(self, name: str) -> Node:
        return self._exprs[name].tree

    def __contains__(self, name: object) -> bool:
        return name in self._exprs

    def __iter__(self) -> Iterator[str]:
        return iter(self._exprs)

    def __len__(self) -> int:
        return len(self._exprs)


# ---------------------------------------------------------------- helpers


def suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_keys(obj: Any, allowed: set[str], place: str,
                required: tuple[str, ...] = ()) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise PatternError(place, f"expected an object, got {_kind(obj)}")
    for key in obj:
        if key not in allowed:
            raise PatternError(f"{place}.{key}" if place else key,
                               f"unknown key {key!r}" + suggest(key, allowed))
    for key in required:
        if key not in obj:
            raise PatternError(place or "pattern", f"missing key {key!r}")
    return obj


def _kind(value: Any) -> str:
    if isinstance(value, LongInteger):
        return repr(value)
    return {dict: "an object", list: "a list", str: "text", bool: "true/false",
            type(None): "null", float: "a fractional number", int: "an integer"}.get(
        type(value), type(value).__name__)


def _int(value: Any, place: str, low: int | None = None) -> int:
    if isinstance(value, LongInteger):
        raise PatternError(place, f"{value!r} does not fit in a signed 64-bit integer")
    if not isinstance(value, int) or isinstance(value, bool):
        raise PatternError(place, f"expected an integer, got {_kind(value)}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise PatternError(place, f"{value} does not fit in a signed 64-bit integer")
    if low is not None and value < low:
        raise PatternError(place, f"must be at least {low}, got {value}")
    return value


def _param(value: Any, place: str) -> int | float:
    """A param: an integer, or a finite JSON number with a fraction or exponent (a float)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PatternError(place, f"{value} is not a finite number")
        return value
    return _int(value, place)


def expression(value: Any, place: str) -> Expr:
    if isinstance(value, bool) or not isinstance(value, (int, str, LongInteger)):
        raise PatternError(place, f"expected an expression (text or integer), got {_kind(value)}")
    if not isinstance(value, str):
        return Expr(str(value), place, Parsed.of_tree(Num(_int(value, place), 1)))
    return Expr(value, place, parsed_at(value, place))


def _text(value: Any, place: str) -> str:
    if not isinstance(value, str):
        raise PatternError(place, f"expected text, got {_kind(value)}")
    return value


def _identifier(name: str, place: str, taken: Mapping[str, str]) -> str:
    if not _IDENT.match(name):
        raise PatternError(place, f"{name!r} is not a valid name (letters, digits, _)")
    if name in BUILTIN_VECTORS or name in FUNCTIONS or name == "warpSize":
        raise PatternError(place, f"{name!r} is a built-in name")
    if name in taken:
        raise PatternError(place, f"{name!r} is already the name of {taken[name]}")
    return name


# ---------------------------------------------------------------- parts


def _launch(obj: Any, derived_block: int | None = None
            ) -> tuple[tuple[Expr, Expr, Expr], tuple[Expr, Expr, Expr]]:
    """`launch` -> (grid, block); a Triton kernel's block is derived (32 x num_warps)."""
    _check_keys(obj, LAUNCH_KEYS, "launch",
                required=("grid",) if derived_block else ("grid", "block"))
    if derived_block and "block" in obj:
        raise PatternError("launch.block", "a Triton launch's block is 32 x num_warps "
                                           f"({derived_block} threads); leave it out")
    dims: list[tuple[Expr, Expr, Expr]] = []
    for key in ("grid", "block"):
        entries = obj[key] if key in obj else derived_block
        place = f"launch.{key}"
        if isinstance(entries, (int, str, LongInteger)) and not isinstance(entries, bool):
            entries = [entries]
        if not isinstance(entries, list) or not 1 <= len(entries) <= 3:
            raise PatternError(place, "expected a list of 1 to 3 entries [x, y, z]")
        exprs = [expression(e, f"{place}[{i}]") for i, e in enumerate(entries)]
        exprs += [Expr("1", f"{place}[{i}]", ONE) for i in range(len(exprs), 3)]
        x, y, z = exprs
        dims.append((x, y, z))
    return dims[0], dims[1]


def _values(obj: Any, place: str) -> dict[str, Any]:
    if not isinstance(obj, dict) or "kind" not in obj:
        raise PatternError(place, "expected an object with a 'kind' "
                                  f"({', '.join(VALUE_KINDS)})")
    kind = obj["kind"]
    if not isinstance(kind, str) or kind not in VALUE_KINDS:
        raise PatternError(f"{place}.kind",
                           f"unknown kind {kind!r}" + suggest(str(kind), VALUE_KINDS))
    needed = VALUE_KINDS[kind]
    _check_keys(obj, needed | {"kind"}, place, required=tuple(sorted(needed - {"seed"})))
    out = dict(obj)
    if kind == "expr":
        expression(obj["expr"], f"{place}.expr")
    if kind == "constant":
        _int(obj["value"], f"{place}.value")
    if kind == "uniform":
        low, high = _int(obj["low"], f"{place}.low"), _int(obj["high"], f"{place}.high")
        if high <= low:
            raise PatternError(place, f"high ({high}) must be greater than low ({low})")
    if kind in ("permutation", "uniform"):
        out["seed"] = _int(obj.get("seed", 0), f"{place}.seed", low=0)
    if kind == "file":
        _text(obj["path"], f"{place}.path")
    return out


def _dtype(value: Any, place: str) -> tuple[str, int]:
    if isinstance(value, dict):
        _check_keys(value, {"bytes"}, place, required=("bytes",))
        k = _int(value["bytes"], f"{place}.bytes", low=1)
        return f"bytes:{k}", k
    if not isinstance(value, str) or value not in DTYPE_BYTES:
        raise PatternError(place, f"unknown dtype {value!r}" + suggest(str(value), DTYPE_BYTES))
    return value, DTYPE_BYTES[value]


def _array(name: str, obj: Any, place: str, dtype_optional: bool = False) -> ArraySpec:
    """An array entry -> ArraySpec; a CUDA kernel's arrays may leave `dtype` to the pointee."""
    _check_keys(obj, ARRAY_KEYS, place, required=() if dtype_optional else ("dtype",))
    dtype, elem_bytes = _dtype(obj["dtype"], f"{place}.dtype") if "dtype" in obj else (None, 0)
    shape = None
    if "shape" in obj:
        raw = obj["shape"]
        if not isinstance(raw, list) or len(raw) != 2:
            raise PatternError(f"{place}.shape", "expected [rows, cols]")
        shape = (expression(raw[0], f"{place}.shape[0]"), expression(raw[1], f"{place}.shape[1]"))
    elif "length" not in obj:
        raise PatternError(place, "missing key 'length' (or 'shape')")
    for key in ("layout", "ld"):
        if key in obj and shape is None:
            raise PatternError(f"{place}.{key}", f"'{key}' needs a 'shape'")
    layout = obj.get("layout", "row-major")
    if layout not in LAYOUTS:
        raise PatternError(f"{place}.layout",
                           f"expected 'row-major' or 'col-major', got {layout!r}")
    base = obj.get("base")
    if base is not None:
        base = _int(base, f"{place}.base", low=0)
    space = obj.get("space", "global")
    if space not in SPACES:
        raise PatternError(f"{place}.space", f"expected 'global' or 'shared', got {space!r}")
    if space == "shared" and dtype_optional:
        raise PatternError(f"{place}.space", "a CUDA kernel's shared arrays are its "
                                             "__shared__ variables, declared in its source")
    return ArraySpec(
        name=name, dtype=dtype, elem_bytes=elem_bytes,
        length=expression(obj["length"], f"{place}.length") if "length" in obj else None,
        shape=shape, layout=layout,
        ld=expression(obj["ld"], f"{place}.ld") if "ld" in obj else None,
        base=base, offset_bytes=_int(obj.get("offset_bytes", 0), f"{place}.offset_bytes", low=0),
        values=_values(obj["values"], f"{place}.values") if "values" in obj else None,
        space=space)


def _loop(obj: Any, place: str, taken: Mapping[str, str]) -> Loop:
    _check_keys(obj, LOOP_KEYS, place, required=("var", "start", "stop"))
    var = _identifier(_text(obj["var"], f"{place}.var"), f"{place}.var", taken)
    return Loop(var, expression(obj["start"], f"{place}.start"),
                expression(obj["stop"], f"{place}.stop"),
                expression(obj.get("step", 1), f"{place}.step"))


def _access(obj: Any, place: str, arrays: dict[str, ArraySpec], taken: dict[str, str]) -> Access:
    _check_keys(obj, ACCESS_KEYS, place, required=("op", "array"))
    op = obj["op"]
    if op not in ("load", "store"):
        raise PatternError(f"{place}.op", f"expected 'load' or 'store', got {op!r}")
    array_name = _text(obj["array"], f"{place}.array")
    if array_name not in arrays:
        raise PatternError(f"{place}.array", f"unknown array {array_name!r}" +
                           suggest(array_name, arrays))
    spec = arrays[array_name]
    index = at = None
    if ("index" in obj) == ("at" in obj):
        raise PatternError(place, "give exactly one of 'index' or 'at'")
    if "index" in obj:
        index = expression(obj["index"], f"{place}.index")
    else:
        if spec.shape is None:
            raise PatternError(f"{place}.at", f"array {array_name!r} has no 'shape'; use 'index'")
        raw = obj["at"]
        if not isinstance(raw, list) or len(raw) != 2:
            raise PatternError(f"{place}.at", "expected [row, col]")
        at = (expression(raw[0], f"{place}.at[0]"), expression(raw[1], f"{place}.at[1]"))
    raw_loops = obj.get("loops", [])
    if not isinstance(raw_loops, list):
        raise PatternError(f"{place}.loops", "expected a list of loops")
    if len(raw_loops) > MAX_LOOPS:
        raise PatternError(f"{place}.loops", f"{len(raw_loops)} nested loops; at most {MAX_LOOPS}")
    loop_names = ChainMap({}, taken)  # not a copy: linear in the lets and the accesses
    loops = []
    for j, raw in enumerate(raw_loops):
        loop = _loop(raw, f"{place}.loops[{j}]", loop_names)
        loop_names[loop.var] = f"loop {place}.loops[{j}]"
        loops.append(loop)
    default_name = f"{op} {array_name}"
    return Access(
        name=_text(obj.get("name", default_name), f"{place}.name"), op=op, array=array_name,
        index=index, at=at,
        guard=expression(obj["guard"], f"{place}.guard") if "guard" in obj else None,
        loops=tuple(loops), place=place)


# ---------------------------------------------------------------- name checks


class _Scope:
    """The names an access's expression may use: `known` plus its loops' variables so far,
    without copying `known` for each access."""

    def __init__(self, known: set[str], loop_vars: list[str]):
        self.known, self.loop_vars = known, loop_vars

    def __contains__(self, name: str) -> bool:
        return name in self.known or name in self.loop_vars

    def __iter__(self) -> Iterator[str]:
        yield from self.known
        yield from self.loop_vars


def _check_names(expr: Expr | None, known: set[str] | _Scope, readable: set[str],
                 arrays: set[str] | frozenset[str] = frozenset(),
                 floats: frozenset[str] = frozenset()) -> None:
    """Every plain name in `expr` must be known (a float param never is: expressions are
    integer); every subscripted array must have values."""
    if expr is None:
        return
    names = expr.tree_names
    if names.arrays <= readable and all(n in known and n not in arrays for n in names.plain):
        return  # the common case, without sorting
    for sub in sorted(names.arrays):
        if sub in arrays and sub not in readable:
            raise PatternError(expr.place, f"array {sub!r} has no 'values', so it cannot be "
                                           "read inside an expression",
                               first_column(expr.tree, sub))
        if sub not in readable:
            raise PatternError(expr.place, f"unknown array {sub!r}" + suggest(sub, readable),
                               first_column(expr.tree, sub))
    for name in sorted(names.plain):
        if name in arrays:
            raise PatternError(expr.place, f"{name!r} is an array; read an element as "
                                           f"{name}[index]", first_column(expr.tree, name))
        if name in floats:
            raise PatternError(expr.place, f"params.{name} is a floating-point number; an "
                                           "expression needs integers (floats are for a "
                                           "kernel's float arguments)",
                               first_column(expr.tree, name))
        if name not in known:
            raise PatternError(expr.place, f"unknown name {name!r}" + suggest(name, known),
                               first_column(expr.tree, name))


# ---------------------------------------------------------------- entry points


def _sector_size(doc: dict[str, Any]) -> int:
    """The sector size in bytes: key `sector_size`, or its old name `sector_bytes` (not both)."""
    if "sector_size" in doc and "sector_bytes" in doc:
        raise PatternError("sector_bytes",
                           "give sector_size or its old name sector_bytes, not both")
    key = "sector_bytes" if "sector_bytes" in doc else "sector_size"
    size = _int(doc.get(key, 32), key, low=1)
    if size & (size - 1):
        raise PatternError(key, f"must be a power of two, got {size}")
    if size > MAX_SECTOR_BYTES:
        raise PatternError(key, f"must be at most {MAX_SECTOR_BYTES}, got {size}")
    return size


def pattern_from_dict(doc: Any, base_dir: str | Path = ".",
                      include_dirs: tuple[str, ...] = ()) -> Pattern:
    """Validate a decoded pattern document -> Pattern; PatternError names the first bad place."""
    with without_cycle_collection():
        return _pattern_from_dict(doc, base_dir, include_dirs)


_PAUSE_LOCK = threading.Lock()
_pauses = {"running": 0, "was_enabled": False}  # loads under way (any thread); state before


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """Python's cycle collector off while a loader builds its (acyclic) values: with it on, a
    100,000-access pattern's millions of new objects trigger passes over the whole heap, a
    third of the load time. Loads in several threads share one pause; the last to end
    restores the collector as it was before the first began."""
    with _PAUSE_LOCK:
        if _pauses["running"] == 0:
            _pauses["was_enabled"] = gc.isenabled()
            gc.disable()
        _pauses["running"] += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _pauses["running"] -= 1
            if _pauses["running"] == 0 and _pauses["was_enabled"]:
                gc.enable()


def _pattern_from_dict(doc: Any, base_dir: str | Path, include_dirs: tuple[str, ...]) -> Pattern:
    _check_keys(doc, TOP_KEYS, "", required=("format", "launch", "arrays"))
    kernel = _kernel(doc)
    if doc["format"] != FORMAT:
        raise PatternError("format", f"expected {FORMAT!r}, got {doc['format']!r}")
    sector_bytes = _sector_size(doc)
    if "expect" in doc:  # the numbers `sectorviz check` compares (expect.py)
        check_expect(doc["expect"])
    grid, block = _launch(doc["launch"], triton_block(kernel))
    taken: dict[str, str] = {}
    params = []
    raw_params = doc.get("params", {})
    if not isinstance(raw_params, dict):
        raise PatternError("params", "expected an object {name: number}")
    for name, value in raw_params.items():
        _identifier(name, f"params.{name}", taken)
        params.append((name, _param(value, f"params.{name}")))
        taken[name] = "a param"
    raw_arrays = doc["arrays"]
    if not isinstance(raw_arrays, dict) or not raw_arrays:
        raise PatternError("arrays", "expected an object {name: {dtype, length, ...}} "
                                     "with at least one array")
    arrays: dict[str, ArraySpec] = {}
    for name, obj in raw_arrays.items():
        _identifier(name, f"arrays.{name}", taken)
        arrays[name] = _array(name, obj, f"arrays.{name}", dtype_optional=kernel is not None)
        taken[name] = "an array"
    raw_lets = doc.get("let", {})
    if not isinstance(raw_lets, dict):
        raise PatternError("let", "expected an object {name: expression}")
    lets = []
    for name, text in raw_lets.items():
        _identifier(name, f"let.{name}", taken)
        lets.append((name, expression(text, f"let.{name}")))
        taken[name] = "a let"
    guard = expression(doc["guard"], "guard") if "guard" in doc else None
    raw_accesses = [] if kernel else doc.get("accesses")
    if not kernel and (not isinstance(raw_accesses, list) or not raw_accesses):
        raise PatternError("accesses", "expected a list with at least one access")
    accesses = tuple(_access(obj, f"accesses[{i}]", arrays, taken)
                     for i, obj in enumerate(raw_accesses))
    seen: set[str] = set()  # a set, not list.index: 100,000 accesses load in linear time
    for i, access in enumerate(accesses):
        if access.name in seen:
            raise PatternError(f"accesses[{i}].name", f"name {access.name!r} is used twice")
        seen.add(access.name)
    pattern = Pattern(
        name=_text(doc.get("name", "untitled"), "name"), notes=_text(doc.get("notes", ""), "notes"),
        sector_bytes=sector_bytes, grid=grid, block=block, params=tuple(params),
        assume_values=_assume(doc.get("assume_values")),
        arrays=tuple(arrays.values()), lets=tuple(lets), guard=guard, accesses=accesses,
        source=indented_json(doc), base_dir=str(base_dir), kernel=kernel,
        machine=machine(doc["machine"]) if "machine" in doc else None,
        include_dirs=tuple(include_dirs))
    _check_all_names(pattern)
    _check_depths(pattern)
    return pattern


def _kernel(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The `kernel` object (a CUDA source instead of let/guard/accesses), checked for shape."""
    if "kernel" not in doc:
        if "accesses" not in doc:
            raise PatternError("pattern", "missing key 'accesses' (or 'kernel')")
        return None
    obj = _check_keys(doc["kernel"], KERNEL_KEYS, "kernel", required=("function",))
    if sum(key in obj for key in KERNEL_TEXTS) != 1:
        raise PatternError("kernel", "give exactly one of 'source' (a .cu file), 'code', "
                                     "'ptx' (a .ptx file), 'triton' or 'numba' (a .py file)")
    _check_ptx_keys(obj)
    check_python_keys(obj)
    for key in obj:
        if key == "dynamic_shared_bytes":
            if _int(obj[key], "kernel.dynamic_shared_bytes", 0) > MAX_DYNAMIC_SHARED:
                raise PatternError("kernel.dynamic_shared_bytes",
                                   f"at most {MAX_DYNAMIC_SHARED:,} bytes (227 KiB, the "
                                   "shared memory of a block on sm_90)")
        elif key == "engine":
            if obj[key] not in ENGINES:
                raise PatternError("kernel.engine", f"expected one of {', '.join(ENGINES)}, "
                                                    f"got {obj[key]!r}")
        elif key == "level":
            if obj[key] not in LEVELS:
                raise PatternError("kernel.level", f"expected one of {', '.join(LEVELS)}, "
                                                   f"got {obj[key]!r}")
        elif key == "flags":
            _flags(obj[key])
        elif key == "arch":
            if not isinstance(obj[key], str) or not ARCH.fullmatch(obj[key]):
                raise PatternError("kernel.arch", f"{obj[key]!r} is not an architecture such "
                                                  "as 'sm_90'")
        elif key not in PYTHON_KEYS:
            _text(obj[key], f"kernel.{key}")
    for key in ("let", "guard", "accesses"):
        if key in doc:
            raise PatternError(key, f"'{key}' cannot be used with 'kernel': the kernel's "
                                    "source says which accesses run")
    return dict(obj)


def _check_ptx_keys(obj: dict[str, Any]) -> None:
    """A `ptx` kernel is run as its file has it: no compiler engine, architecture or flags
    (`"engine": "compiled"`, what runs it anyway, may stay)."""
    if "ptx" not in obj:
        return
    for key in COMPILE_KEYS:
        if key in obj and (key, obj[key]) != ("engine", "compiled"):
            raise PatternError(f"kernel.{key}", "a 'ptx' kernel is run as compiled in its file "
                                                "(its .target is its architecture); leave "
                                                f"'{key}' out")


def _flags(flags: Any) -> None:
    """`kernel.flags`: a list of at most MAX_FLAGS strings (which ones the compiler may be
    given is the compiled front end's whitelist)."""
    if not isinstance(flags, list) or len(flags) > MAX_FLAGS:
        raise PatternError("kernel.flags", f"expected a list of at most {MAX_FLAGS} strings")
    for i, flag in enumerate(flags):
        _text(flag, f"kernel.flags[{i}]")


def _assume(value: Any) -> str | None:
    if value is not None and value not in ASSUME_KINDS:
        raise PatternError("assume_values", f"expected one of {', '.join(ASSUME_KINDS)}, got "
                                            f"{value!r}")
    return value if value is None else str(value)


def _check_all_names(p: Pattern) -> None:
    params = {n for n, v in p.params if not isinstance(v, float)}
    floats = frozenset(n for n, v in p.params if isinstance(v, float))
    arrays = {a.name for a in p.arrays}
    readable = {a.name for a in p.arrays if a.values is not None}
    for e in (*p.grid, *p.block):
        _check_names(e, params, set(), floats=floats)
    for a in p.arrays:
        for e in (a.length, a.ld, *(a.shape or ())):
            _check_names(e, params, set(), floats=floats)
        if a.values and a.values["kind"] == "expr":
            _check_names(expression(a.values["expr"], f"arrays.{a.name}.values.expr"),
                         params | {"i"}, set(), floats=floats)
    known = params | BUILTIN_NAMES  # grown in place, never copied: linear in the lets
    for name, e in p.lets:
        _check_names(e, known, readable, arrays, floats)
        known.add(name)
    _check_names(p.guard, known, readable, arrays, floats)
    for acc in p.accesses:
        loop_vars: list[str] = []
        for loop in acc.loops:
            for e in (loop.start, loop.stop, loop.step):
                _check_names(e, _Scope(known, loop_vars), readable, arrays, floats)
            loop_vars.append(loop.var)
        for e in (acc.guard, acc.index, *(acc.at or ())):
            _check_names(e, _Scope(known, loop_vars), readable, arrays, floats)


def _check_depths(p: Pattern) -> None:
    """Refuse per-thread expressions that, with the lets they read expanded, nest deeper than
    MAX_DEPTH levels (evaluation recurses through them)."""
    lets: dict[str, int] = {}

    def levels(e: Expr) -> int:
        found = e.tree_names.depth(lets)
        if found > MAX_DEPTH:
            raise PatternError(e.place, f"expression nested {found} levels deep with the lets "
                                        f"it reads; at most {MAX_DEPTH}")
        return found

    for name, e in p.lets:
        lets[name] = levels(e) + LET_LEVELS
    exprs = [p.guard]
    for acc in p.accesses:
        exprs += [e for loop in acc.loops for e in (loop.start, loop.stop, loop.step)]
        exprs += [acc.guard, acc.index, *(acc.at or ())]
    for expr in exprs:
        if expr is not None:
            levels(expr)


def pattern_from_text(text: str, source: str = "<text>", base_dir: str | Path = ".",
                      include_dirs: tuple[str, ...] = ()) -> Pattern:
    """JSON text -> Pattern; errors about the JSON itself (a key twice in one object too)
    name line and column."""
    try:
        with without_cycle_collection():
            doc = json.loads(text, parse_constant=_reject_constant, parse_int=_json_int,
                             object_pairs_hook=unique_pairs)
    except DuplicateKey as err:
        key, line, column = first_duplicate(text) or (err.key, None, None)
        raise PatternError("" if line is None else f"line {line}",
                           f"the key {key!r} appears twice in one object; give it once",
                           column) from None
    except json.JSONDecodeError as err:
        raise PatternError(f"line {err.lineno}", f"invalid JSON, {err.msg}", err.colno) from None
    except RecursionError:
        raise PatternError("", "invalid JSON, nested too deeply") from None
    except ValueError as err:
        raise PatternError("", str(err)) from None
    return pattern_from_dict(doc, base_dir, include_dirs)


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number sectorviz accepts")


MAX_FILE_BYTES = MAX_TEXT_BYTES


def load_pattern(path: str | Path, include_dirs: tuple[str, ...] = ()) -> Pattern:
    """Read a pattern file -> Pattern (which may also read files in `include_dirs`).
    PatternError for a file that is missing, not a regular file, over MAX_FILE_BYTES, not
    UTF-8 or bad."""
    text = read_text(path, "", MAX_FILE_BYTES)
    path = Path(path)
    return pattern_from_text(text, str(path), path.parent, include_dirs)


def with_kernel(pattern: Pattern, place: str, **keys: str | None) -> Pattern:
    """A kernel pattern with `kernel` keys set (`engine="compiled"`, `arch="sm_80"`; None
    leaves a key as it is): a new Pattern, validated again, so that the engine and the
    architecture are part of the pattern's value. PatternError at `place` (the flag that
    asked) for a pattern of accesses."""
    given = {key: value for key, value in keys.items() if value is not None}
    if not given:
        return pattern
    if pattern.kernel is None:
        raise PatternError(place, "applies to CUDA kernel patterns (a `kernel` key); this "
                                  "pattern lists its accesses")
    doc = pattern.to_dict()
    doc["kernel"] = {**doc["kernel"], **given}
    try:
        return pattern_from_dict(doc, pattern.base_dir, pattern.include_dirs)
    except PatternError as err:
        raise PatternError(place, err.message) from None
