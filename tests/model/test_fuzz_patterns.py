"""Fuzzing pattern files (issue 15, item 7): mutations of the bundled examples (keys deleted,
duplicated, renamed or added; values of the wrong type, huge or negative numbers, long
literals, NaN, weird strings, deep nesting, random expression text), and damaged `.npy` values
files, must make `report` exit 0 with its sheet, or exit 2 with exactly one stderr line naming
the file: never a traceback, never an internal error, never a hang.

This is the short run (about 100 cases, in-process, plus a few in a subprocess under a
timeout and a memory limit); benchmarks/bench_fuzz.py runs the same cases for minutes.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import (
    CASE_SECONDS,
    Outcome,
    broken_promise,
    example_folder,
    run_report,
    run_report_subprocess,
)

from sectorviz.paths import examples_dir

REPORT_ARGS = ([], ["--json"], ["--warp", "1"])


# ---------------------------------------------------------------- building cases


@dataclass(frozen=True)
class Raw:
    """JSON text written as is: numbers Python would not write (NaN, 4,301 digits) and
    nesting deeper than a recursive writer can go."""

    text: str


@dataclass(frozen=True)
class Pairs:
    """A JSON object written from (key, value) pairs, so a key can appear twice."""

    pairs: tuple


def dumps(value) -> str:
    """A fuzzed document -> JSON text (Raw and Pairs written as they are)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, (dict, Pairs)):
        pairs = value.pairs if isinstance(value, Pairs) else value.items()
        return "{" + ", ".join(f"{json.dumps(k)}: {dumps(v)}" for k, v in pairs) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    return json.dumps(value)


def example_docs() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(examples_dir().glob("*.sectorviz.json"))]


NAMES = ["i", "n", "k", "r", "row", "col", "threadIdx.x", "blockIdx.y", "blockDim.x",
         "gridDim.z", "warpSize", "idx", "x", "a"]
TOKENS = NAMES + ["idx[", "]", "(", ")", "+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^",
                  "~", "!", "&&", "||", "<", ">=", "==", "!=", "?", ":", ",", "min(", "max(",
                  "abs(", "0", "1", "32", "-1", "0x7fffffffffffffff", "18446744073709551615",
                  "9223372036854775808", "1" * 30, "012", "1u", "$", "'", "\\"]
WEIRD_TEXT = ["", " ", "\x00", "\ud800", "a\udfffb", "\u202e", "\n", "\t\r", "🙂", "a" * 10000,
              "../../../etc/passwd", "/dev/zero", "/dev/urandom", ".", "..", "NaN", "-", "0",
              "float32", "bytes:4", "row-major", "load", "store", "sectorviz.pattern/1",
              "file", "expr", "arange", "__import__('os')", "${HOME}", "%s%n", "<svg>", "=1+1"]
RAW_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1E400", "1" * 41,
               "9" * 4301, "-" + "9" * 5000, "0.5", "-0", "1e2"]
NUMBERS = [0, -1, 1, 2, 31, 32, 33, 64, 1023, 1024, 1025, 65535, 65536, 2**31 - 1, 2**31,
           2**32, 2**34, 2**40, 2**62, 2**63 - 1, -2**63, 2**63, 2**64, -2**64, 10**30, 1.5,
           -0.0, 1e308]


def expressions() -> st.SearchStrategy[str]:
    tokens = st.lists(st.sampled_from(TOKENS), min_size=1, max_size=30).map(" ".join)
    chars = st.text(alphabet="0123456789+-*/%()<>=!&|^~?:,[] ixnk.", max_size=60)
    long = st.tuples(st.sampled_from(["1+", "(", "-", "idx[", "min(1,"]),
                     st.integers(1, 40000)).map(lambda t: t[0] * t[1] + "1")
    return st.one_of(tokens, chars, long)


def _nested(kind: str, depth: int) -> Raw:
    """Lists or objects nested `depth` deep, around a 0."""
    open_, close = ("[", "]") if kind == "list" else ('{"a": ', "}")
    return Raw(open_ * depth + "0" + close * depth)


