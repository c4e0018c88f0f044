"""Counts in words, the one place a noun agrees with its number: 1 warp, 32,768 warps."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """n and the noun, singular for exactly one: (1, 'warp') -> '1 warp', (2048, 'request')
    -> '2,048 requests'; `plural` where adding 's' is wrong ('addresses')."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
