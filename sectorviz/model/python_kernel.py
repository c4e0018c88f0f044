"""The keys of a kernel written in Python in a pattern's `kernel` object, checked for shape:
`{"triton": "softmax.py", "function": ..., "constexprs": {...}, "num_warps": 4,
"num_stages": 3, "divisibility": {"n": false}}` or `{"numba": "scale.py", "function": ...}`,
each with an optional `arch`. A Triton launch's block is 32 x num_warps threads (its grid
counts programs), so `launch.block` is left out; a Numba launch gives its block."""

from __future__ import annotations

from typing import Any

from .errors import PatternError

PYTHON_TEXTS = ("triton", "numba")  # kernel keys naming a .py file
TRITON_KEYS = ("constexprs", "num_warps", "num_stages", "divisibility")
PYTHON_KEYS = frozenset(TRITON_KEYS)
DEFAULT_NUM_WARPS = 4  # Triton's defaults on CUDA
DEFAULT_NUM_STAGES = 3
MAX_NUM_WARPS = 32  # 1024 threads


def python_language(kernel: dict[str, Any] | None) -> str | None:
    """"triton" or "numba" for a kernel written in Python, else None."""
    return next((key for key in PYTHON_TEXTS if key in (kernel or {})), None)


def num_warps(kernel: dict[str, Any]) -> int:
    return int(kernel.get("num_warps", DEFAULT_NUM_WARPS))


def triton_block(kernel: dict[str, Any] | None) -> int | None:
    """Threads per block of a Triton kernel (32 x num_warps), else None."""
    return 32 * num_warps(kernel) if python_language(kernel) == "triton" and kernel else None


def check_python_keys(obj: dict[str, Any]) -> None:
    """The Python-kernel keys of a `kernel` object: Triton's only with `triton`; no
    compile `flags` or `engine` other than "compiled"."""
    language = python_language(obj)
    for key in TRITON_KEYS:
        if key in obj and language != "triton":
            raise PatternError(f"kernel.{key}", "only a Triton kernel ('triton') takes "
                                                f"'{key}'")
    if language is None:
        return
    if "flags" in obj or obj.get("engine", "compiled") != "compiled":
        raise PatternError("kernel", f"a {language} kernel is compiled by {language}: "
                                     "leave out 'flags' and 'engine'")
    if "constexprs" in obj:
        _constexprs(obj["constexprs"])
    if "divisibility" in obj:
        _divisibility(obj["divisibility"])
    warps = obj.get("num_warps", DEFAULT_NUM_WARPS)
    if not _is_int(warps) or warps not in [2**k for k in range(6)]:
        raise PatternError("kernel.num_warps", f"expected a power of two from 1 to "
                                               f"{MAX_NUM_WARPS}, got {warps!r}")
    stages = obj.get("num_stages", DEFAULT_NUM_STAGES)
    if not _is_int(stages) or not 1 <= stages <= 8:
        raise PatternError("kernel.num_stages", f"expected 1 to 8, got {stages!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _constexprs(obj: Any) -> None:
    """{name: integer, number, boolean, or an integer expression of the params (a text,
    evaluated by the Triton front end: `"BLOCK": "block"` lets a sweep vary it)}."""
    if not isinstance(obj, dict) or not all(
            isinstance(v, (int, float, bool, str)) for v in obj.values()):
        raise PatternError("kernel.constexprs", "expected an object {name: number, boolean "
                                                "or expression of the params}")


def _divisibility(obj: Any) -> None:
    """{argument name: whether Triton may assume it divisible by 16}."""
    if not isinstance(obj, dict) or not all(isinstance(v, bool) for v in obj.values()):
        raise PatternError("kernel.divisibility", "expected an object {argument: true or "
                                                  "false} (divisible by 16 or not)")