def values() -> st.SearchStrategy:
    nested = st.builds(_nested, st.sampled_from(["list", "object"]), st.integers(1, 5000))
    return st.one_of(
        st.sampled_from(NUMBERS), st.integers(), st.sampled_from(RAW_NUMBERS).map(Raw),
        st.sampled_from(WEIRD_TEXT), st.text(max_size=20), expressions(), nested,
        st.sampled_from([None, True, False, [], {}, [1], [1, 2, 3, 4], {"kind": "arange"},
                         {"kind": "file", "path": "x.npy"}, {"bytes": 3}]))


def _paths(value, path=()):
    """Every (path, value) of a document, parents first (Raw and Pairs are leaves)."""
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, path + (key,))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _paths(child, path + (i,))


def _mutate(doc, draw):
    """One mutation at a random place of `doc` -> the new document."""
    path, node = draw(st.sampled_from(list(_paths(doc))))
    kind = draw(st.sampled_from(["replace", "replace", "expression", "delete", "duplicate",
                                 "rename", "insert"]))
    if not path:
        return draw(values()) if kind == "replace" else doc
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if kind == "replace":
        parent[last] = draw(values())
    elif kind == "expression":
        parent[last] = draw(expressions())
    elif kind == "delete":
        del parent[last]
    elif kind == "insert" and isinstance(node, (dict, list)):
        if isinstance(node, dict):
            node[draw(st.one_of(st.sampled_from(sorted(node) or ["k"]), st.text(max_size=8)))] = \
                draw(values())
        else:
            node.insert(draw(st.integers(0, len(node))), draw(values()))
    elif kind in ("duplicate", "rename") and isinstance(parent, dict):
        pairs = list(parent.items())
        at = list(parent).index(last)
        if kind == "duplicate":
            pairs.insert(at + draw(st.integers(0, 1)), (last, draw(values())))
        else:
            pairs[at] = (draw(st.one_of(st.text(max_size=12), st.sampled_from(WEIRD_TEXT))),
                         node)
        replacement = Pairs(tuple(pairs))
        if len(path) == 1:
            return replacement
        grand = doc
        for key in path[:-2]:
            grand = grand[key]
        grand[path[-2]] = replacement
    return doc


@st.composite
def pattern_texts(draw) -> str:
    """A bundled example with one to three mutations -> its JSON text."""
    doc = copy.deepcopy(draw(st.sampled_from(EXAMPLE_DOCS)))
    for _ in range(draw(st.integers(1, 3))):
        if isinstance(doc, (Raw, Pairs)) or not isinstance(doc, (dict, list)):
            break
        doc = _mutate(doc, draw)
    return dumps(doc)


EXAMPLE_DOCS = example_docs()


# ---------------------------------------------------------------- .npy values files

def gather(npy_name: str) -> str:
    """A pattern whose 64 index values come from the file `npy_name` (a name of its own for
    each file: patterns are cached by their text, so the same text would not read it again)."""
    return json.dumps({
        "format": "sectorviz.pattern/1", "launch": {"grid": [2], "block": [32]},
        "arrays": {"idx": {"dtype": "int32", "length": 64,
                           "values": {"kind": "file", "path": npy_name}},
                   "x": {"dtype": "float32", "length": 1 << 20}},
        "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
        "accesses": [{"name": "gather", "op": "load", "array": "x",
                      "index": "idx[i] % 1048576"}]})


NPY_HEADERS = [
    "{'descr': '<i8', 'fortran_order': False, 'shape': (100000000000000000000,), }",
    "{'descr': '<i8', 'fortran_order': False, 'shape': (-1,), }",
    "{'descr': '<i8', 'fortran_order': True, 'shape': (64, 1), }",
    "{'descr': '|O', 'fortran_order': False, 'shape': (64,), }",
    "{'descr': [('a', '<i4', (1000000000,))], 'fortran_order': False, 'shape': (64,), }",
    "{'descr': '<i8', 'fortran_order': False, 'shape': (" + "9" * 5000 + ",), }",
    "{'descr': '<i8', 'fortran_order': False, 'shape': " + "(" * 500 + ")" * 500 + ", }",
    "__import__('os').system('touch pwned')", "{}", "", "{'descr': '<i8'}",
]


