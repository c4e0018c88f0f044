"""Shared-memory banks: (rows, 32) lane byte addresses -> wavefronts per warp request.

The model (NVIDIA's documented rule for compute capability 5.0 and later; the phase rule for
wide accesses is the common measured behaviour): 32 banks of 4 bytes, bank = (byte address
/ 4) mod 32. Lanes using the same 4-byte word are served together (a broadcast; of stores to
one word, one wins). An access of 1, 2 or 4 bytes per lane is one phase of 32 lanes, of 8 bytes
two phases of 16 lanes (lanes 0-15, 16-31), wider ones four phases of 8 lanes. A phase with an
active lane takes as many wavefronts as the most distinct words one bank must serve, and
ideally one (ceil(distinct words / 32) for elements over 16 bytes, whose phase spans more than
the 32 banks); a request's wavefronts and ideal wavefronts are the sums over its phases.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .sectors import WARP_SIZE, touched_sector_ids

BANKS = 32
BANK_BYTES = 4
LOAD_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
STORE_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
LOAD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
STORE_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
_NONE = np.iinfo(np.int64).max  # the word of an inactive lane


def phase_lanes(width: int) -> int:
    """Bytes per lane -> lanes served per phase: 32 up to 4 bytes, 16 up to 8, else 8."""
    return WARP_SIZE if width <= 4 else 16 if width <= 8 else 8


@dataclass(frozen=True)
class BankRows:
    """Per request (row): wavefronts, ideal wavefronts, and the worst phase's wavefronts
    (the request's n-way conflict: 1 when no bank serves two distinct words in a phase)."""

    wavefronts: np.ndarray  # (rows,) int64
    ideal: np.ndarray  # (rows,) int64
    ways: np.ndarray  # (rows,) int64; 0 for a row without an active lane


def bank_rows(address: np.ndarray, width: int, active: np.ndarray) -> BankRows:
    """(rows, 32) shared byte addresses of `width`-byte lane accesses and active lanes ->
    BankRows. A lane touches the 4-byte words [address / 4, (address + width - 1) / 4]."""
    address = np.broadcast_to(address, active.shape)
    rows, lanes = active.shape
    per_phase = phase_lanes(width)
    words, k = touched_sector_ids(address, width, BANK_BYTES)
    on = np.repeat(active, k, axis=1) if k > 1 else active
    # lane-major ids: each phase's lanes are one contiguous run of per_phase * k columns
    phases = lanes // per_phase
    keyed = np.where(on, words, _NONE).reshape(rows * phases, per_phase * k)
    keyed.sort(axis=1)
    distinct = np.ones(keyed.shape, dtype=bool)
    distinct[:, 1:] = keyed[:, 1:] != keyed[:, :-1]
    distinct &= keyed != _NONE
    groups = rows * phases
    banks = np.where(distinct, keyed % BANKS, 0) + BANKS * np.arange(groups)[:, None]
    per_bank = np.bincount(banks.ravel(), weights=distinct.ravel(), minlength=groups * BANKS)
    waves = per_bank.reshape(groups, BANKS).max(axis=1).astype(np.int64).reshape(rows, phases)
    ideal = -(-distinct.sum(axis=1) // BANKS).reshape(rows, phases)
    return BankRows(waves.sum(axis=1), ideal.sum(axis=1), waves.max(axis=1))
