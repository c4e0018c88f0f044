"""The L2 cache model replayed by hand: hits, misses, write-backs, eviction order, both
execution orders, presets and the machine key."""

import json
from importlib import resources
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sectorviz.model import PatternError, analyze, cache, pattern_from_dict
from sectorviz.model.cache import (
    ENGINE_VARIABLE,
    L2,
    LOAD,
    MACHINE_KEYS,
    PRESETS,
    STORE,
    Machine,
    Simulation,
    cache_engine,
    line_touches,
    machine,
    stable_order,
)

LINE = 128
# the engine's variable is the same for every example a property test draws
ONE_ENGINE = [HealthCheck.function_scoped_fixture]


@pytest.fixture(params=["numpy", "numba"])
def engine(request, monkeypatch):
    """Each L2 of the test runs on this engine (numba's skip when it is not installed)."""
    if request.param == "numba":
        pytest.importorskip("numba")
    monkeypatch.setenv(ENGINE_VARIABLE, request.param)
    return request.param


def run(l2, touches):
    """(line, mask, kind) touches through `l2`, then the end of the kernel -> counts."""
    lines, masks, kinds = zip(*touches)
    l2.touch(lines, masks, kinds)
    l2.finish()
    return l2.counts()


def test_loads_hit_only_valid_sectors_of_resident_lines(engine):
    # 2 lines. A: line 0 sector 0 misses; line 1 sector 0 misses; line 0 sectors 0,1:
    # 0 hits, 1 misses (the line is resident, the sector is not); line 2 evicts the least
    # recent, line 1; line 1 again evicts line 0
    c = run(L2(2 * LINE), [(0, 0b1, LOAD), (1, 0b1, LOAD), (0, 0b11, LOAD), (2, 0b1, LOAD),
                           (1, 0b1, LOAD)])
    assert (c.load_hits, c.load_misses, c.dram_read_bytes, c.dram_write_bytes) == (1, 5, 160, 0)


def test_a_touch_moves_its_line_to_most_recent(engine):
    # 2 lines: 0, 1, 0 (0 is now most recent), 2 evicts 1, so 0 still hits
    c = run(L2(2 * LINE), [(0, 1, LOAD), (1, 1, LOAD), (0, 1, LOAD), (2, 1, LOAD),
                           (0, 1, LOAD)])
    assert (c.load_hits, c.load_misses) == (2, 3)


def test_stores_write_back_on_eviction_and_at_the_end_without_reading(engine):
    # 1 line: store 2 sectors of line 0 (no read), load one of them (hit), line 1 evicts
    # line 0 (2 dirty sectors written), store 1 sector of line 1 (written at the end)
    c = run(L2(LINE), [(0, 0b0101, STORE), (0, 0b0001, LOAD), (1, 0b1000, STORE)])
    assert (c.load_hits, c.load_misses, c.store_sectors) == (1, 0, 3)
    assert (c.dram_read_bytes, c.dram_write_bytes) == (0, 96)


def test_an_atomic_loads_then_stores_its_sectors(engine):
    c = run(L2(LINE), [(0, 0b0011, LOAD | STORE), (0, 0b0011, LOAD | STORE)])
    assert (c.load_hits, c.load_misses, c.store_sectors) == (2, 2, 4)
    assert (c.dram_read_bytes, c.dram_write_bytes) == (64, 64)  # written once, at the end


def test_ways_split_lines_into_sets(engine):
    # 4 lines, 2 ways: 2 sets, line L in set L % 2. Lines 0, 2, 4 share set 0 (4 evicts 0);
    # line 1 goes to set 1 and evicts nothing, so 2 still hits; fully associative, 0 hits
    touches = [(0, 1, LOAD), (2, 1, LOAD), (1, 1, LOAD), (4, 1, LOAD), (2, 1, LOAD),
               (0, 1, LOAD)]
    c = run(L2(4 * LINE, ways=2), touches)
    assert (c.load_hits, c.load_misses) == (1, 5)
    c = run(L2(4 * LINE), touches)
    assert (c.load_hits, c.load_misses) == (2, 4)


def reference(nsets, ways, touches):
    """A list per set, least recent first, and dicts of valid and dirty sectors."""
    lru, valid, dirty = [[] for _ in range(nsets)], {}, {}
    hits = misses = written = 0
    for line, mask, kind in touches:
        order = lru[line % nsets]
        if line in order:
            order.remove(line)
        elif len(order) == ways:
            old = order.pop(0)
            written += len(dirty.pop(old, set()))
            valid.pop(old, None)
        order.append(line)
        sectors = {i for i in range(4) if mask >> i & 1}
        if kind & LOAD:
            hits += len(sectors & valid.get(line, set()))
            misses += len(sectors - valid.get(line, set()))
        valid.setdefault(line, set()).update(sectors)
        if kind & STORE:
            dirty.setdefault(line, set()).update(sectors)
    written += sum(len(d) for d in dirty.values())
    return hits, misses, written * 32, lru


