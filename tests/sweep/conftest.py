"""A strided load whose sectors per request are known by hand for each stride: 32 lanes
reading 4-byte elements `stride` apart span 4 * stride * 32 bytes, so a request touches
min(4 * stride, 32) sectors of 32 bytes; past stride 8 the last lanes leave the 256-element
array (a failed point)."""

import json

import pytest

STRIDE_PATTERN = {
    "format": "sectorviz.pattern/1", "name": "Strided load",
    "params": {"stride": 1, "threads": 32},
    "launch": {"grid": [1], "block": ["threads"]},
    "arrays": {"a": {"dtype": "float32", "length": 256}},
    "accesses": [{"name": "load a[i*stride]", "op": "load", "array": "a",
                  "index": "threadIdx.x * stride"}],
}


@pytest.fixture
def stride_file(tmp_path):
    path = tmp_path / "stride.sectorviz.json"
    path.write_text(json.dumps(STRIDE_PATTERN, indent=2) + "\n")
    return path
