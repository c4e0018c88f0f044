"""C types of the CUDA subset, and C's conversion rules between them.

A type is static: the compiler gives every expression one, so the interpreter's values are
bare numpy arrays in the type's dtype (numpy then wraps exactly where C wraps). Sizes are
bytes, as on the device (LP64: long and size_t are 8 bytes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Num:
    """An arithmetic type: integer (rank orders conversions) or floating."""

    name: str
    size: int
    floating: bool = False
    signed: bool = True
    rank: int = 0

    @property
    def dtype(self) -> np.dtype:
        if self.name == "__nv_bfloat16":
            return np.dtype(np.float32)  # numpy has no bfloat16: values are kept in float32
        if self.floating:
            return np.dtype(f"float{self.size * 8}")
        if self is BOOL:
            return np.dtype(np.uint8)
        return np.dtype(f"{'' if self.signed else 'u'}int{self.size * 8}")


@dataclass(frozen=True)
class AlignedSize(Num):
    """`cuda::aligned_size_t<align>`: a byte count (size_t) that promises both pointers of
    a copy are `align`-byte aligned; arithmetic on it gives a plain size_t."""

    align: int = 1


def aligned_size(align: int) -> AlignedSize:
    return AlignedSize(f"cuda::aligned_size_t<{align}>", 8, signed=False, rank=4, align=align)


@dataclass(frozen=True)
class Vec:
    """A CUDA vector type (float4, int2, ...): n components of `base`, fields x, y, z, w."""

    name: str
    base: Num
    n: int

    @property
    def size(self) -> int:
        return self.base.size * self.n


@dataclass(frozen=True)
class Pointer:
    """A pointer into an array: `root` names it (a kernel parameter or a __shared__ array),
    or several, joined by ", ", when the pointer's lanes or times point into different arrays
    (`flag ? in : out`); "" while a declared pointer has no value yet."""

    to: "CType"
    space: str  # "global" | "shared"
    root: str

    size = 8


@dataclass(frozen=True)
class Array:
    """A fixed-size array (`__shared__ float tile[32][33]` is Array(Array(float, 33), 32))."""

    of: "CType"
    n: int

    @property
    def size(self) -> int:
        return self.of.size * self.n


@dataclass(frozen=True)
class Member:
    """A struct member: its type at `offset` bytes from the struct's start."""

    name: str
    type: "CType"
    offset: int


@dataclass(frozen=True)
class Struct:
    """A struct or class laid out by C's rules: each member at the next multiple of its
    alignment, the size rounded up to the struct's alignment (tail padding). Bytes."""

    name: str
    members: tuple[Member, ...]
    size: int
    align: int

    def member(self, name: str) -> Member | None:
        return next((m for m in self.members if m.name == name), None)


@dataclass(frozen=True)
class Opaque:
    """A type with no arithmetic: void, a cooperative group handle, a barrier; `size` bytes
    when it is an object in memory."""

    name: str
    size: int = 0


CType = Num | Vec | Pointer | Array | Struct | Opaque

BOOL = Num("bool", 1, signed=False, rank=0)
CHAR = Num("char", 1, rank=1)
UCHAR = Num("unsigned char", 1, signed=False, rank=1)
SHORT = Num("short", 2, rank=2)
USHORT = Num("unsigned short", 2, signed=False, rank=2)
INT = Num("int", 4, rank=3)
UINT = Num("unsigned int", 4, signed=False, rank=3)
LONG = Num("long", 8, rank=4)
ULONG = Num("unsigned long", 8, signed=False, rank=4)
LLONG = Num("long long", 8, rank=5)
ULLONG = Num("unsigned long long", 8, signed=False, rank=5)
HALF = Num("half", 2, floating=True)
BF16 = Num("__nv_bfloat16", 2, floating=True)  # a type of its own, not half
FLOAT = Num("float", 4, floating=True)
DOUBLE = Num("double", 8, floating=True)
VOID = Opaque("void")
GROUP = Opaque("thread_block")
AUTO = Opaque("auto")  # a declaration's type, taken from its initializer
BARRIER = Opaque("cuda::barrier", 8)  # libcu++'s block-scope barrier: one 8-byte mbarrier
PIPELINE = Opaque("cuda::pipeline")  # a handle: its calls order threads, move no bytes
PIPELINE_STAGE = 16  # bytes of a pipeline_shared_state per stage: its two 8-byte barriers
PIPELINE_COUNT = 8  # bytes: pipeline_shared_state's 4-byte thread count, padded to 8


def pipeline_shared_state(stages: int) -> Opaque:
    """`cuda::pipeline_shared_state<scope, stages>`: shared memory, its size as libcu++ lays
    it out (a produced and a consumed barrier per stage, then a counter)."""
    return Opaque("cuda::pipeline_shared_state", PIPELINE_STAGE * stages + PIPELINE_COUNT)