# line ids across the 16-bit digits the model's sorts take apart
SPREAD = [0, 1, 2, 3, 5, 8, 13, 65535, 65536, 65539, 2**32 - 1, 2**32 + 4, 2**40 + 7]
TOUCHES = st.lists(st.tuples(st.sampled_from(SPREAD), st.integers(1, 15),
                             st.sampled_from([LOAD, STORE, LOAD | STORE])),
                   min_size=1, max_size=60)


def observed(l2, nsets):
    """The model's counts and its resident lines per set, least recent first."""
    c = l2.counts()
    lru = [[int(x) for x in l2.resident() if x % nsets == s] for s in range(nsets)]
    return c.load_hits, c.load_misses, c.dram_write_bytes, lru


@settings(max_examples=200, deadline=None, suppress_health_check=ONE_ENGINE)
@given(st.integers(1, 6), TOUCHES, st.integers(1, 8), st.sampled_from([0, 64]))
def test_the_model_matches_a_brute_force_lru(engine, lines, touches, batch, window):
    """Fully associative; the touches arrive in pieces and run `batch` at a time; rounds
    counted by comparing touches directly (up to `window` ways) or by the merge-sort tree."""
    with patch.object(cache, "WINDOW_WAYS", window):
        l2 = L2(lines * LINE)
        l2.batch = batch
        for i in range(0, len(touches), 5):
            l2.touch(*zip(*touches[i:i + 5]))
        l2.finish()
    assert l2.engine == engine
    assert observed(l2, 1) == reference(1, lines, touches)


@settings(max_examples=150, deadline=None, suppress_health_check=ONE_ENGINE)
@given(st.sampled_from([(4, 1), (4, 2), (6, 3), (8, 2), (8, 4)]), TOUCHES,
       st.sampled_from([0, 64]))
def test_set_associative_matches_a_brute_force_lru(engine, shape, touches, window):
    lines, ways = shape
    l2 = L2(lines * LINE, ways=ways)
    with patch.object(cache, "WINDOW_WAYS", window):
        run(l2, touches)
    assert observed(l2, lines // ways) == reference(lines // ways, ways, touches)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**48), st.integers(0, 3), st.integers(0, 70000)),
                max_size=40))
def test_stable_order_is_lexsorts_order(rows):
    keys = [np.array(k, dtype=np.int64) for k in zip(*rows)] or [np.zeros(0, np.int64)] * 3
    assert stable_order(*keys).tolist() == np.lexsort(keys).tolist()


def test_line_touches_group_each_requests_sectors_by_line():
    sectors = np.array([0, 1, 5, 1, 2, 3, 4])  # request 0: 0 1 5; request 1: 1 2 3 4
    request = np.array([0, 0, 0, 1, 1, 1, 1])
    lines, masks, first = line_touches(sectors, request)
    assert lines.tolist() == [0, 1, 0, 1]
    assert masks.tolist() == [0b0011, 0b0010, 0b1110, 0b0001]
    assert first.tolist() == [0, 2, 3, 6]


# ---------------------------------------------------------------- execution orders


def pattern(order, grid=3, loads=2, index="w * 1024 + j * 32 + threadIdx.x % 32", **keys):
    """Blocks of 64 threads (2 warps); warp w's j-th load reads one whole 128-byte line."""
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [grid], "block": [64]},
        "arrays": {"a": {"dtype": "float32", "length": 1 << 16}},
        "let": {"w": "blockIdx.x * 2 + threadIdx.x / 32"},
        "accesses": [{"op": "load", "array": "a", "index": index,
                      "loops": [{"var": "j", "start": 0, "stop": loads}]}],
        "machine": {"l2_bytes": 4 * LINE, "sms": 1, "dram_bytes_per_s": 1e12,
                    "threads_per_sm": 128, "order": order, **keys}})


def recorded_lines(p, monkeypatch):
    seen = []
    touch = L2.touch

    def record(self, lines, masks, kinds):
        seen.extend(np.asarray(lines).tolist())
        touch(self, lines, masks, kinds)

    monkeypatch.setattr(L2, "touch", record)
    return analyze(p), seen


