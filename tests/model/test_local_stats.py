"""Local memory: a front end's ("local", k, Batch) events are counted per instruction in
requests and sectors, listed under `local` in the JSON and as their own boundary rows."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sectorviz.engine.readings as readings
from sectorviz.model import analyze, pattern_from_text
from sectorviz.model.frontend import Reading, register_kernel_factory
from sectorviz.model.kernel import Batch, Instruction, Launch
from sectorviz.model.metrics import LOCAL_LOAD_SECTORS, LOCAL_STORE_SECTORS

WORDS = 8  # a per-thread float t[8]


class LocalFrames(Launch):
    """t[j] = ...; then ... = t[lane % 8]: word j of a thread lies at ((j * 32) + lane) * 4
    in its warp's frame of 8 x 128 bytes (per-thread words interleaved across lanes)."""

    instructions = shared_instructions = ()
    local_instructions = (Instruction("line 3: t[j] = x, st.local.f32", "store", "t", 4),
                          Instruction("line 4: t[i % 8], ld.local.f32", "load", "t", 4))

    def events(self, lo, hi, threads=None, skip=()):
        threads = threads or self.threads(lo, hi)
        lane = np.arange(32, dtype=np.int64)
        frame = (threads.warp * WORDS * 32 * 4)[:, None]
        for j in range(WORDS):  # the store: every lane word j
            address = frame + (j * 32 + lane) * 4
            yield "local", 0, Batch(threads.valid, address // 4, address, None, None, {})
        address = frame + ((lane % WORDS) * 32 + lane) * 4
        yield "local", 1, Batch(threads.valid, address // 4, address, None, None, {})


@pytest.fixture
def local_frames():
    register_kernel_factory(lambda pattern, reading: LocalFrames(pattern),
                            lambda pattern: Reading("source", "a stand-in compile"))
    yield pattern_from_text(json.dumps({
        "format": "sectorviz.pattern/1", "name": "frames", "launch": {"grid": [4],
                                                                        "block": [64]},
        "arrays": {"x": {"dtype": "float32", "length": 1}},
        "kernel": {"code": "__global__ void f() {}", "function": "f"}}))
    register_kernel_factory(readings.compiled_kernel, readings.kernel_reading)


def test_local_loads_and_stores_are_counted_per_request(local_frames):
    a = analyze(local_frames)
    store, load = a.local
    warps = 8
    # the store: each of 8 executions covers 128 contiguous bytes = 4 sectors
    assert (store.requests, store.sectors, store.logical_bytes) == (8 * warps, 32 * warps,
                                                                     8 * 32 * 4 * warps)
    # the load: lane l reads word l % 8: sector (l % 8) * 4 + l // 8, all 32 distinct
    assert (load.requests, load.sectors, load.active_lanes) == (warps, 32 * warps, 32 * warps)
    assert a.totals.sectors == 0  # no global access


def test_local_rows_are_boundaries_with_their_metrics_and_json(local_frames):
    a = analyze(local_frames)
    rows = {b.name: b for b in a.boundaries}
    assert rows["L1 request side, local stores"].sectors == 256
    assert rows["L1 request side, local loads"].sectors == 256
    assert rows["L1 request side, local loads"].metric == LOCAL_LOAD_SECTORS
    assert rows["L1 request side, local stores"].metric == LOCAL_STORE_SECTORS
    names = [b.name for b in a.boundaries]
    assert names.index("L1 request side, local loads") < names.index("below L1, no reuse")
    doc = a.to_json()["local"]
    assert [(d["name"], d["op"], d["width"], d["requests"], d["sectors"]) for d in doc] == [
        ("line 3: t[j] = x, st.local.f32", "store", 4, 64, 256),
        ("line 4: t[i % 8], ld.local.f32", "load", 4, 8, 256)]


def test_a_kernel_without_local_accesses_lists_none():
    from sectorviz.model import load_pattern
    from sectorviz.paths import examples_dir
    a = analyze(load_pattern(examples_dir() / "vector-add-cuda.sectorviz.json"))
    assert a.local == () and a.to_json()["local"] == []
    assert not any("local" in b.name for b in a.boundaries)
