"""Counts in words, the one place a noun agrees with its number: 1 warp, 32,768 warps; and
the words every view says of an instruction the selected warp does not run."""

from __future__ import annotations

NOT_RUN = "not run by this warp"


def counted(n: int, noun: str, plural: str = "") -> str:
    """n and the noun, singular for exactly one: (1, 'warp') -> '1 warp', (2048, 'request')
    -> '2,048 requests'; `plural` where adding 's' is wrong ('addresses')."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