def test_warp_serial_runs_each_warp_to_its_end(monkeypatch):
    # line of warp w, load j: w * 32 + j
    _, seen = recorded_lines(pattern("warp-serial"), monkeypatch)
    assert seen == [0, 1, 32, 33, 64, 65, 96, 97, 128, 129, 160, 161]


def test_waves_take_turns_within_a_wave(monkeypatch):
    # 128 threads per SM / 64 per block: 2 resident blocks, 1 SM: waves of 2 blocks (warps
    # 0-3, then 4-5); in a wave every warp's first load, then every warp's second
    _, seen = recorded_lines(pattern("waves"), monkeypatch)
    assert seen == [0, 32, 64, 96, 1, 33, 65, 97, 128, 160, 129, 161]


def test_the_order_changes_the_dram_bytes():
    # every warp reads lines 0 and 1; a 1-line L2: warp-serial alternates lines (every load
    # misses its 4 sectors), waves read line 0 six times (4 misses) then line 1 likewise
    same = "j * 32 + threadIdx.x % 32"
    serial = analyze(pattern("warp-serial", index=same, l2_bytes=LINE)).cache.counts
    waves = analyze(pattern("waves", grid=3, index=same, l2_bytes=LINE)).cache.counts
    assert (serial.load_misses, serial.load_hits) == (48, 0)
    # waves of 4 warps: per wave, line 0 misses once then hits 3 times, line 1 likewise
    assert (waves.load_misses, waves.load_hits) == (16, 32)
    assert waves.dram_read_bytes == 16 * 32


def test_the_estimate_sits_between_the_bounds_with_its_metrics():
    a = analyze(pattern("warp-serial", l2_bytes=2 * LINE))
    names = [b.name for b in a.boundaries]
    reads, writes = (a.boundaries[names.index(f"L2 -> DRAM {x}, cache model")]
                     for x in ("reads", "writes"))
    assert names.index("below L1, no reuse") < names.index(reads.name) < names.index(
        "below L1, perfect reuse")
    assert (reads.bytes, reads.metric, writes.bytes, writes.metric) == (
        12 * 128, "dram__bytes_read.sum", 0, "dram__bytes_write.sum")
    assert "lower bound, not a runtime" in reads.assumption
    doc = a.to_json()["cache"]
    assert doc == {"machine": "custom", "l2_bytes": 256, "ways": 0, "order": "warp-serial",
                   "l2_sector_hits": 0, "l2_sector_misses": 48, "dram_read_bytes": 1536,
                   "dram_write_bytes": 0, "time_floor_s": 1536 / 1e12}


def test_stores_and_loads_reach_the_model_by_op():
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
        "arrays": {"a": {"dtype": "float32", "length": 64}},
        "accesses": [{"op": "store", "array": "a", "index": "threadIdx.x"},
                     {"op": "load", "array": "a", "index": "threadIdx.x + 32"},
                     {"name": "again", "op": "load", "array": "a", "index": "threadIdx.x"}],
        "machine": {"preset": "V100"}})
    c = analyze(p).cache.counts
    # the store fills line 0 dirty; line 1 misses; line 0's load hits; line 0 written back
    assert (c.load_hits, c.load_misses, c.store_sectors) == (4, 4, 4)
    assert (c.dram_read_bytes, c.dram_write_bytes) == (128, 128)


def test_a_machine_without_one_leaves_the_analysis_as_it_was():
    p = pattern("warp-serial")
    doc = p.to_dict()
    del doc["machine"]
    plain = analyze(pattern_from_dict(doc))
    assert plain.cache is None and "cache" not in plain.to_json()
    assert plain.totals == analyze(p).totals


# ---------------------------------------------------------------- presets and the key


def test_presets_name_their_source_and_keys_override_them():
    assert set(PRESETS) == {"V100", "A100-40GB", "A100-80GB", "H100-SXM", "H200-SXM",
                            "RTX-4090", "L40S"}
    assert all(p.source for p in PRESETS.values())
    m = machine({"preset": "H100-SXM"})
    assert (m.sms, m.l2_bytes, m.dram_bytes_per_s, m.ways, m.order) == (
        132, 50 * 2**20, 3.35e12, 0, "warp-serial")
    m = machine({"preset": "H100-SXM", "l2_bytes": 1 << 20, "ways": 16, "order": "waves"})
    assert (m.l2_bytes, m.ways, m.order, m.sms) == (1 << 20, 16, "waves", 132)
    assert "overrides" in m.source
    # 2048 threads per SM: 8 blocks of 256 threads; at most 32 blocks; Ada holds 1536
    assert m.resident_blocks(256) == 8 and m.resident_blocks(32) == 32
    assert machine({"preset": "RTX-4090"}).resident_blocks(256) == 6