@st.composite
def npy_files(draw) -> bytes:
    """A .npy file of 0 to 200 values of some dtype, then maybe damaged: cut short, a byte
    changed, its header replaced, its header length or version changed."""
    dtype = draw(st.sampled_from(["<i8", ">i4", "<u2", "|i1", "<u8", "<f8", "|b1", "|O"]))
    stream = io.BytesIO()
    np.save(stream, np.arange(draw(st.integers(0, 200))).astype(dtype), allow_pickle=True)
    data = bytearray(stream.getvalue())
    kind = draw(st.sampled_from(["as is", "cut", "byte", "header", "length", "version"]))
    if kind == "cut":
        del data[draw(st.integers(0, len(data))):]
    elif kind == "byte":
        data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    elif kind == "header":
        header = draw(st.one_of(st.sampled_from(NPY_HEADERS), st.text(max_size=80)))
        raw = header.encode("latin1", "replace")
        data = bytearray(data[:8] + struct.pack("<H", len(raw)) + raw + data[128:])
    elif kind == "length":
        data[8:10] = struct.pack("<H", draw(st.integers(0, 65535)))
    else:
        data[6:8] = bytes([draw(st.integers(0, 4)), draw(st.integers(0, 1))])
    return bytes(data)


def npy_name(data: bytes) -> str:
    return f"fuzzed-{hashlib.sha256(data).hexdigest()[:16]}.npy"


def run_npy_case(data: bytes, folder: Path, args: list[str], limit_s: float) -> Outcome:
    """`report` on a gather whose index values come from `data`, saved in `folder`."""
    path = folder / npy_name(data)
    path.write_bytes(data)
    try:
        return run_report(gather(path.name), folder, args, limit_s)
    finally:
        path.unlink()


# ---------------------------------------------------------------- the short run


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return example_folder(tmp_path_factory.mktemp("fuzz"))


@settings(max_examples=100, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(text=pattern_texts(), args=st.sampled_from(REPORT_ARGS))
def test_report_keeps_its_promise_on_fuzzed_patterns(folder, text, args):
    outcome = run_report(text, folder, args, CASE_SECONDS)
    assert broken_promise(outcome, folder) is None, text[:2000]


@settings(max_examples=4, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(text=pattern_texts())
def test_report_keeps_its_promise_in_a_subprocess(folder, text):
    outcome = run_report_subprocess(text, folder, [], CASE_SECONDS)
    assert broken_promise(outcome, folder) is None, text[:2000]


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=npy_files())
def test_report_keeps_its_promise_on_fuzzed_npy_files(folder, data):
    outcome = run_npy_case(data, folder, [], CASE_SECONDS)
    assert broken_promise(outcome, folder) is None, data[:300]
    assert not (folder / "pwned").exists()


@pytest.mark.parametrize("text", [
    "[" * 100000, '{"format": ' * 50000, "\ufeff{}", '{"a": "\\ud800"}', "0" * 10**6,
    "{" + ", ".join(f'"k{i}": {i}' for i in range(100000)) + "}",
])
def test_hand_picked_texts(folder, text):
    assert broken_promise(run_report(text, folder, [], CASE_SECONDS), folder) is None


def test_the_checker_catches_broken_promises(folder):
    path = folder / "fuzzed.sectorviz.json"
    assert broken_promise(Outcome(1, "", "Traceback (most recent call last):\n  x\nE: y\n", 0),
                          folder) == "traceback: E: y"
    assert broken_promise(Outcome(2, "", f"{path}: a\nb\n", 0), folder).startswith("2 stderr")
    assert broken_promise(Outcome(2, "", f"{path}: internal error: KeyError; please report\n",
                                  0), folder) == "internal error: KeyError; please report"
    assert broken_promise(Outcome(None, "", "", 61), folder) == "no answer after 61 s"
    assert broken_promise(Outcome(2, "", f"{path}: \n", 0), folder).startswith("empty")
    assert broken_promise(Outcome(2, "", f"{path}: place: message\n", 0), folder) is None
