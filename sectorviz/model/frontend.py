"""Which Kernel interprets a pattern: the model's own, or the front end registered for
patterns with a `kernel` key (the model never imports one), and instructions by name.

A kernel pattern has a Reading: the engine that counts it ("compiled": the PTX the compiler
emits; "source": the source as written) and why. The registered front end decides it
(sectorviz.frontends: the pattern's `kernel.engine`, SECTORVIZ_ENGINE, whether a compiler
is found); the kernel cache is keyed by pattern and reading, so engines never mix.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from .errors import PatternError
from .kernel import Kernel
from .pattern import Pattern, suggest


@dataclass(frozen=True)
class Reading:
    """Which engine counts a kernel pattern: "compiled" with the compiler's description
    (`nvcc 13.0 for sm_90 at -O3`), or "source" with why (`no CUDA compiler found`; "" when
    the source engine is the one asked or the default)."""

    engine: str
    compiler: str | None = None
    why: str = ""

    @property
    def words(self) -> str:
        """`compiled by nvcc 13.0 for sm_90 at -O3`, `as written (source engine)`, or
        `as written (source engine: no CUDA compiler found)`."""
        if self.engine == "compiled":
            return f"compiled by {self.compiler}"
        return f"as written (source engine{': ' + self.why if self.why else ''})"


KernelFactory = Callable[[Pattern, Reading], Kernel]
ReadingRule = Callable[[Pattern], Reading]
_front_end: list[tuple[KernelFactory, ReadingRule]] = []


def register_kernel_factory(factory: KernelFactory, reading: ReadingRule) -> None:
    """Set the front end that turns a pattern with a `kernel` key and its Reading into a
    Kernel, and the rule that gives a kernel pattern its Reading (the model never imports a
    front end: sectorviz.frontends registers the CUDA front end here)."""
    _front_end[:] = [(factory, reading)]
    _kernel_of.cache_clear()


def _registered() -> tuple[KernelFactory, ReadingRule]:
    if not _front_end:
        raise PatternError("kernel", "no front end for kernels is loaded "
                                     "(import sectorviz.frontends)")
    return _front_end[0]


def reading_of(pattern: Pattern) -> Reading | None:
    """The Reading of a kernel pattern; None for a pattern of accesses."""
    return None if pattern.kernel is None else _registered()[1](pattern)


def kernel_for(pattern: Pattern) -> Kernel:
    """The resolved kernel of a pattern (cached: patterns are immutable values). A pattern
    with a `kernel` key is interpreted by the registered front end, with the engine its
    Reading names; the result has Kernel's interface."""
    return _kernel_of(pattern, reading_of(pattern))


@lru_cache(maxsize=8)
def _kernel_of(pattern: Pattern, reading: Reading | None) -> Kernel:
    if reading is None:
        return Kernel(pattern)
    return _registered()[0](pattern, reading)


# `kernel_for.cache_clear()` empties the kernel cache (tests and benchmarks parse again)
kernel_for.cache_clear = _kernel_of.cache_clear  # type: ignore[attr-defined]


def instruction_index(pattern: Pattern, key: int | str, space: str = "global") -> int:
    """An instruction by 0-based index or by name -> its index among the `space` ones
    ("global", "shared", or "all": the global ones, then the shared ones, as the app counts);
    PatternError if there is none."""
    kernel = kernel_for(pattern)
    listed = {"global": kernel.instructions, "shared": kernel.shared_instructions,
              "all": kernel.instructions + kernel.shared_instructions}[space]
    names = [ins.name for ins in listed]
    if isinstance(key, str) and not key.lstrip("-").isdigit():
        if key in names:
            return names.index(key)
        raise PatternError("instruction", f"no instruction named {key!r}" + suggest(key, names))
    k = int(key)
    if not 0 <= k < len(names):
        raise PatternError("instruction", f"instruction {k} outside [0, {len(names)})")
    return k