@pytest.mark.parametrize("spec, place", [
    ({"preset": "H100"}, "machine.preset"),
    ({"preset": "V100", "order": "random"}, "machine.order"),
    ({"preset": "V100", "ways": 7}, "machine.ways"),
    ({"preset": "V100", "l2_bytes": 64}, "machine.l2_bytes"),
    ({"preset": "V100", "size": 1}, "machine.size"),
    ({"l2_bytes": 4096}, "machine"),
    ("V100", "machine"),
])
def test_bad_machines_are_one_line_naming_the_key(spec, place):
    with pytest.raises(PatternError) as err:
        machine(spec)
    assert err.value.place == place


def test_the_model_refuses_other_sector_sizes():
    doc = pattern("warp-serial").to_dict() | {"sector_bytes": 64}
    with pytest.raises(PatternError, match="32-byte sectors"):
        analyze(pattern_from_dict(doc))


def test_schema_names_the_machine_keys():
    schema = json.loads(resources.files("sectorviz.model").joinpath(
        "pattern.schema.json").read_text())
    machine_schema = schema["properties"]["machine"]
    assert set(machine_schema["properties"]) == MACHINE_KEYS
    assert machine_schema["properties"]["preset"]["enum"] == list(PRESETS)


def test_a_wave_is_whole_blocks_of_every_sm():
    m = Machine("x", 2, 1024, 1e9, 128, 0, "waves", "")
    sim = Simulation(m, warps_per_block=2, threads_per_block=64)
    assert sim.wave_warps == 8  # 2 SMs x 2 blocks x 2 warps
    assert sim.chunk_warps(20) == 16 and sim.chunk_warps(3) == 8


def test_an_atomic_in_cuda_is_a_load_then_a_store():
    import sectorviz.engine.readings  # noqa: F401 - registers the CUDA front end
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [64]},
        "arrays": {"c": {"length": 32}},
        "kernel": {"code": "__global__ void k(int *c) { atomicAdd(&c[threadIdx.x % 32], 1); }",
                   "function": "k"},
        "machine": {"preset": "A100-40GB"}})
    a = analyze(p)
    assert [s.op for s in a.instructions] == ["red"]
    c = a.cache.counts
    # warp 0: 4 sectors miss, then stored (dirty); warp 1: the same 4 sectors hit
    assert (c.load_misses, c.load_hits, c.store_sectors) == (4, 4, 8)
    assert (c.dram_read_bytes, c.dram_write_bytes) == (128, 128)


def test_the_resident_lines_are_held_against_the_memory_cap():
    from sectorviz.model.budget import Budget
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [1024], "block": [256]},
        "arrays": {"a": {"dtype": "float32", "length": 2**18}},
        "accesses": [{"op": "load", "array": "a", "index": "blockIdx.x * 256 + threadIdx.x"}],
        "machine": {"preset": "H100-SXM", "l2_bytes": 2**40}})
    assert analyze(p).cache.counts.load_misses == 2**15  # 8,192 lines held: 1.3 MB
    with pytest.raises(PatternError, match="the cache model's 8,192 resident lines"):
        analyze(p, budget=Budget(memory=2**20))


def test_the_compiled_engines_slots_are_held_against_the_memory_cap(monkeypatch):
    pytest.importorskip("numba")
    from sectorviz.model.budget import Budget
    monkeypatch.setenv(ENGINE_VARIABLE, "numba")
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "launch": {"grid": [1024], "block": [256]},
        "arrays": {"a": {"dtype": "float32", "length": 2**18}},
        "accesses": [{"op": "load", "array": "a", "index": "blockIdx.x * 256 + threadIdx.x"}],
        "machine": {"preset": "H100-SXM", "l2_bytes": 2**40}})
    assert analyze(p).cache.counts.load_misses == 2**15
    # 8,192 slots of 32 bytes and a table of 16,384 entries of 8 bytes: 384 KiB
    with pytest.raises(PatternError, match="the cache model's 8,192 line slots"):
        analyze(p, budget=Budget(memory=2**18))


@pytest.mark.parametrize("lines, ways, window", [(40, 0, 64), (40, 0, 0), (64, 8, 64),
                                                 (64, 8, 0), (96, 32, 64)])
