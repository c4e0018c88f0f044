"""C's integer division, the one definition every evaluator uses (pattern expressions, the
PTX engine): the quotient truncates toward zero and the remainder takes
the dividend's sign, in the operands' own integer dtype (wrapping as the hardware does)."""

from __future__ import annotations

import numpy as np


def c_divmod(a: np.ndarray | np.integer, b: np.ndarray | np.integer
             ) -> tuple[np.ndarray, np.ndarray]:
    """Integer arrays (or scalars) a, b -> (a / b, a % b) as C computes them. Lanes whose
    divisor is 0 get quotient a and remainder 0 (callers decide what a zero divisor means
    before they use those lanes)."""
    zero = np.equal(b, 0)
    safe = np.where(zero, np.ones_like(b), b)
    with np.errstate(divide="ignore", over="ignore"):
        remainder = np.fmod(a, safe)
        quotient = (a - remainder) // safe  # exact, so floor and truncation agree
    return quotient, remainder
