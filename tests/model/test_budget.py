"""The work budget: units charged as a run goes, work refused before it starts where it can be
sized, the memory a run keeps capped before it is allocated, and --budget to raise the limit."""

from __future__ import annotations

import json
import tracemalloc

import pytest

from sectorviz.cli import main
from sectorviz.model import PatternError, analyze, pattern_from_dict, warp_detail
from sectorviz.model.budget import (
    BATCH_UNITS,
    DEFAULT_WORK,
    WARP_UNITS,
    Budget,
    charge,
    current,
    parse_units,
    reserve,
    set_default_work,
    work_budget,
)
from sectorviz.model.frontend import kernel_for
from sectorviz.model.kernel import VALUE_CHUNK

F = "sectorviz.pattern/1"


def pattern(accesses, grid=(1,), block=(32,), arrays=None, **extra):
    return pattern_from_dict({
        "format": F, "launch": {"grid": list(grid), "block": list(block)},
        "arrays": arrays or {"x": {"dtype": "float32", "length": 1024}},
        "accesses": accesses, **extra})


def never(done, total):
    raise AssertionError(f"a chunk ran ({done} of {total} warps)")


# ------------------------------------------------------------ the budget itself


def test_charges_add_up_to_the_limit_and_say_where_it_passed():
    b = Budget(work=100)
    b.charge(60)
    b.charge(40, "this access", "accesses[0]")
    with pytest.raises(PatternError) as info:
        b.charge(1, "this loop", "line 3", 9)
    assert str(info.value) == (
        "line 3, column 9: this loop passes the work budget of 100 units (lane-executions and "
        "PTX steps); raise it with --budget N (in the app: Settings > Work Budget)")
    assert b.spent == 101


def test_check_refuses_before_spending_and_names_the_rate_so_far():
    b = Budget(work=1000, spent=400, progress=(2, 8))
    b.check(600, "this loop")
    with pytest.raises(PatternError, match=r"^budget: this loop asks for 601 units of work "
                                           r"\(lane-executions and PTX steps\), over the "
                                           r"budget of 600 left after 2 of 8 warps; all of them "
                                           r"would take about 1,600; raise it with --budget N"):
        b.check(601, "this loop")
    assert b.spent == 400


def test_reservations_of_a_run_add_up_to_the_memory_cap():
    b = Budget(memory=2**30)
    b.reserve(2**29, "values")
    with pytest.raises(PatternError, match=r"arrays.a.values: values needs 0.75 GiB, with 0.50 "
                                           r"GiB already held past the memory cap of 1.00 GiB"):
        b.reserve(3 * 2**28, "values", "arrays.a.values")
    b.reserve(2**29, "bitmaps")
    assert b.held == 2**30


def test_work_budget_is_shared_by_nested_runs_and_fresh_without_one():
    assert current() is not current()  # no budget open: each caller gets a fresh default
    outer = Budget(work=10)
    with work_budget(outer):
        with work_budget() as inner:
            charge(4)
        assert inner is outer and current() is outer
        with work_budget(Budget(work=5)) as own:
            charge(5)
        assert own.spent == 5 and outer.spent == 4
        with pytest.raises(PatternError):
            charge(7)
        reserve(2**20)
        assert outer.held == 2**20


def test_the_default_limit_can_be_changed_for_the_app():
    assert Budget().work == DEFAULT_WORK
    try:
        set_default_work(12345)
        assert Budget().work == 12345 and Budget(7).work == 7
    finally:
        set_default_work(DEFAULT_WORK)
    with pytest.raises(ValueError):
        set_default_work(0)


@pytest.mark.parametrize("text, units", [("268435456", 2**28), ("2^30", 2**30), ("1e9", 10**9),
                                         ("4_000_000", 4 * 10**6), (" 12 ", 12)])
def test_budget_text(text, units):
    assert parse_units(text) == units


@pytest.mark.parametrize("text", ["0", "-5", "1.5", "x", "2^x", "nan", "inf", "1e400", "",
                                  "2^1000"])
