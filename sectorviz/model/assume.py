"""Values the pattern does not give, where an address or branch needs them: the smallest fix a
message offers (`add "values": {...} to arrays.data`), and `--assume-values uniform`, which
applies exactly those fixes, one array at a time, until the kernel runs.

The rule for the range: integers uniform in [0, high), seed 0, where high is the smallest
length among the launch's other arrays (an index read from the array lands inside whichever
of them it indexes; the array's own length when it is alone), and at most the dtype's
natural range for 1- and 2-byte integers (uint8: 256, int8: 128, uint16: 65536, int16:
32768)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .errors import PatternError
from .kernel import ResolvedArray
from .pattern import Pattern, pattern_from_dict

T = TypeVar("T")
_NATURAL = {"int8": 2 ** 7, "uint8": 2 ** 8, "int16": 2 ** 15, "uint16": 2 ** 16,
            "char": 2 ** 7, "uchar": 2 ** 8, "short": 2 ** 15, "ushort": 2 ** 16}
_FIX = re.compile(r'add "values": (\{[^{}]*\}) to arrays\.(\w+)')


def assumed_values(name: str, arrays: Mapping[str, ResolvedArray]) -> dict[str, Any]:
    """The values assumed for array `name` (the module's rule)."""
    others = [a.length for n, a in arrays.items() if n != name and a.spec.space == "global"]
    high = min(others) if others else arrays[name].length
    dtype = arrays[name].spec.dtype or ""
    high = min(high, _NATURAL.get(dtype.rstrip("1234"), high))
    return {"kind": "uniform", "seed": 0, "low": 0, "high": max(high, 1)}


def values_fix(name: str, arrays: Mapping[str, ResolvedArray]) -> str:
    """The smallest fix for array `name`'s missing values, as a message says it."""
    if name not in arrays:
        return ""
    return f'; add "values": {json.dumps(assumed_values(name, arrays))} to arrays.{name}'


def fixes_in(err: PatternError) -> dict[str, dict[str, Any]]:
    """The value fixes a message offers: array -> its values."""
    return offered_fixes(err.message)


def offered_fixes(text: str) -> dict[str, dict[str, Any]]:
    """The value fixes an error line offers (`add "values": {...} to arrays.NAME`): array ->
    its values; none when it offers none."""
    return {name: json.loads(spec) for spec, name in _FIX.findall(text)}


def with_values(pattern: Pattern, fixes: Mapping[str, dict[str, Any]]) -> Pattern:
    """`pattern` with the arrays of `fixes` given those values."""
    doc = pattern.to_dict()
    for name, values in fixes.items():
        doc["arrays"][name]["values"] = values
    return pattern_from_dict(doc, pattern.base_dir, pattern.include_dirs)


def assuming(pattern: Pattern, kind: str | None, run: Callable[[Pattern], T]
             ) -> tuple[Pattern, T, dict[str, dict[str, Any]]]:
    """`run(pattern)`; with `kind` set, each time it fails for want of arrays' values, run
    again with the fix its message offers -> (the pattern run, its result, array -> the
    values assumed). Only arrays the kernel needed and the pattern did not give get any."""
    assumed: dict[str, dict[str, Any]] = {}
    while True:
        try:
            return pattern, run(pattern), assumed
        except PatternError as err:
            fixes = fixes_in(err) if kind else {}
            if not fixes or fixes.keys() & assumed.keys():
                raise
            assumed |= fixes
            pattern = with_values(pattern, fixes)


def stated(assumed: Mapping[str, dict[str, Any]]) -> list[str]:
    """The values assumed, one sentence per array."""
    return [f"assumed values: arrays.{name} uniform integers in [{v['low']}, {v['high']}), "
            f"seed {v['seed']} (not given in the pattern)" for name, v in assumed.items()]
