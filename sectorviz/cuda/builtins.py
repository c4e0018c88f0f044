"""Calls of CUDA's built-in functions -> ir / lanes nodes: math, bit and conversion
intrinsics, warp shuffles, votes and reductions, cooperative groups, atomics, cache-hinted
loads and stores, and the calls the model ignores (printf, assert) or cannot know (clock).

`call(compiler, name, args, node)` is tried after macros, lambdas and __device__ functions;
it returns None when `name` is not a built-in. Unsupported parts of CUDA (textures, surfaces,
kernel launches from a kernel, grid-wide groups) are refused with one line naming them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..model.errors import PatternError
from ..model.pattern import suggest
from . import ctype as C
from . import ir, lanes
from .async_copy import memcpy_async
from .conversions import saturated
from .dispatch import BUILTINS
from .source import Node, error, text

if TYPE_CHECKING:
    from .compile import Compiler

GROUP_NAMESPACES = {"cg", "cooperative_groups"}
SYNCS = {"__syncthreads", "__syncwarp", "__threadfence", "__threadfence_block",
         "__threadfence_system", "__pipeline_commit", "__pipeline_wait_prior"}
IGNORED = {"printf", "assert", "__assert_fail", "__nanosleep", "__prof_trigger"}
OPAQUE = {"clock": C.NAMED["clock_t"], "clock64": C.LLONG, "__globaltimer": C.ULLONG}
LOADS = {"__ldg", "__ldcs", "__ldcg", "__ldca", "__ldlu", "__ldcv"}
STORES = {"__stcs", "__stcg", "__stwb", "__stwt"}
SHUFFLES = {"__shfl_sync": "idx", "__shfl_up_sync": "up", "__shfl_down_sync": "down",
            "__shfl_xor_sync": "xor"}
TILE_SHUFFLES = {"shfl": "idx", "shfl_up": "up", "shfl_down": "down", "shfl_xor": "xor"}
VOTES = {"__ballot_sync": "ballot", "__any_sync": "any", "__all_sync": "all"}
REDUCES = {"__reduce_add_sync": "add", "__reduce_min_sync": "min", "__reduce_max_sync": "max",
           "__reduce_and_sync": "and", "__reduce_or_sync": "or", "__reduce_xor_sync": "xor"}
CG_FUNCTIONS = {"this_thread_block", "tiled_partition", "reduce", "sync", "this_grid",
                "memcpy_async", "wait", "wait_prior", "coalesced_threads", "labeled_partition",
                "binary_partition"}
LIBCUDACXX = {"cuda", "::cuda"}  # the namespace of cuda::memcpy_async, cuda::barrier
BARRIER_WAITS = {"arrive_and_wait", "arrive_and_drop", "wait"}  # order threads, move no bytes
PIPELINE_METHODS = {"producer_acquire", "producer_commit", "consumer_wait", "consumer_release",
                    "quit"}  # a pipeline's stage calls: they order threads, move no bytes
PIPELINE_FUNCTIONS = {"pipeline_consumer_wait_prior", "pipeline_producer_commit"}
PIPELINE_ROLES = {"producer": 0, "consumer": 1}  # cuda::pipeline_role's enumerators
MAX_TILE = 1024  # threads: the largest thread block, and cg's largest tile
WIDE_TILES = ("collectives of tiles wider than a warp (shfl, votes, reduce) give values "
              "sectorviz does not compute (warps run apart); the traffic through cg's "
              "block_tile_memory scratch that they use is not counted")
CG_OPS = {"plus": "add", "less": "min", "greater": "max", "bit_and": "and", "bit_or": "or",
          "bit_xor": "xor"}
ATOMICS = {"atomicAdd": 2, "atomicSub": 2, "atomicExch": 2, "atomicMin": 2, "atomicMax": 2,
           "atomicInc": 2, "atomicDec": 2, "atomicCAS": 3, "atomicAnd": 2, "atomicOr": 2,
           "atomicXor": 2}
NO_REDUCTION = {"atomicExch", "atomicCAS"}  # the RED instruction has no such operation
REFUSED = (("tex", "texture fetches"), ("surf", "surface reads and writes"),
           ("cudaLaunch", "dynamic parallelism"), ("cudaDeviceSynchronize",
                                                   "dynamic parallelism"),
           ("asm", "inline PTX"), ("__syncthreads_", "block-wide votes"),
           ("__syncwarp_", "warp votes"), ("__match_all", "warp match-all"))


@dataclass(frozen=True)
class Group:
    """A cooperative-groups handle: the thread block (tile None), a tile of `tile` lanes, the
    whole grid (`grid`: cg::this_grid()), or the lanes of a warp in each lane's 32-bit member
    `mask` (cg::coalesced_threads(), cg::labeled_partition, cg::binary_partition)."""

    tile: int | None = None
    grid: bool = False
    mask: ir.Expr | None = field(default=None, compare=False)


# ------------------------------------------------------------------ math


def _round_half_away(x):
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0).astype(np.asarray(x).dtype)


def _bit_length(x, bits: int):
    x = np.asarray(x).astype(np.uint64)
    shift = 1
    while shift < bits:
        x = x | (x >> np.uint64(shift))
        shift *= 2
    return np.bitwise_count(x).astype(np.int32)


def _ffs(x, bits: int):
    x = np.asarray(x).astype(np.uint64) & np.uint64(2 ** bits - 1)
    low = x & (~x + np.uint64(1))
    return np.where(x == 0, 0, np.bitwise_count(low - np.uint64(1)) + 1).astype(np.int32)[()]


def _brev(x, t: C.Num):
    x = np.asarray(x).astype(np.uint64)
    n = t.size * 8
    out = np.zeros_like(x)
    for i in range(n):
        out |= ((x >> np.uint64(i)) & np.uint64(1)) << np.uint64(n - 1 - i)
    return out.astype(t.dtype)[()]


def _ieee_remainder(a, b):
    """C's remainder(): a - n * b with n the quotient rounded to nearest even."""
    q = np.rint(np.asarray(a, dtype=np.float64) / b)
    return (a - q * b).astype(np.asarray(a).dtype)[()]


