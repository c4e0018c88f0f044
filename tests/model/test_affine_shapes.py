"""Review: the closed forms give exactly what the lane path gives, on more shapes: 3-D blocks,
guards with && and let names, negative coefficients, `<<`, `at` with ld, other sector sizes,
and closed forms mixed with lane-path accesses (including which error is reported)."""

from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import lane_path_only

from sectorviz.model import PatternError, analyze, pattern_from_dict
from sectorviz.model.frontend import kernel_for

VARS = ["threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x", "blockIdx.y", "blockIdx.z",
        "i", "j"]
FORMS = ["{c} * {v}", "{v} * {c}", "({v} << {s})", "-{v}", "{v}", "({v} - {c}) * 2"]
term = st.builds(lambda form, v, c, s: form.format(v=v, c=c, s=s), st.sampled_from(FORMS),
                 st.sampled_from(VARS), st.integers(-5, 40), st.integers(0, 5))
comparison = st.sampled_from(["<", "<=", ">", ">="])


def outcome(fn, pattern):
    try:
        a = fn(pattern, per_warp=True)
    except PatternError as err:
        return str(err)
    return a.instructions, a.totals, a.per_warp_sectors.tolist(), a.per_warp_requests.tolist()


@settings(max_examples=60, deadline=None)
@given(bx=st.sampled_from([32, 64, 96]), by=st.integers(1, 3), bz=st.integers(1, 2),
       grid=st.tuples(st.integers(1, 3), st.integers(1, 2), st.integers(1, 2)),
       terms=st.lists(term, min_size=1, max_size=4), row=term, col=term, n=st.integers(0, 500),
       op=comparison, limit=st.integers(-2, 6), guard=st.integers(0, 5),
       dtype=st.sampled_from(["uint8", "int16", "float32", "float2", "float4", {"bytes": 12},
                              {"bytes": 3}, {"bytes": 40}]),
       sb=st.sampled_from([16, 32, 64, 128]), offset=st.integers(0, 40),
       layout=st.sampled_from(["row-major", "col-major"]), pad=st.integers(0, 33),
       access_guard=st.sampled_from(["i < n", "threadIdx.x >= 7", "j < 2 && i > 3", "ok"]),
       with_loop=st.booleans())
def test_closed_forms_match_lane_path(bx, by, bz, grid, terms, row, col, n, op, limit, guard,
                                      dtype, sb, offset, layout, pad, access_guard, with_loop):
    guards = [f"i {op} n", f"i {op} n && j < {limit}", "ok", f"ok && threadIdx.x {op} {limit * 20}",
              "1", f"n - i > {limit}"]
    accesses = [
        {"name": "a", "op": "load", "array": "x", "index": "base + " + " + ".join(terms)},
        {"name": "b", "op": "store", "array": "m", "at": [f"100 + {row}", f"100 + {col}"],
         "guard": access_guard}]
    if with_loop:  # a lane-path access between closed forms
        accesses.insert(1, {"name": "loop", "op": "load", "array": "x",
                            "index": f"base + k + {terms[0]}",
                            "loops": [{"var": "k", "start": 0, "stop": 2}]})
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "sector_bytes": sb, "params": {"n": n, "base": 3000},
        "launch": {"grid": list(grid), "block": [bx, by if bx * by * bz <= 1024 else 1, bz]},
        "arrays": {"pad": {"dtype": "uint8", "length": 1 + pad},
                   "x": {"dtype": dtype, "length": 6000, "offset_bytes": offset},
                   "m": {"dtype": dtype, "shape": [300, 200], "layout": layout,
                         "ld": (200 if layout == "row-major" else 300) + pad}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x",
                "j": "threadIdx.y + blockDim.y * blockIdx.y", "ok": f"i {op} n && j >= 0"},
        "guard": guards[guard], "accesses": accesses})
    assert len(kernel_for(p).closed_forms) == 2
    assert outcome(analyze, p) == outcome(lane_path_only, p)