def test_long_traces_match_the_brute_force_lru(engine, lines, ways, window):
    """3,000 touches over about twice the cache, in batches of 700 (many rounds, lines carried
    across batches), by either way of counting a round."""
    rng = np.random.default_rng(lines + ways + window)
    touches = list(zip(rng.integers(0, 2 * lines, 3000).tolist(),
                       rng.integers(1, 16, 3000).tolist(),
                       rng.choice([LOAD, STORE, LOAD | STORE], 3000).tolist()))
    with patch.object(cache, "WINDOW_WAYS", window):
        l2 = L2(lines * LINE, ways=ways)
        l2.batch = 700
        for i in range(0, len(touches), 700):
            l2.touch(*zip(*touches[i:i + 700]))
        l2.finish()
    assert l2.engine == engine
    nsets = lines // ways if ways else 1
    assert observed(l2, nsets) == reference(nsets, ways or lines, touches)


def benchmark_shaped(n: int, lines: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The benchmark's streams (benchmarks/bench_cache.py) at a small size: n touches over an
    L2 of `lines` lines."""
    rng = np.random.default_rng(n)
    full, loads = np.full(n, 15), np.full(n, LOAD)
    return [(np.arange(n), full, loads),
            (rng.integers(0, lines // 2, n), full, loads),
            (rng.integers(0, 2 * lines, n), 1 << rng.integers(0, 4, n), loads),
            (np.arange(n) % (3 * lines // 2), full, np.where(np.arange(n) % 2, LOAD, STORE)),
            (rng.integers(0, 3 * lines, n), rng.integers(1, 16, n),
             rng.choice([LOAD, STORE, LOAD | STORE], n))]


@pytest.mark.parametrize("ways", [0, 16])
def test_both_engines_count_the_benchmark_traces_alike(ways, monkeypatch):
    pytest.importorskip("numba")
    for trace in benchmark_shaped(30000, 1024):
        seen = []
        for name in ("numpy", "numba"):
            monkeypatch.setenv(ENGINE_VARIABLE, name)
            l2 = L2(1024 * LINE, ways)
            l2.batch = 7000  # several runs: state carried from one to the next
            for lo in range(0, 30000, 10000):
                l2.touch(*(a[lo:lo + 10000] for a in trace))
            l2.finish()
            assert l2.engine == name
            seen.append((l2.counts(), l2.resident().tolist()))
        assert seen[0] == seen[1]
        assert seen[0][0].load_misses > 0


def test_both_engines_give_an_analysis_the_same_estimate(monkeypatch):
    pytest.importorskip("numba")
    results = []
    for name in ("numpy", "numba"):
        monkeypatch.setenv(ENGINE_VARIABLE, name)
        for order in ("warp-serial", "waves"):
            p = pattern(order, grid=40, loads=6, l2_bytes=16 * LINE, ways=4, sms=4,
                        index="(w % 9) * 1024 + (j % 4) * 32 + threadIdx.x % 32")
            results.append(analyze(p).cache.counts)
    assert results[:2] == results[2:]
    assert results[0] != results[1]


def test_the_engine_is_chosen_in_one_place(monkeypatch):
    monkeypatch.delenv(ENGINE_VARIABLE, raising=False)
    monkeypatch.setattr(cache.cache_jit, "available", lambda: True)
    assert cache_engine(cache.JIT_MIN_TOUCHES - 1, 1) == "numpy"  # no compile for small runs
    assert cache_engine(cache.JIT_MIN_TOUCHES, 1) == "numba"
    assert cache_engine(cache.JIT_MIN_TOUCHES, cache.JIT_MAX_SETS + 1) == "numpy"
    monkeypatch.setenv(ENGINE_VARIABLE, "numba")
    assert cache_engine(1, 1) == "numba"
    monkeypatch.setenv(ENGINE_VARIABLE, "numpy")
    assert cache_engine(2**30, 1) == "numpy"
    monkeypatch.setattr(cache.cache_jit, "available", lambda: False)
    monkeypatch.delenv(ENGINE_VARIABLE)
    assert cache_engine(2**30, 1) == "numpy"
    monkeypatch.setenv(ENGINE_VARIABLE, "numba")
    with pytest.raises(PatternError, match=r"SECTORVIZ_CACHE_ENGINE: numba is asked for but "
                                           r"does not import; .*sectorviz\[fast\]"):
        cache_engine(1, 1)
    monkeypatch.setenv(ENGINE_VARIABLE, "fast")
    with pytest.raises(PatternError, match="SECTORVIZ_CACHE_ENGINE: expected numpy or numba, "
                                           "got 'fast'"):
        cache_engine(1, 1)