def test_bad_budget_text(text):
    with pytest.raises(ValueError):
        parse_units(text)


# ------------------------------------------------------------ pattern runs


def test_a_gather_over_2_34_threads_is_refused_before_any_chunk_runs():
    p = pattern([{"op": "load", "array": "x", "index": "idx[threadIdx.x]"}],
                grid=(2**24,), block=(1024,),
                arrays={"x": {"dtype": "float32", "length": 1024},
                        "idx": {"dtype": "int32", "length": 1024, "values": {"kind": "arange"}}})
    with pytest.raises(PatternError, match="^launch: the launch of 17,179,869,184 threads asks "
                                           "for 17,179,871,232 units of work"):
        analyze(p, progress=never)


@pytest.mark.parametrize("loops, executions", [
    ([{"var": "i", "start": 0, "stop": 1024}, {"var": "j", "start": 0, "stop": 1024}], 2**20),
    ([{"var": f"k{d}", "start": 0, "stop": 4} for d in range(16)], 4**16)])
def test_nested_loops_are_sized_together_before_the_run(loops, executions):
    p = pattern([{"op": "load", "array": "x", "index": "threadIdx.x", "loops": loops}])
    units = executions * (32 + BATCH_UNITS)
    with pytest.raises(PatternError, match=rf"^launch: the launch of 32 threads x \({executions:,}"
                                           rf" executions of accesses\[0\]\) asks for {units:,} "):
        analyze(p, progress=never)


@pytest.mark.parametrize("start, stop, step", [(0, 2**63 - 1, 2**62), (-1, -2**63, -2**62),
                                               (5, 2**63 - 1, 2**63 - 1)])
def test_a_loop_whose_variable_would_wrap_stops_there(start, stop, step):
    """range() semantics: a lane's loop ends where its variable would pass 64 bits, over a
    million threads, without running to any cap."""
    p = pattern([{"op": "load", "array": "x", "index": "threadIdx.x",
                  "loops": [{"var": "k", "start": start, "stop": stop, "step": step}]}],
                grid=(4096,), block=(256,))
    trips = len(range(start, stop, step))
    assert trips in (1, 2)
    assert analyze(p).instructions[0].requests == 2**15 * trips
    assert [e.iteration["k"][0] for e in warp_detail(p, 7).executions[0]] == \
        list(range(start, stop, step))


def test_work_past_the_budget_mid_run_says_what_the_whole_run_would_take():
    """Loop bounds that vary per lane cannot be sized up front: each chunk's loop is sized
    where it starts, and the message extrapolates from the warps done."""
    p = pattern([{"op": "load", "array": "x", "index": "threadIdx.x + k",
                  "loops": [{"var": "k", "start": 0, "stop": "threadIdx.x % 2 + 1"}]}],
                grid=(2**14,), block=(256,))
    per_chunk = 2 * (2**18 + BATCH_UNITS)
    with pytest.raises(PatternError) as info:
        analyze(p, budget=Budget(work=6 * 10**6))
    assert str(info.value) == (
        f"accesses[0].loops[0]: this loop of 2 iterations over 262,144 lanes asks for "
        f"{per_chunk:,} units of work (lane-executions and PTX steps), over the budget "
        f"of {6 * 10**6 - 11 * per_chunk:,} left after 90,112 of 131,072 warps; all of them "
        f"would take about {11 * per_chunk * 131072 // 90112:,}; raise it with --budget N "
        "(in the app: Settings > Work Budget)")


def test_closed_forms_cost_what_they_compute():
    """A chunk counted in closed form (a RepeatedBatch, a row per warp here: the index does
    not follow the global thread index) costs WARP_UNITS per warp, not the lanes it stands
    for."""
    p = pattern([{"op": "load", "array": "x", "index": "threadIdx.x"},
                 {"op": "store", "array": "x", "index": "threadIdx.x"}], grid=(64,))
    assert len(kernel_for(p).closed_forms) == 2
    b = Budget()
    analyze(p, budget=b)
    assert kernel_for(p).warps == 64
    assert b.spent == 2 * 64 * WARP_UNITS


