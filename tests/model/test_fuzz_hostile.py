"""Fuzzing the surfaces of issue 22 (item 7): measured CSV cells, include paths, duplicate
JSON keys and drawing sizes. Each case ends in a value the model can use or in one
PatternError line; an include never reads outside the pattern's root."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sectorviz.export.formats import MAX_PIXELS, MAX_SIDE_PX, check_drawable
from sectorviz.host import preprocess as pre
from sectorviz.model import PatternError, pattern_from_text
from sectorviz.model.files import pattern_roots
from sectorviz.model.measured import read_ncu_csv
from sectorviz.scene.shapes import Scene

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
METRIC = "dram__bytes_read.sum"
CELLS = st.one_of(
    st.integers(-10**6, 10**12).map(str),
    st.integers(0, 10**12).map(lambda n: f"{n:,}"),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["NaN", "inf", "-inf", "1e400", "2,62,14,4", "1,0240", "n/a", "", " 5 ",
                     "0x10", "1_000", "１２", "1.5e3", "-0"]),
    st.text(max_size=12))


@FUZZ
@given(cell=CELLS, grid=st.one_of(CELLS, st.just("(4096, 1, 1)")))
def test_measured_cells_are_usable_numbers_or_one_line(tmp_path, cell, grid):
    path = tmp_path / "m.csv"
    quoted = [c.replace('"', '""') for c in (cell, grid)]
    path.write_text('"Kernel Name","Grid Size","dram__bytes_read.sum"\n"","","byte"\n'
                    f'"k()","{quoted[1]}","{quoted[0]}"\n', encoding="utf-8")
    try:
        (launch,) = read_ncu_csv(path)
    except PatternError as err:
        assert "\n" not in str(err)
        return
    value = launch.values.get(METRIC)
    assert value is None or (math.isfinite(value) and value >= 0)
    assert launch.grid is None or all(isinstance(d, int) and d >= 0 for d in launch.grid)


SEGMENTS = st.sampled_from(["..", ".", "inc", "outside", "secret.h", "h.h", "/etc", "passwd",
                            "/", "inc/h.h", "../outside/secret.h"])


@FUZZ
@given(parts=st.lists(SEGMENTS, min_size=1, max_size=6), probe=st.booleans())
def test_include_paths_never_leave_the_root(tmp_path, monkeypatch, parts, probe):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "inc").mkdir(parents=True, exist_ok=True)
    outside.mkdir(exist_ok=True)
    (outside / "secret.h").write_text("#define SECRET 1\n")
    (root / "inc" / "h.h").write_text("#define H 1\n")
    (root / "h.h").write_text("#define H 1\n")
    name = "/".join(parts).replace("//", "/")
    read = []
    real_read = pre.read_text
    monkeypatch.setattr(pre, "read_text", lambda path, *a: read.append(path) or
                        real_read(path, *a))
    text = (f'#if __has_include("{name}")\n#define FOUND 1\n#endif\n' if probe
            else f'#include "{name}"\n')
    roots = pattern_roots(root)
    try:
        source = pre.preprocess(text, None, roots)
    except PatternError as err:
        assert "\n" not in str(err) and "SECRET" not in str(err)
        return
    assert all(roots.allows(p) for p in read)
    if probe and "FOUND 1" in source.text:
        assert roots.allows(root / name)


KEYS = st.sampled_from(["a", "b", "n", "format", "grid"])
TREES = st.recursive(st.integers(0, 9), lambda inner: st.lists(
    st.tuples(KEYS, inner), max_size=4), max_leaves=12)


def _text(tree) -> str:
    """A tree of (key, value) pair lists -> JSON text, keys written as given (twice too)."""
    if isinstance(tree, list):
        return "{" + ", ".join(f'"{k}": {_text(v)}' for k, v in tree) + "}"
    return str(tree)


def _first_duplicate(tree):
    """The first key (in reading order) given twice in one object of `tree`, or None."""
    if not isinstance(tree, list):
        return None
    seen = set()
    for key, value in tree:  # a key is read before its value
        if key in seen:
            return key
        seen.add(key)
        inner = _first_duplicate(value)
        if inner is not None:
            return inner
    return None


@FUZZ
@given(tree=TREES.filter(lambda t: isinstance(t, list)))
def test_duplicate_keys_are_found_at_any_depth(tree):
    text = _text(tree)
    expected = _first_duplicate(tree)
    try:
        pattern_from_text(text)
    except PatternError as err:
        twice = "appears twice in one object" in str(err)
        assert twice == (expected is not None), (text, str(err))
        if twice:
            assert f"the key {expected!r}" in str(err) and str(err).startswith("line 1, ")
        return
    pytest.fail(f"{text} made a pattern")  # no fuzzed tree is a whole pattern


@FUZZ
@given(w=st.floats(0, 10**6), h=st.floats(0, 10**6), scale=st.sampled_from([1, 2, 4]))
def test_drawings_within_the_bounds_pass_and_others_are_refused(w, h, scale):
    px, py = math.ceil(w * scale), math.ceil(h * scale)
    fits = max(px, py) <= MAX_SIDE_PX and px * py <= MAX_PIXELS
    try:
        check_drawable(Scene(w, h, "#fff", "sans-serif", "t"), scale)
    except PatternError as err:
        assert not fits and str(err).startswith("diagram: it would be ")
        return
    assert fits
    json.dumps([px, py])
