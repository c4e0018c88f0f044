"""Every loop of the PTX engine counts its steps against the work budget: kernels that would
run for ever (or for 2^62 trips) stop at a small budget on the lane path and in closed form,
with an error at their line (benchmarks/bench_budget.py times how soon)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ptx_helpers import analyze_compiled, inline_pattern, needs_nvcc

from sectorviz.engine.ptx.kernel import LANE_PATH
from sectorviz.model.budget import Budget, work_budget
from sectorviz.model.errors import PatternError

HEAD = ("__global__ void k(float* a, long long n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n")
ENDLESS = {  # name -> (body from line 3, the line the refusal names)
    "while (true) with a store": ("  for (int k = 0; ; k++) a[(i * 7 + k) & 1023] = k;",
                                  3),
    "2^62 trips to a parameter": ("  for (long long k = 0; k < n; k++) a[(i + k) & 1023] = 0;",
                                  3),
    "a grid-stride loop to 2^62": (
        "  for (long long j = i; j < n; j += blockDim.x * gridDim.x) a[j & 1023] = 0;", 3),
    "one spinning lane": ("  if (threadIdx.x == 0) {\n    int s = 0;\n    while (true) "
                          "{ s++; a[s & 1023] = s; }\n  }\n  a[i] = 0;", 5),
    "#pragma unroll 1000000000": ("  #pragma unroll 1000000000\n  for (int k = 0; k < "
                                  "1000000000; k++) a[(i + k) & 1023] = 0;", 4),
}


@needs_nvcc
@pytest.mark.parametrize("path", ["closed forms", "lane path"])
@pytest.mark.parametrize("name", list(ENDLESS))
def test_an_endless_kernel_stops_at_the_budget_naming_its_line(tmp_path, monkeypatch, name,
                                                                path):
    body, line = ENDLESS[name]
    monkeypatch.setenv(LANE_PATH, "1" if path == "lane path" else "0")
    pattern, compiled = inline_pattern(tmp_path, HEAD + body + "\n}\n", params={"n": 2**62})
    budget = Budget(work=200_000)
    with work_budget(budget), pytest.raises(PatternError, match="passes the work budget") as err:
        analyze_compiled(pattern, compiled)
    assert err.value.place == f"line {line}"
    assert budget.work < budget.spent < budget.work + 100_000  # stopped at the step past it


LOOP = HEAD + "  for (long long k = 0; k < n; k += s) a[(i + k) & 1023] = 0;\n}\n"


@needs_nvcc
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(trips=st.one_of(st.integers(0, 64), st.integers(0, 2**62)),
       stride=st.one_of(st.just(1), st.integers(1, 2**20)), lane_path=st.booleans())
def test_any_trip_count_ends_within_the_budget(tmp_path, monkeypatch, trips, stride,
                                               lane_path):
    """Issue 28, item 7 (the executor's limits, fuzzed): whatever the loop's bound and step,
    a run ends counted within the budget or refused at the loop's line just past it."""
    monkeypatch.setenv(LANE_PATH, "1" if lane_path else "0")
    pattern, compiled = inline_pattern(tmp_path, LOOP.replace("long long n)", "long long n, "
                                                              "long long s)"),
                                       params={"n": trips, "s": stride})
    budget = Budget(work=200_000)
    try:
        with work_budget(budget):
            analyze_compiled(pattern, compiled)
    except PatternError as err:
        assert "passes the work budget" in str(err) and err.place == "line 3"
        assert budget.work < budget.spent < budget.work + 100_000
    else:
        assert budget.spent <= budget.work