ARRIVAL_TOKEN = Opaque("cuda::barrier::arrival_token")  # what bar.arrive() gives bar.wait()
TILE_MEMORY = Opaque("cg::block_tile_memory")  # cg's scratch for tiles wider than a warp

NAMED: dict[str, Num | Opaque] = {
    "bool": BOOL, "char": CHAR, "signed char": CHAR, "unsigned char": UCHAR,
    "short": SHORT, "unsigned short": USHORT, "int": INT, "unsigned int": UINT,
    "long": LONG, "unsigned long": ULONG, "long long": LLONG, "unsigned long long": ULLONG,
    "uint": UINT, "uchar": UCHAR, "ushort": USHORT, "ulong": ULONG,
    "size_t": ULONG, "ssize_t": LONG, "ptrdiff_t": LONG, "intptr_t": LONG, "uintptr_t": ULONG,
    "half": HALF, "__half": HALF, "__nv_bfloat16": BF16, "nv_bfloat16": BF16,
    "float": FLOAT, "double": DOUBLE, "void": VOID,
}
for _bits, (_signed, _unsigned) in {8: (CHAR, UCHAR), 16: (SHORT, USHORT), 32: (INT, UINT),
                                    64: (LONG, ULONG)}.items():  # <cstdint>
    for _kind in ("", "_least", "_fast"):
        NAMED[f"int{_kind}{_bits}_t"], NAMED[f"uint{_kind}{_bits}_t"] = _signed, _unsigned
NAMED["intmax_t"], NAMED["uintmax_t"] = LONG, ULONG
NAMED["clock_t"] = LONG  # what clock() returns (a long on 64-bit Linux)
_VEC_BASES = {"char": CHAR, "uchar": UCHAR, "short": SHORT, "ushort": USHORT, "int": INT,
              "uint": UINT, "long": LONG, "ulong": ULONG, "longlong": LLONG,
              "ulonglong": ULLONG, "float": FLOAT, "double": DOUBLE}
for _prefix, _base in _VEC_BASES.items():
    for _n in (1, 2, 3, 4):
        NAMED[f"{_prefix}{_n}"] = Vec(f"{_prefix}{_n}", _base, _n)
NAMED["__half2"] = NAMED["half2"] = Vec("half2", HALF, 2)
NAMED["__nv_bfloat162"] = NAMED["nv_bfloat162"] = Vec("__nv_bfloat162", BF16, 2)
GROUP_TYPES = {"thread_block", "thread_group", "grid_group", "coalesced_group"}

FIELDS = "xyzw"


def alignof(t: CType) -> int:
    """The alignment of `t` in bytes, as nvcc lays it out: a vector type of 1, 2 or 4
    components is aligned to its size up to 16 (float2: 8, float4: 16, double4: 16), one of
    3 components to its base type (float3: 4)."""
    if isinstance(t, Struct):
        return t.align
    if isinstance(t, Array):
        return alignof(t.of)
    if isinstance(t, Vec):
        return t.base.size if t.n == 3 else min(t.size, 16)
    return max(1, t.size)


def roots(root: str) -> tuple[str, ...]:
    """The arrays a pointer root names."""
    return tuple(root.split(", ")) if root else ()


def join_roots(a: str, b: str, order: list[str]) -> str:
    """The arrays of two pointer roots together, in the order of `order` (array names)."""
    both = {r for root in (a, b) for r in root.split(", ") if r}
    return ", ".join(sorted(both, key=lambda r: (order.index(r) if r in order else len(order),
                                                 r)))


def name_of(t: CType) -> str:
    if isinstance(t, Pointer):
        return f"{name_of(t.to)} *"
    if isinstance(t, Array):
        return f"{name_of(t.of)}[{t.n}]"
    return t.name


def promote(t: Num) -> Num:
    """Integer promotion: types narrower than int become int (an aligned size, size_t)."""
    if isinstance(t, AlignedSize):
        return ULONG
    return INT if not t.floating and t.rank < INT.rank else t


def common(a: Num, b: Num) -> Num:
    """C's usual arithmetic conversions -> the type both operands convert to."""
    if a.floating or b.floating:
        return max((t for t in (a, b) if t.floating), key=lambda t: t.size)
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.rank > b.rank else b
    unsigned, signed = (a, b) if not a.signed else (b, a)
    if unsigned.rank >= signed.rank:
        return unsigned
    if signed.size > unsigned.size:
        return signed
    return Num("unsigned " + signed.name, signed.size, signed=False, rank=signed.rank)


def is_int(t: CType) -> bool:
    return isinstance(t, Num) and not t.floating
