"""Which Kernel interprets a pattern: the model's own, or the front end registered for
patterns with a `kernel` key (the model never imports one), and instructions by name."""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from .errors import PatternError
from .kernel import Kernel
from .pattern import Pattern, suggest

KernelFactory = Callable[[Pattern], Kernel]
_kernel_factories: list[KernelFactory] = []


def register_kernel_factory(factory: KernelFactory) -> None:
    """Set the front end that turns a pattern with a `kernel` key into a Kernel (the model
    never imports one: sectorviz.frontends registers the CUDA front end here)."""
    _kernel_factories[:] = [factory]
    kernel_for.cache_clear()


@lru_cache(maxsize=8)
def kernel_for(pattern: Pattern) -> Kernel:
    """The resolved kernel of a pattern (cached: patterns are immutable values). A pattern
    with a `kernel` key is interpreted by the registered front end, which has Kernel's
    interface."""
    if pattern.kernel is not None:
        if not _kernel_factories:
            raise PatternError("kernel", "no front end for kernels is loaded "
                                         "(import sectorviz.frontends)")
        return _kernel_factories[0](pattern)
    return Kernel(pattern)


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
