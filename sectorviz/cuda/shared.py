"""Shared-memory accounting of a CUDA kernel: wavefronts and bank conflicts per instruction.

The bank model and its counting live in the model layer (model/banks.py, counted by
model/shared_stats.py in the same pass over warps as the global sectors); the interpreter
yields `shared_instructions` and their executions as ("shared", k, Batch) events, addresses
being byte offsets in the block's shared memory.
"""

from __future__ import annotations

from ..model.analysis import analyze
from ..model.budget import Budget
from ..model.pattern import Pattern
from ..model.shared_stats import SharedInstructionStats


def shared_analysis(pattern: Pattern, budget: Budget | None = None
                    ) -> tuple[SharedInstructionStats, ...]:
    """Pattern -> stats per shared instruction (empty without any), from the whole
    analysis, spending `budget` (None: the one already open, or a default one)."""
    return analyze(pattern, budget=budget).shared
