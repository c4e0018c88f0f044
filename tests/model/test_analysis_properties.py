"""The whole analysis against a plain-Python reference on random strided, guarded patterns."""

from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model import analyze, pattern_from_dict, warp_detail

DTYPES = {"uint8": 1, "int16": 2, "float32": 4, "float2": 8, "float4": 16}


def reference(block, grid, n, stride, offset, width, shift):
    """Per warp execution: (sectors, useful bytes, active lanes), in launch order."""
    tpb = block
    warps_per_block = -(-tpb // 32)
    rows = []
    for b in range(grid):
        for w in range(warps_per_block):
            sectors, used, lanes = set(), set(), 0
            for lane in range(32):
                t = w * 32 + lane
                i = b * block + t
                if t >= tpb or not i < n:
                    continue
                address = offset + (stride * i + shift) * width
                sectors.update(range(address // 32, (address + width - 1) // 32 + 1))
                used.update(range(address, address + width))
                lanes += 1
            rows.append((len(sectors), len(used), lanes))
    return rows


@settings(max_examples=60, deadline=None)
@given(block=st.integers(1, 96), grid=st.integers(1, 4), n=st.integers(1, 400),
       stride=st.integers(0, 9), offset=st.integers(0, 40), dtype=st.sampled_from(sorted(DTYPES)),
       shift=st.integers(0, 3))
def test_analysis_matches_reference(block, grid, n, stride, offset, dtype, shift):
    width = DTYPES[dtype]
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "params": {"n": n, "stride": stride, "shift": shift},
        "launch": {"grid": [grid], "block": [block]},
        "arrays": {"x": {"dtype": dtype, "length": "stride * 400 + 4", "offset_bytes": offset}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"}, "guard": "i < n",
        "accesses": [{"op": "load", "array": "x", "index": "stride * i + shift"}]})
    rows = reference(block, grid, n, stride, offset, width, shift)
    live = [r for r in rows if r[2]]
    s = analyze(p).instructions[0]
    assert s.requests == len(live)
    assert s.sectors == sum(r[0] for r in live)
    assert s.useful_bytes == sum(r[1] for r in live)
    assert s.active_lanes == sum(r[2] for r in live)
    assert s.ideal_sectors == sum(-(-r[1] // 32) for r in live)
    if live:
        assert (s.min, s.max) == (min(r[0] for r in live), max(r[0] for r in live))
    w = len(rows) - 1
    runs = warp_detail(p, w).executions[0]
    assert [r.sectors for r in runs] == ([rows[w][0]] if rows[w][2] else [])