_F, _D, _I, _U = C.FLOAT, C.DOUBLE, C.INT, C.UINT
_LL, _ULL = C.LLONG, C.ULLONG
# <cmath> name without its f -> numpy function (None: erf / erfc, made below)
_FLOAT_FNS: dict[str, Callable | None] = {
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt, "exp": np.exp,
    "exp2": np.exp2, "exp10": lambda x: np.power(x.dtype.type(10), x), "expm1": np.expm1,
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "round": _round_half_away, "rint": np.rint, "nearbyint": np.rint,
    "fabs": np.abs, "erf": None, "erfc": None, "pow": np.power, "atan2": np.arctan2,
    "fmin": np.fmin, "fmax": np.fmax, "fmod": np.fmod, "remainder": _ieee_remainder,
    "hypot": np.hypot, "copysign": np.copysign, "fdim": lambda a, b: np.maximum(a - b, 0),
    "fma": lambda a, b, c: a * b + c,
}
# name -> (numpy function, parameter type (None: the arguments' common type), result type
# (None: the parameter type))
MATH: dict[str, tuple[Callable, C.Num | None, C.Num | None]] = {
    "min": (np.minimum, None, None), "max": (np.maximum, None, None),
    "abs": (np.abs, None, None), "labs": (np.abs, C.LONG, None),
    "llabs": (np.abs, _LL, None), "umin": (np.minimum, _U, None),
    "umax": (np.maximum, _U, None), "llmin": (np.minimum, _LL, None),
    "llmax": (np.maximum, _LL, None), "ullmin": (np.minimum, _ULL, None),
    "ullmax": (np.maximum, _ULL, None),
    "__mul24": (np.multiply, _I, None), "__umul24": (np.multiply, _U, None),
    "__mulhi": (lambda a, b: (a.astype(np.int64) * b) >> 32, _I, _I),
    "__umulhi": (lambda a, b: (a.astype(np.uint64) * b) >> np.uint64(32), _U, _U),
    "__popc": (np.bitwise_count, _U, _I), "__popcll": (np.bitwise_count, _ULL, _I),
    "__clz": (lambda x: 32 - _bit_length(x, 32), _U, _I),
    "__clzll": (lambda x: 64 - _bit_length(x, 64), _ULL, _I),
    "__ffs": (lambda x: _ffs(x, 32), _I, _I), "__ffsll": (lambda x: _ffs(x, 64), _LL, _I),
    "__brev": (lambda x: _brev(x, _U), _U, _U),
    "__brevll": (lambda x: _brev(x, _ULL), _ULL, _ULL),
    "__saturatef": (lambda x: np.nan_to_num(np.clip(x, 0, 1), nan=0), _F, _F),
    "__fdividef": (np.divide, _F, _F), "fdividef": (np.divide, _F, _F),
    "__frcp_rn": (lambda x: 1 / x, _F, _F), "__fsqrt_rn": (np.sqrt, _F, _F),
    "__frsqrt_rn": (lambda x: 1 / np.sqrt(x), _F, _F),
    "__fadd_rn": (np.add, _F, _F), "__fsub_rn": (np.subtract, _F, _F),
    "__fmul_rn": (np.multiply, _F, _F), "__fmaf_rn": (lambda a, b, c: a * b + c, _F, _F),
    "__expf": (np.exp, _F, _F), "__logf": (np.log, _F, _F), "__log2f": (np.log2, _F, _F),
    "__log10f": (np.log10, _F, _F), "__sinf": (np.sin, _F, _F), "__cosf": (np.cos, _F, _F),
    "__tanf": (np.tan, _F, _F), "__powf": (np.power, _F, _F), "__exp10f": (
        lambda x: np.power(np.float32(10), x), _F, _F),
}
for _name, _dst, _fn in (("lrint", C.LONG, np.rint), ("llrint", _LL, np.rint),
                         ("lround", C.LONG, _round_half_away),
                         ("llround", _LL, _round_half_away)):
    MATH[_name + "f"] = (saturated(_fn, _dst), _F, _dst)
    MATH[_name] = (saturated(_fn, _dst), _D, _dst)


