"""`--param NAME=LIST|start:stop[:step]` -> (NAME, the integer values in order).

A list is comma-separated integers (`tile=8,16,32`); a range is Python's `range(start, stop,
step)`, the stop left out (`pad=0:3` is 0, 1, 2; `threads=32:1025:32` is 32, 64, ..., 1024).
Every value is an int64 (-2^63 to 2^63 - 1), as a pattern's params are; a param has at most
MAX_VALUES values and a sweep at most MAX_POINTS points (the product over its params).
"""

from __future__ import annotations

import math
import re

MAX_VALUES = 10_000  # values of one --param; a sweep of more points is a typo
MAX_POINTS = 100_000  # points of one sweep: the product of its params' value counts
_NAME = re.compile(r"^[A-Za-z_][A-Za-z_0-9]*$")
_INT = re.compile(r"^[+-]?\d{1,40}$")  # the int64 check says what is too long
INT64 = range(-2**63, 2**63)


def point_count(params: list[tuple[str, tuple[int, ...]]]) -> int:
    """[(name, values), ...] -> the points of their product; ValueError with one line past
    MAX_POINTS (checked before any point is made)."""
    count = math.prod(len(values) for _, values in params)
    if count > MAX_POINTS:
        sizes = " x ".join(f"{len(values):,}" for _, values in params)
        raise ValueError(f"the params give {sizes} = {count:,} points; at most {MAX_POINTS:,}")
    return count


def parse_param(text: str) -> tuple[str, tuple[int, ...]]:
    """'tile=8,16,32' -> ('tile', (8, 16, 32)); 'pad=0:3' -> ('pad', (0, 1, 2));
    ValueError with one line saying what is wrong."""
    name, eq, spec = text.partition("=")
    name, spec = name.strip(), spec.strip()
    if not eq or not _NAME.match(name):
        raise ValueError(f"{text!r} is not NAME=LIST or NAME=start:stop[:step]")
    values = (_range(spec, text) if ":" in spec
              else tuple(_integer(v, text) for v in spec.split(",")))
    if not values:
        raise ValueError(f"{text!r} gives no values")
    if len(values) > MAX_VALUES:
        raise ValueError(f"{text!r} gives {len(values):,} values; at most {MAX_VALUES:,}")
    if len(set(values)) != len(values):
        raise ValueError(f"{text!r} gives a value twice")
    return name, values


def _range(spec: str, whole: str) -> tuple[int, ...]:
    parts = spec.split(":")
    if len(parts) not in (2, 3):
        raise ValueError(f"{spec!r} is not start:stop or start:stop:step")
    start, stop, step = (_integer(p, whole) for p in parts + ["1"] * (3 - len(parts)))
    if step == 0:
        raise ValueError(f"{spec!r}: the step is 0")
    r = range(start, stop, step)
    if len(r) > MAX_VALUES:
        raise ValueError(f"{spec!r} gives {len(r):,} values; at most {MAX_VALUES:,}")
    return tuple(r)


def _integer(text: str, whole: str) -> int:
    t = text.strip()
    if not _INT.match(t):
        raise ValueError(f"{whole!r}: {t!r} is not an integer")
    if int(t) not in INT64:
        raise ValueError(f"{whole!r}: {t} is outside the int64 range, -2^63 to 2^63 - 1")
    return int(t)