def test_a_launch_of_2_33_threads_in_closed_form_fits_the_default_budget():
    p = pattern([{"op": "load", "array": "x", "index": "i"}], grid=(2**23,), block=(1024,),
                arrays={"x": {"dtype": "float32", "length": 2**33}},
                let={"i": "blockIdx.x * blockDim.x + threadIdx.x"})
    b = Budget()
    assert analyze(p, budget=b).totals.sectors == 2**33 // 8 and b.spent < 10**7


def test_lane_path_charges_lanes_and_the_fixed_cost_of_each_execution():
    p = pattern([{"op": "load", "array": "x", "index": "(threadIdx.x * 7 + k) % 1024",
                  "loops": [{"var": "k", "start": 0, "stop": 3}]}], grid=(2,), block=(48,))
    b = Budget()
    analyze(p, budget=b)
    assert b.spent == 3 * (4 * 32 + BATCH_UNITS)  # 2 blocks of 2 warps (one partial) per chunk


# ------------------------------------------------------------ memory


def test_values_expr_is_evaluated_in_chunks():
    """values.expr at n elements keeps the n-element result and a few chunk-sized
    temporaries, not n-element ones."""
    n = 2**24
    p = pattern([{"op": "load", "array": "x", "index": "idx[threadIdx.x] % 1024"}],
                arrays={"x": {"dtype": "float32", "length": 1024},
                        "idx": {"dtype": "int32", "length": n,
                                "values": {"kind": "expr", "expr": "(i * 7 + i * i / 3) % 1000"}}})
    kernel = kernel_for(p)
    tracemalloc.start()
    try:
        values = kernel.values["idx"].whole()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < n * 8 + 8 * VALUE_CHUNK * 8
    assert values[:4].tolist() == [0, 7, 15, 24]
    assert values[-1] == ((n - 1) * 7 + (n - 1) ** 2 // 3) % 1000


def test_readable_values_past_the_memory_cap_are_refused_before_allocating():
    n = 2**27
    p = pattern([{"op": "load", "array": "x", "index": "idx[threadIdx.x] % 1024"}],
                arrays={"x": {"dtype": "float32", "length": 1024},
                        "idx": {"dtype": "int32", "length": n,
                                "values": {"kind": "expr", "expr": "i % 3"}}})
    with pytest.raises(PatternError, match=r"^arrays.idx.values: 134,217,728 readable values "
                                           r"needs 1.00 GiB, with 0.0\d GiB already held past the "
                                           r"memory cap of 0.50 GiB"):
        analyze(p, budget=Budget(memory=2**29))


# ------------------------------------------------------------ the command line


def write(tmp_path, doc):
    path = tmp_path / "p.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


LOOPED = {"format": F, "launch": {"grid": [1], "block": [32]},
          "arrays": {"x": {"dtype": "float32", "length": 1024}},
          "accesses": [{"op": "load", "array": "x", "index": "threadIdx.x",
                        "loops": [{"var": "k", "start": 0, "stop": 1000}]}]}


@pytest.mark.parametrize("command", [["report"], ["report", "--warp", "0"],
                                     ["export", "-o", "{out}/s.csv"],
                                     ["export", "-o", "{out}/g.svg", "--kind", "warp"]])
def test_budget_flag(tmp_path, capsys, command):
    path = write(tmp_path, LOOPED)
    args = [a.format(out=tmp_path) for a in command]
    assert main([args[0], str(path), *args[1:], "--budget", "1e6"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"{path}: ")
    assert "asks for 2,080,000 units of work" in err and "raise it with --budget N" in err
    assert main([args[0], str(path), *args[1:], "--budget", "2^22"]) == 0


@pytest.mark.parametrize("text", ["0", "lots", "1.5"])
def test_bad_budget_flag_is_one_line(tmp_path, capsys, text):
    assert main(["report", str(write(tmp_path, LOOPED)), "--budget", text]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--budget" in err