def _erf(erfc: bool) -> Callable:
    """erf / erfc without scipy: math.erf per element, in the argument's precision."""
    f = np.vectorize(math.erfc if erfc else math.erf, otypes=[np.float64])
    return lambda x: f(x).astype(np.asarray(x).dtype)[()]


for _name, _fn in _FLOAT_FNS.items():
    _fn = _fn or _erf(_name == "erfc")
    MATH.setdefault(_name + "f", (_fn, _F, _F))
    MATH.setdefault(_name, (_fn, _D, _D))


def arity(fn: Callable) -> int:
    """How many arguments a MATH function takes (numpy ufuncs say it as `nin`)."""
    return getattr(fn, "nin", None) or fn.__code__.co_argcount


def math_call(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Expr:
    fn, param, result = MATH[name]
    if len(args) != arity(fn):
        raise error(node, f"{name} takes {arity(fn)} argument{'s' * (arity(fn) > 1)}")
    values = [comp.rvalue(a) for a in args]
    if not all(isinstance(v.type, C.Num) for v in values):
        raise error(node, f"{name} of a non-number")
    if param is None:
        param = values[0].type
        for v in values[1:]:
            param = C.common(param, v.type)
        param = C.promote(param)
    return comp.fold(ir.Math(fn, [comp.cast(v, param) for v in values], result or param,
                             comp_pos(node)))


def comp_pos(node: Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.start_point[1] + 1


def void(node: Node) -> ir.Const:
    return ir.Const(0, C.VOID, comp_pos(node))


# ------------------------------------------------------------------ calls by name


def call(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Expr | None:
    """A built-in function call -> its node, or None if `name` is not a built-in (or not with
    these arguments: then it may be a function of the file's own)."""
    handler = BUILTINS.get(name)
    found = None if handler is None else handler(comp, name, args, node)
    if found is None:
        for prefix, what in REFUSED:
            if name.startswith(prefix):
                raise error(node, f"{name} ({what}) is outside the subset")
    return found


@BUILTINS(*SYNCS, *IGNORED)
def _ordering(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Const:
    """Barriers, fences and output: they order threads (or print) and move no bytes."""
    if name == "__syncwarp" and args:
        comp.rvalue(args[0])
    return void(node)


@BUILTINS(*OPAQUE)
def _opaque(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Expr:
    return lanes.Opaque(f"{name}() (line {comp_pos(node)[0]}), which is only known at run "
                        "time", OPAQUE[name], comp_pos(node))


@BUILTINS(*LOADS)
def _load(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Expr | None:
    if len(args) != 1:
        return None
    return comp.value_of(comp.deref(comp.rvalue(args[0]), node), node)


@BUILTINS(*STORES)
def _store(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Expr | None:
    if len(args) != 2:
        return None
    target = comp.deref(comp.rvalue(args[0]), node)
    return comp.assignment(target, comp.rvalue(args[1]), node, node)


@BUILTINS(*(f"make_{t}" for t in C.NAMED))
def _make_vector(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Expr:
    t = C.NAMED[name[5:]]
    if not isinstance(t, C.Vec) or len(args) != t.n:
        raise error(node, f"{name} needs {getattr(t, 'n', 0)} arguments")
    return ir.Vector([comp.cast(comp.rvalue(a), t.base) for a in args], t, comp_pos(node))


@BUILTINS(*MATH)
def _math(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Expr:
    return math_call(comp, name, args, node)


@BUILTINS("sincosf", "sincos", "__sincosf")
def _sincos(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Expr:
    return sincos(comp, name, args, node)


@BUILTINS(*SHUFFLES, *(s.removesuffix("_sync") for s in SHUFFLES))
def _shuffle(comp: "Compiler", name: str, args: list[Node], node: Node) -> lanes.Shuffle:
    """__shfl*_sync, and the pre-CUDA 9 forms that lack the mask."""
    masked = name in SHUFFLES
    return shuffle(comp, SHUFFLES[name if masked else name + "_sync"], args, node, masked)


@BUILTINS(*VOTES, "__activemask")
def _vote(comp: "Compiler", name: str, args: list[Node], node: Node) -> lanes.Vote:
    return vote(comp, VOTES.get(name, "active"), args, node)


@BUILTINS(*(v.removesuffix("_sync") for v in VOTES))
def _unmasked_vote(comp: "Compiler", name: str, args: list[Node], node: Node) -> lanes.Vote:
    """__ballot, __any, __all: the pre-CUDA 9 votes, over the whole warp."""
    if len(args) != 1:
        raise error(node, f"{name} takes (predicate)")
    t = C.UINT if name == "__ballot" else C.INT
    return lanes.Vote(VOTES[name + "_sync"], None, comp.condition(args[0]), 32, t,
                      comp_pos(node))


@BUILTINS("__match_any_sync")
def _match_any(comp: "Compiler", name: str, args: list[Node], node: Node) -> lanes.Match:
    if len(args) != 2:
        raise error(node, f"{name} takes (mask, value)")
    value = comp.rvalue(args[1])
    if not isinstance(value.type, C.Num):
        raise error(args[1], f"{name} of a {C.name_of(value.type)}")
    return lanes.Match(comp.rvalue(args[0]), value, C.UINT, comp_pos(node))


@BUILTINS(*REDUCES)
def _reduce(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Expr:
    if len(args) != 2:
        raise error(node, f"{name} takes (mask, value)")
    value = comp.rvalue(args[1])
    t = C.promote(value.type) if C.is_int(value.type) else None
    if t is None:
        raise error(node, f"{name} needs an integer value")
    return lanes.SegmentReduce(REDUCES[name], comp.cast(value, t), comp.rvalue(args[0]), 32,
                               t, comp_pos(node))


@BUILTINS("__pipeline_memcpy_async")
def _pipeline_copy(comp: "Compiler", name: str, args: list[Node], node: Node
                   ) -> ir.Expr | None:
    if len(args) != 3:
        return None
    return memcpy_async(comp, args, node, _uint(0, node), _uint(1, node))


@BUILTINS("init")
def _barrier_init(comp: "Compiler", name: str, args: list[Node], node: Node
                  ) -> ir.Expr | None:
    """`init(&barrier, count)` of a cuda::barrier; any other init is the file's own."""
    if len(args) != 2 or not is_barrier(comp, args[0], node):
        return None
    return ir.Comma(comp.rvalue(args[1]), void(node), C.VOID, comp_pos(node))


@BUILTINS(*(a + suffix for a in ATOMICS for suffix in ("", "_block", "_system")))
def _atomic(comp: "Compiler", name: str, args: list[Node], node: Node) -> lanes.Atomic:
    return atomic(comp, name.removesuffix("_block").removesuffix("_system"), args, node)


def is_barrier(comp: "Compiler", arg: Node, node: Node) -> bool:
    """Whether `arg` points to a cuda::barrier (`init(&bar, n)` sets one up)."""
    try:
        return getattr(pointee(comp, arg, node), "type", None) == C.BARRIER
    except PatternError:
        return False


def libcudacxx_call(comp: "Compiler", fn: Node, args: list[Node], node: Node):
    """`cuda::memcpy_async([group,] dst, src, size, barrier or pipeline)`,
    `cuda::aligned_size_t<A>(bytes)`, `cuda::make_pipeline(...)` and the pipeline's free
    functions (`pipeline_consumer_wait_prior<N>`, `pipeline_producer_commit`) -> the node;
    None for other names."""
    targs = None
    if fn.type == "template_function":
        targs = fn.child_by_field_name("arguments").named_children
        fn = fn.child_by_field_name("name")
    name = text(fn)
    if name == "aligned_size_t" and targs is not None:
        return aligned_size(comp, targs, args, node)
    if name == "make_pipeline":
        return make_pipeline(comp, args, node)
    if name in PIPELINE_FUNCTIONS:
        if not args or getattr(comp.expr(args[0]), "type", None) != C.PIPELINE:
            raise error(node, f"cuda::{name} takes a cuda::pipeline first")
        for a in args[1:]:
            comp.expr(a)
        return void(node)
    if name != "memcpy_async":
        return None
    if len(args) == 5:
        return group_copy(comp, args[0], args[1:], node)
    if len(args) != 4:
        raise error(node, "cuda::memcpy_async takes ([group,] dst, src, size, barrier)")
    return memcpy_async(comp, args, node, _uint(0, node), _uint(1, node))


def pipeline_role(node: Node) -> ir.Const | None:
    """`cuda::pipeline_role::producer` / `consumer` -> its enumerator's value, else None."""
    scope = node.child_by_field_name("scope")
    inner = node.child_by_field_name("name")
    if text(scope) not in LIBCUDACXX or inner.type != "qualified_identifier" or \
            text(inner.child_by_field_name("scope")) != "pipeline_role":
        return None
    role = text(inner.child_by_field_name("name"))
    if role not in PIPELINE_ROLES:
        raise error(node, f"cuda::pipeline_role has no {role!r}"
                    + suggest(role, PIPELINE_ROLES))
    return ir.Const(np.int32(PIPELINE_ROLES[role]), C.INT, comp_pos(node))


def aligned_size(comp: "Compiler", targs: list[Node], args: list[Node], node: Node) -> ir.Expr:
    """`cuda::aligned_size_t<A>(bytes)` -> the bytes as a size_t that carries A."""
    if len(targs) != 1 or len(args) != 1:
        raise error(node, "cuda::aligned_size_t<A>(bytes) takes one alignment and one size")
    align = comp.constant_int(targs[0])
    if align <= 0 or align & (align - 1):
        raise error(node, f"an alignment of {align} bytes: it must be a power of 2")
    count = comp.rvalue(args[0])
    if not C.is_int(count.type):
        raise error(args[0], "a copy's size must be an integer")
    return comp.cast(count, C.aligned_size(align))


def make_pipeline(comp: "Compiler", args: list[Node], node: Node) -> ir.Const:
    """`cuda::make_pipeline()` (the thread's own) or `cuda::make_pipeline(group,
    &shared_state[, role or producer count])` -> a pipeline handle: it moves no bytes."""
    if len(args) not in (0, 2, 3):
        raise error(node, "cuda::make_pipeline takes () or (group, &shared_state[, role])")
    if args:
        if not isinstance(comp.expr(args[0]), Group):
            raise error(args[0], "cuda::make_pipeline needs a thread block or a tile first")
        state = getattr(pointee(comp, args[1], node), "type", None)
        if getattr(state, "name", None) != "cuda::pipeline_shared_state":
            raise error(args[1], "cuda::make_pipeline needs a pipeline_shared_state's address")
        for a in args[2:]:
            comp.expr(a)
    return ir.Const(0, C.PIPELINE, comp_pos(node))


def pipeline_method(comp: "Compiler", method: str, args: list[Node], node: Node) -> ir.Expr:
    """`pipe.producer_acquire()` and the other stage calls of a cuda::pipeline: they order
    the threads and move no bytes (its copies do)."""
    if method not in PIPELINE_METHODS:
        raise error(node, f"{method}() of a cuda::pipeline is outside the subset"
                    + suggest(method, PIPELINE_METHODS))
    for a in args:
        comp.expr(a)
    return void(node)


def group_copy(comp: "Compiler", group_node: Node, args: list[Node], node: Node):
    """A group's memcpy_async: the group's threads share the chunks (async_copy)."""
    group = comp.expr(group_node)
    if not isinstance(group, Group) or group.grid or group.mask is not None:
        raise error(group_node, "a group's memcpy_async needs a thread block or a tile first")
    return memcpy_async(comp, args, node, group_method(comp, group, "thread_rank", [], node),
                        group_method(comp, group, "size", [], node))


def barrier_method(comp: "Compiler", method: str, args: list[Node], node: Node) -> ir.Expr:
    """`bar.arrive_and_wait()`, `bar.arrive()` (a token) and `bar.wait(token)` of a
    cuda::barrier: they order the threads like __syncthreads and move no bytes."""
    if method == "arrive" and not args:
        return ir.Const(0, C.ARRIVAL_TOKEN, comp_pos(node))
    if method not in BARRIER_WAITS:
        raise error(node, f"{method}() of a cuda::barrier is outside the subset"
                    + suggest(method, BARRIER_WAITS))
    for a in args:
        comp.expr(a)
    return void(node)


def pointee(comp: "Compiler", arg: Node, node: Node):
    """The lvalue a pointer argument designates: `&x` -> x, `p` -> *p."""
    if arg.type == "pointer_expression" and arg.child_by_field_name("operator").type == "&":
        return comp.lvalue(arg.child_by_field_name("argument"))
    return comp.deref(comp.rvalue(arg), node)


def sincos(comp: "Compiler", name: str, args: list[Node], node: Node) -> ir.Expr:
    if len(args) != 3:
        raise error(node, f"{name} takes (x, &sin, &cos)")
    t = C.DOUBLE if name == "sincos" else C.FLOAT
    x = comp.cast(comp.rvalue(args[0]), t)
    s = comp.assignment(pointee(comp, args[1], node), ir.Math(np.sin, [x], t, x.pos), node,
                        args[1])
    c = comp.assignment(pointee(comp, args[2], node), ir.Math(np.cos, [x], t, x.pos), node,
                        args[2])
    return ir.Comma(s, ir.Comma(c, void(node), C.VOID, c.pos), C.VOID, comp_pos(node))


def shuffle(comp: "Compiler", kind: str, args: list[Node], node: Node,
            masked: bool = True) -> lanes.Shuffle:
    """__shfl*_sync(mask, value, lane[, width]) (or __shfl*(value, lane[, width])) -> a
    Shuffle over width-lane segments."""
    if len(args) not in (2 + masked, 3 + masked):
        raise error(node, "a warp shuffle takes (" + "mask, " * masked + "value, lane[, width])")
    if masked:
        comp.rvalue(args[0])
        args = args[1:]
    width = ir.Const(np.int32(32), C.INT, comp_pos(node))
    if len(args) == 3:
        width = comp.rvalue(args[2])
        if not C.is_int(width.type):
            raise error(args[2], "a shuffle's width must be an integer")
        if width.const:
            lanes.check_width(True, ir.constant_value(width), width.pos)
    return tile_shuffle(comp, kind, args[:2], node, width)


def tile_shuffle(comp: "Compiler", kind: str, args: list[Node], node: Node,
                 width: ir.Expr) -> lanes.Shuffle:
    value, arg = comp.rvalue(args[0]), comp.rvalue(args[1])
    if not C.is_int(arg.type):
        raise error(args[1], "a shuffle's lane must be an integer")
    if isinstance(value.type, C.Num):
        value = comp.cast(value, C.promote(value.type))
    return lanes.Shuffle(kind, value, arg, width, value.type, comp_pos(node))


def vote(comp: "Compiler", kind: str, args: list[Node], node: Node) -> lanes.Vote:
    want = 0 if kind == "active" else 2
    if len(args) != want:
        raise error(node, f"{text(node.child_by_field_name('function'))} takes "
                          f"{'no arguments' if not want else '(mask, predicate)'}")
    member = comp.rvalue(args[0]) if args else None
    pred = comp.condition(args[1]) if args else None
    t = C.UINT if kind in ("ballot", "active") else C.INT
    return lanes.Vote(kind, member, pred, 32, t, comp_pos(node))


def atomic(comp: "Compiler", name: str, args: list[Node], node: Node) -> lanes.Atomic:
    """atomicOp(address, operand[, operand]) -> one access: "red" when its result is
    discarded (a statement of its own), else "atom" (exchange and compare-and-swap have no
    reduction form: always "atom")."""
    if len(args) != ATOMICS[name]:
        raise error(node, f"{name} takes {ATOMICS[name]} arguments")
    mem = pointee(comp, args[0], node)
    if not isinstance(mem, ir.Memory):
        raise error(args[0], f"{name} on a local variable: atomics need global or shared "
                             "memory")
    if mem.space == "constant":
        raise error(args[0], f"{name} on the __constant__ array {mem.root!r}")
    operands = [comp.rvalue(a) for a in args[1:]]
    if isinstance(mem.type, C.Num):
        operands = [comp.cast(v, mem.type) for v in operands]
    parent = node.parent
    if parent is not None and parent.type == "cast_expression":
        parent = parent.parent
    discarded = parent is not None and parent.type == "expression_statement"
    op = "red" if discarded and name not in NO_REDUCTION else "atom"
    site = comp.site(mem, op, node)
    return lanes.Atomic(text(node.child_by_field_name("function")), mem, site, operands,
                        mem.type, comp_pos(node))


# ------------------------------------------------------------------ cooperative groups


def _group_size(comp: "Compiler", targs: Node | None, args: list[Node], node: Node) -> int:
    if targs is not None and len(targs.named_children) == 1 and len(args) == 1:
        n = template_int(comp, targs.named_children[0])
    elif targs is None and len(args) == 2:
        n = comp.constant_int(args[1])
    else:
        raise error(node, "tiled_partition takes (group, N) or <N>(group)")
    if n < 1 or n > MAX_TILE or n & (n - 1):
        raise error(node, f"tiles of {n} threads: sectorviz models tiles of 1 to {MAX_TILE} "
                          "threads (a power of 2)")
    group = comp.expr(args[0])
    if not isinstance(group, Group) or group.grid or group.mask is not None:
        raise error(args[0], "tiled_partition needs a thread block or a tile")
    if group.tile is not None and group.tile < n:
        raise error(node, f"a tile of {n} threads from a tile of {group.tile}")
    return n


def template_int(comp: "Compiler", node: Node) -> int:
    """An integer template argument; a bare name (`tiled_partition<TileSize>`) is one that
    tree-sitter took for a type."""
    inner = node.child_by_field_name("type") if node.type == "type_descriptor" else None
    if inner is None or inner.type != "type_identifier" or \
            node.child_by_field_name("declarator") is not None:
        return comp.constant_int(node)
    e = comp.value_of(comp.x_identifier(inner), inner)
    if not e.const or not C.is_int(e.type):
        raise error(node, f"'{text(node)}' must be an integer constant")
    return int(ir.constant_value(e))


def cg_name(fn: Node) -> tuple[str, Node | None]:
    """`cg::f`, `cg::f<N>`, `f`, `f<N>` -> ('f', template argument list or None)."""
    if fn.type == "qualified_identifier":
        fn = fn.child_by_field_name("name")
    if fn.type in ("template_function", "template_type"):
        return text(fn.child_by_field_name("name")), fn.child_by_field_name("arguments")
    return text(fn), None


def cg_function(comp: "Compiler", fn: Node, args: list[Node], node: Node):
    """cg::this_thread_block(), cg::tiled_partition, cg::reduce, cg::sync (also unqualified,
    after `using namespace cooperative_groups`) -> a node or Group."""
    name, targs = cg_name(fn)
    if name == "this_thread_block" and len(args) <= 1:
        if args and getattr(comp.expr(args[0]), "type", None) != C.TILE_MEMORY:
            raise error(args[0], "this_thread_block takes no argument or a block_tile_memory")
        return Group(None)
    if name == "tiled_partition":
        group = Group(_group_size(comp, targs, args, node))
        if group.tile > lanes.LANES and WIDE_TILES not in comp.assumptions:
            comp.assumptions.append(WIDE_TILES)
        return group
    if name == "sync" and len(args) == 1:
        comp.expr(args[0])
        return void(node)
    if name == "reduce" and len(args) == 3:
        return cg_reduce(comp, args, node)
    if name == "memcpy_async" and len(args) == 4:
        return group_copy(comp, args[0], args[1:], node)
    if name in ("wait", "wait_prior") and len(args) == 1:  # the group's copies are done
        comp.expr(args[0])
        return void(node)
    if name == "this_grid" and not args:
        return Group(None, grid=True)
    if name == "coalesced_threads" and not args:
        return Group(None, mask=lanes.Vote("active", None, None, lanes.LANES, C.UINT,
                                           comp_pos(node)))
    if name in ("labeled_partition", "binary_partition") and len(args) == 2:
        return partition(comp, name, args, node)
    if name in ("this_multi_grid", "this_cluster"):
        raise error(node, f"cg::{name}() (groups wider than a block) is outside the subset")
    raise error(node, f"cg::{name} is outside the subset"
                + suggest(name, sorted(CG_FUNCTIONS)))


def partition(comp: "Compiler", name: str, args: list[Node], node: Node) -> Group:
    """cg::labeled_partition(parent, label) / cg::binary_partition(parent, pred) of a
    coalesced group or a tile of up to 32 threads -> the group whose member mask holds, in
    each lane, the parent's executing members with the same label (__match_any_sync)."""
    parent = comp.expr(args[0])
    p = comp_pos(node)
    if isinstance(parent, Group) and parent.mask is not None:
        within = parent.mask
    elif isinstance(parent, Group) and parent.tile is not None and parent.tile <= lanes.LANES:
        n = parent.tile
        first = ir.Binary("&", lane_id(node), _uint(lanes.LANES - n, node), C.UINT, p)
        within = ir.Binary("<<", _uint(2 ** n - 1, node), first, C.UINT, p)
    else:
        raise error(args[0], f"cg::{name} needs a coalesced group or a tile of up to 32 "
                             "threads")
    if name == "binary_partition":
        label = ir.Convert(comp.condition(args[1]), C.UINT, p)
    else:
        label = comp.rvalue(args[1])
        if not C.is_int(label.type):
            raise error(args[1], f"cg::labeled_partition needs an integer label, not "
                                 f"{C.name_of(label.type)}")
    return Group(None, mask=lanes.Match(within, label, C.UINT, p))


def lane_id(node: Node) -> ir.Expr:
    """The lane of a thread in its warp: its rank in the block modulo 32."""
    return ir.Binary("&", block_rank(node), _uint(lanes.LANES - 1, node), C.UINT, comp_pos(node))


def masked_method(group: Group, method: str, args: list, node: Node):
    """thread_rank() (members below the lane) and size() / num_threads() (members) of a
    coalesced group or a partition, from each lane's member mask; None for other methods."""
    p = comp_pos(node)
    if args or method not in ("thread_rank", "size", "num_threads"):
        return None
    members = group.mask
    if method == "thread_rank":
        below = ir.Binary("-", ir.Binary("<<", _uint(1, node), lane_id(node), C.UINT, p),
                          _uint(1, node), C.UINT, p)
        members = ir.Binary("&", group.mask, below, C.UINT, p)
    return ir.Math(np.bitwise_count, [members], C.UINT, p)


def cg_reduce(comp: "Compiler", args: list[Node], node: Node) -> lanes.SegmentReduce:
    group = comp.expr(args[0])
    if isinstance(group, Group) and group.mask is not None:
        op, value, t = reduce_operation(comp, args)
        return lanes.GroupReduce(op, comp.cast(value, t), group.mask, t, comp_pos(node))
    if not isinstance(group, Group) or group.tile is None:
        raise error(args[0], "cg::reduce needs a tile (cg::tiled_partition<N>)")
    op, value, t = reduce_operation(comp, args)
    if group.tile > lanes.LANES:
        return spanning_warps(value, "cg::reduce", group.tile, t, node)
    return lanes.SegmentReduce(op, comp.cast(value, t), None, group.tile, t, comp_pos(node))


def reduce_operation(comp: "Compiler", args: list[Node]) -> tuple[str, ir.Expr, C.Num]:
    """cg::reduce(group, value, op)'s (operation, value, promoted type)."""
    op_node = args[2]  # cg::plus<T>() or cg::plus<T>{}
    fn = op_node.child_by_field_name({"call_expression": "function",
                                      "compound_literal_expression": "type"}.get(
        op_node.type, "function"))
    op = CG_OPS.get(cg_name(fn)[0]) if fn is not None else None
    if op is None:
        raise error(op_node, "cg::reduce's operation must be cg::plus, cg::less, cg::greater, "
                             "cg::bit_and, cg::bit_or or cg::bit_xor")
    value = comp.rvalue(args[1])
    if not isinstance(value.type, C.Num) or (value.type.floating and op in ("and", "or",
                                                                             "xor")):
        raise error(args[1], f"cg::reduce of {C.name_of(value.type)}")
    return op, value, C.promote(value.type)


def spanning_warps(operand: ir.Expr, what: str, tile: int, t: C.CType, node: Node) -> ir.Expr:
    """A collective of a tile wider than a warp: `operand` runs (for its accesses), and the
    value, which comes from other warps, is unknown."""
    why = f"the value {what} returns over a tile of {tile} threads (line {comp_pos(node)[0]})"
    return ir.Comma(operand, lanes.Opaque(why + ", which spans warps", t, comp_pos(node)), t,
                    comp_pos(node))


def _builtin(name: str, node: Node) -> ir.Builtin:
    return ir.Builtin(name, C.UINT, comp_pos(node))


def block_rank(node: Node) -> ir.Expr:
    """threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y."""
    p = comp_pos(node)
    b = _builtin

    def mul(x, y):
        return ir.Binary("*", x, y, C.UINT, p)

    def add(x, y):
        return ir.Binary("+", x, y, C.UINT, p)
    bx, by = b("blockDim.x", node), b("blockDim.y", node)
    return add(add(b("threadIdx.x", node), mul(b("threadIdx.y", node), bx)),
               mul(b("threadIdx.z", node), mul(bx, by)))


def block_size(node: Node) -> ir.Expr:
    p = comp_pos(node)
    return ir.Binary("*", ir.Binary("*", _builtin("blockDim.x", node),
                                    _builtin("blockDim.y", node), C.UINT, p),
                     _builtin("blockDim.z", node), C.UINT, p)


def grid_block_rank(node: Node) -> ir.Expr:
    """blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y, as
    grid_group::block_rank() numbers the blocks (x fastest)."""
    p = comp_pos(node)
    b = _builtin

    def mul(x, y):
        return ir.Binary("*", x, y, C.UINT, p)
    gx, gy = b("gridDim.x", node), b("gridDim.y", node)
    return ir.Binary("+", ir.Binary("+", b("blockIdx.x", node), mul(b("blockIdx.y", node), gx),
                                    C.UINT, p),
                     mul(b("blockIdx.z", node), mul(gx, gy)), C.UINT, p)


def grid_method(group_method_name: str, node: Node) -> ir.Expr | None:
    """A method of cg::this_grid() -> its value: thread_rank() = block_rank() * threads per
    block + the block's thread rank and size() = blocks * threads per block (unsigned long
    long, in threads), block_rank()/num_blocks() in blocks, block_index()/dim_blocks() the
    blockIdx/gridDim vectors; None for other methods."""
    p = comp_pos(node)

    def wide(x):
        return ir.Convert(x, C.ULLONG, p)

    def blocks():
        gx, gy, gz = (_builtin(f"gridDim.{a}", node) for a in "xyz")
        return ir.Binary("*", ir.Binary("*", gx, gy, C.UINT, p), gz, C.UINT, p)
    if group_method_name == "thread_rank":
        return ir.Binary("+", ir.Binary("*", wide(grid_block_rank(node)),
                                        wide(block_size(node)), C.ULLONG, p),
                         wide(block_rank(node)), C.ULLONG, p)
    if group_method_name in ("size", "num_threads"):
        return ir.Binary("*", wide(blocks()), wide(block_size(node)), C.ULLONG, p)
    if group_method_name == "block_rank":
        return grid_block_rank(node)
    if group_method_name == "num_blocks":
        return blocks()
    if group_method_name in ("block_index", "dim_blocks"):
        vector = "blockIdx" if group_method_name == "block_index" else "gridDim"
        return ir.Vector([_builtin(f"{vector}.{a}", node) for a in "xyz"], C.NAMED["uint3"], p)
    return None


def _uint(n: int, node: Node) -> ir.Const:
    return ir.Const(np.uint32(n), C.UINT, comp_pos(node))


def group_method(comp: "Compiler", group: Group, method: str, args: list[Node], node: Node):
    """`g.thread_rank()`, `tile.shfl_down(v, 1)`, ... -> a node."""
    p = comp_pos(node)
    n = group.tile
    if method == "sync" and not args:
        return void(node)
    if group.grid:
        value = None if args else grid_method(method, node)
        if value is None:
            raise error(node, f"{method}() of a grid group is outside the subset")
        return value
    if group.mask is not None:
        if method == "shfl" and len(args) == 2:
            value = comp.rvalue(args[0])
            return lanes.GroupShuffle(value, group.mask, comp.cast(comp.rvalue(args[1]),
                                                                   C.UINT), value.type, p)
        value = masked_method(group, method, args, node)
        if value is None:
            raise error(node, f"{method}() of a coalesced group or partition is outside the "
                              "subset")
        return value
    if method == "thread_rank" and not args:
        rank = block_rank(node)
        return rank if n is None else ir.Binary("&", rank, _uint(n - 1, node), C.UINT, p)
    if method in ("size", "num_threads") and not args:
        return block_size(node) if n is None else _uint(n, node)
    if n is None and not args and method in ("group_index", "thread_index", "group_dim",
                                             "dim_threads"):
        vector = {"group_index": "blockIdx", "thread_index": "threadIdx"}.get(method,
                                                                              "blockDim")
        return ir.Vector([_builtin(f"{vector}.{a}", node) for a in "xyz"], C.NAMED["uint3"],
                         p)
    if n is not None and not args and method in ("meta_group_rank", "meta_group_size"):
        if method == "meta_group_rank":
            return ir.Binary("/", block_rank(node), _uint(n, node), C.UINT, p)
        return ir.Binary("/", ir.Binary("+", block_size(node), _uint(n - 1, node), C.UINT, p),
                         _uint(n, node), C.UINT, p)
    if n is not None and method in TILE_SHUFFLES and len(args) == 2:
        shuffle = tile_shuffle(comp, TILE_SHUFFLES[method], args, node, ir.Const(
            np.int32(min(n, lanes.LANES)), C.INT, p))
        if n > lanes.LANES:
            both = ir.Comma(shuffle.value, shuffle.arg, shuffle.arg.type, p)
            return spanning_warps(both, f"{method}()", n, shuffle.type, node)
        return shuffle
    if n is not None and method in ("any", "all", "ballot") and len(args) == 1:
        t = C.UINT if method == "ballot" else C.INT
        if n > lanes.LANES:
            return spanning_warps(comp.condition(args[0]), f"{method}()", n, t, node)
        return lanes.Vote(method, None, comp.condition(args[0]), n, t, p)
    what = "thread block" if n is None else f"tile of {n}"
    raise error(node, f"{method}() of a {what} is outside the subset")
