"""model.json_text: a pattern's canonical source is exactly json.dumps(doc, indent=2), by the
fast path for what json.loads makes and by json.dumps itself for anything else."""

import gc
import json

from hypothesis import given
from hypothesis import strategies as st

from sectorviz.model import json_text, pattern_from_text
from sectorviz.model.json_text import indented_json

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(), inner, max_size=4), max_leaves=30)


@given(VALUES)
def test_the_fast_path_writes_what_json_dumps_writes(doc):
    assert indented_json(doc) == json.dumps(doc, indent=2)


def test_the_fast_path_ran(monkeypatch):
    """The documents above go the fast way: json.dumps is not called for them."""
    monkeypatch.setattr(json_text.json, "dumps", None)
    assert indented_json({"a": [1, "b\u202e", None, True], "c": {}}) == (
        '{\n  "a": [\n    1,\n    "b\\u202e",\n    null,\n    true\n  ],\n  "c": {}\n}')


def test_anything_else_goes_to_json_dumps():
    for doc in ({1: "a"}, [1.5, float("nan")], {"a": (1, 2)}):
        assert indented_json(doc) == json.dumps(doc, indent=2)
    ring: list = []
    ring.append(ring)
    try:
        indented_json(ring)
    except ValueError as err:
        assert "Circular reference" in str(err)


def test_loading_leaves_the_cycle_collector_as_it_was():
    text = json.dumps({"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
                       "arrays": {"a": {"dtype": "float32", "length": 32}},
                       "accesses": [{"op": "load", "array": "a", "index": "threadIdx.x"}]})
    assert gc.isenabled()
    pattern_from_text(text)
    assert gc.isenabled()
    gc.disable()
    try:
        pattern_from_text(text)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_loads_in_several_threads_leave_the_collector_on():
    from concurrent.futures import ThreadPoolExecutor
    text = json.dumps({"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
                       "arrays": {"a": {"dtype": "float32", "length": 32}},
                       "accesses": [{"name": f"l{i}", "op": "load", "array": "a",
                                     "index": f"threadIdx.x + {i}"}
                                    for i in range(200)]})
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: pattern_from_text(text), range(16)))
    assert gc.isenabled()
