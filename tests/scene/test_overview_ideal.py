"""The overview measures each warp against its own ideal sectors per request (the analysis
keeps per-warp ideals), not against its instruction's average over the grid."""

import numpy as np

from sectorviz.model import analyze, pattern_from_dict
from sectorviz.scene.overview import overview_bins


def odd_pitch(pitch: int = 100):
    """Rows of `pitch` floats (400 B: odd rows start half a sector in), one block of 128
    threads per row, threads < pitch read their row: warps 0-2 read 32 floats, warp 3 four."""
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "odd pitch",
        "params": {"pitch": pitch}, "launch": {"grid": [4], "block": [128]},
        "arrays": {"x": {"dtype": "float32", "length": 4 * pitch}},
        "accesses": [{"name": "load row", "op": "load", "array": "x",
                      "index": "blockIdx.x * pitch + threadIdx.x",
                      "guard": "threadIdx.x < pitch"}]})


def brute_ideal(pattern) -> np.ndarray:
    """Each warp's whole sectors of the bytes its active lanes read (one request each)."""
    out = []
    for _block in range(4):
        for warp in range(4):
            lanes = [t for t in range(32 * warp, 32 * warp + 32) if t < 100]
            out.append(-(-4 * len(lanes) // 32) if lanes else 0)
    return np.array([out])


def test_each_warp_is_measured_against_its_own_ideal():
    pattern = odd_pitch()
    a = analyze(pattern, per_warp=True)
    assert (a.per_warp_ideal == brute_ideal(pattern)).all()
    assert a.per_warp_ideal.sum() == a.instructions[0].ideal_sectors == 13 * 4
    assert a.instructions[0].ideal_sectors / a.instructions[0].requests == 3.25
    bins = overview_bins(a, a.warps)
    # even rows: aligned, 4 sectors for ideal 4; odd rows start 16 B into a sector: 5 for 4
    assert a.per_warp_sectors[0, :4].tolist() == [4, 4, 4, 1]
    assert a.per_warp_sectors[0, 4:8].tolist() == [5, 5, 5, 1]
    assert bins.ratio[0, :8].tolist() == [1, 1, 1, 1, 1.25, 1.25, 1.25, 1]
    assert bins.waste[0, :8].tolist() == [0, 0, 0, 0, 1, 1, 1, 0]


def test_a_bin_of_warps_is_its_sectors_over_its_ideal():
    a = analyze(odd_pitch(), per_warp=True)
    bins = overview_bins(a, 2)  # warps 0-7 and 8-15: rows 0-1 and 2-3
    assert bins.ratio[0].tolist() == [(13 + 16) / 26] * 2
