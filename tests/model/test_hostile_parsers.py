"""Bounded parsers (issue 15, item 3) and the tracebacks it lists: long integer literals in
JSON and in expressions, NaN and Infinity, deep nesting, huge expressions, lone surrogates,
and a kernel that touches no global memory."""

import copy
import json
import re

import pytest

from sectorviz.cli import main
from sectorviz.model import pattern_from_text
from sectorviz.model.expr import MAX_CHARS, MAX_TOKENS, ExprError, parse

BASE = {
    "format": "sectorviz.pattern/1", "name": "base", "params": {"n": 64},
    "launch": {"grid": [2], "block": [32]},
    "arrays": {"x": {"dtype": "float32", "length": "n"},
               "idx": {"dtype": "int32", "length": "n", "values": {"kind": "arange"}}},
    "let": {"i": "blockIdx.x * blockDim.x + threadIdx.x"},
    "accesses": [{"name": "ld", "op": "load", "array": "x", "index": "idx[i]"}],
}


def report(capsys, tmp_path, text, *args):
    path = tmp_path / "p.sectorviz.json"
    path.write_text(text if isinstance(text, str) else json.dumps(text))
    code = main(["report", str(path), *args])
    out, err = capsys.readouterr()
    return code, out, err, path


def assert_one_line(code, out, err, path, expected):
    assert code == 2 and not out, err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err == f"{path}: {expected}\n"


def with_literal(where, literal):
    """BASE's JSON text with the raw JSON number `literal` at `where` (a key path)."""
    doc = copy.deepcopy(BASE)
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = "@@"
    return json.dumps(doc).replace('"@@"', literal)


# ---------------------------------------------------------------- JSON numbers


@pytest.mark.parametrize("where, place, digits", [
    (("params", "n"), "params.n", 4301),
    (("params", "n"), "params.n", 41),
    (("launch", "grid", 0), "launch.grid[0]", 10**6),
    (("arrays", "x", "length"), "arrays.x.length", 5000),
    (("arrays", "idx", "values"), None, 4301),
    (("sector_bytes",), "sector_bytes", 4301),
])
def test_long_json_integers_are_refused_by_place_before_converting(
        tmp_path, capsys, where, place, digits):
    code, out, err, path = report(capsys, tmp_path, with_literal(where, "7" * digits))
    if place is None:  # where an object is expected
        assert_one_line(code, out, err, path, "arrays.idx.values: expected an object with a "
                        "'kind' (arange, expr, constant, permutation, uniform, file)")
    else:
        assert_one_line(code, out, err, path, f"{place}: an integer of {digits:,} digits does "
                                              "not fit in a signed 64-bit integer")


def test_long_json_integers_where_text_is_expected(tmp_path, capsys):
    code, out, err, path = report(capsys, tmp_path, with_literal(("name",), "-" + "9" * 4400))
    assert_one_line(code, out, err, path, "name: expected text, got an integer of 4,401 digits")
    code, out, err, path = report(capsys, tmp_path, with_literal(("format",), "9" * 4400))
    assert_one_line(code, out, err, path, "format: expected 'sectorviz.pattern/1', got an "
                                          "integer of 4,400 digits")


def test_forty_digits_are_still_read_as_a_number(tmp_path, capsys):
    code, out, err, path = report(capsys, tmp_path, with_literal(("params", "n"), "9" * 40))
    assert_one_line(code, out, err, path, f"params.n: {'9' * 40} does not fit in a signed "
                                          "64-bit integer")
    code, out, err, path = report(capsys, tmp_path, with_literal(("params", "n"), "-" + "9" * 39))
    assert_one_line(code, out, err, path, f"params.n: -{'9' * 39} does not fit in a signed "
                                          "64-bit integer")


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(tmp_path, capsys, literal):
    code, out, err, path = report(capsys, tmp_path, with_literal(("params", "n"), literal))
    assert_one_line(code, out, err, path, f"{literal} is not a number sectorviz accepts")


def test_overflowing_floats_are_not_finite_numbers(tmp_path, capsys):
    """A param may be a float (a kernel's float argument), never an infinite one."""
    code, out, err, path = report(capsys, tmp_path, with_literal(("params", "n"), "1e999999"))
    assert_one_line(code, out, err, path, "params.n: inf is not a finite number")


@pytest.mark.parametrize("where", [("params", "n"), ("arrays", "x", "length"), ("let", "i")])
def test_deep_nesting_inside_a_value(tmp_path, capsys, where):
    code, out, err, path = report(capsys, tmp_path, with_literal(where, "[" * 50000 + "]" * 50000))
    assert_one_line(code, out, err, path, "invalid JSON, nested too deeply")


# ---------------------------------------------------------------- expressions


def test_a_14_megabyte_expression_is_refused_before_it_is_read():
    text = "0+" * 7 * 10**6 + "0"
    with pytest.raises(ExprError, match=f"14,000,001 characters long; at most {MAX_CHARS:,}"):
        parse(text)


def test_too_many_tokens():
    with pytest.raises(ExprError, match=f"more than {MAX_TOKENS:,} tokens") as info:
        parse("1 " * (MAX_TOKENS + 1))
    assert info.value.column == 2 * MAX_TOKENS + 1


@pytest.mark.parametrize("text, column", [
    ("1+" * 300 + "1", 2 * 200),  # the 200th '+' makes level 201
    ("1" + "*2+1" * 300, 4 * 199),  # 1*2 is two levels: the 199th + makes level 201
    ("a?" * 300 + "1" + ":1" * 300, None),  # nested to the right: recursion depth
    ("-" * 300 + "1", None),
])
def test_depth_is_checked_while_parsing(text, column):
    """The error comes where the tree passes the limit, not after building all of it."""
    with pytest.raises(ExprError, match="nested") as info:
        parse(text)
    if column is not None:
        assert info.value.column == column


def test_the_deepest_chain_allowed_still_parses():
    parse("1+" * 199 + "1")


@pytest.mark.parametrize("text, message", [
    ("1" * 21, "literal 111111111111111111111 does not fit in 64 bits"),
    ("1" * 4301, "literal 111111111111… (4301 digits) does not fit in 64 bits"),
    ("9" * 60000 + "u", "literal 999999999999… (60000 digits) does not fit in 64 bits"),
    ("0x1" + "0" * 16, "does not fit in 64 bits"),
    ("18446744073709551616", "does not fit in 64 bits"),
])
def test_literal_digits_are_counted_before_converting(text, message):
    with pytest.raises(ExprError, match=re.escape(message)):
        parse(text)


@pytest.mark.parametrize("text, value", [
    ("18446744073709551615", -1), ("0x" + "0" * 40 + "ff", 255), ("9223372036854775807", 2**63 - 1),
])
def test_literals_at_the_edge_still_parse(text, value):
    assert parse(text).value == value


def test_an_integer_too_large_to_print_is_refused():
    with pytest.raises(ExprError, match="integer does not fit in 64 bits"):
        parse(10**5000)


def test_a_long_literal_in_a_pattern_names_the_place(tmp_path, capsys):
    doc = copy.deepcopy(BASE)
    doc["accesses"][0]["index"] = "1" * 4301
    code, out, err, path = report(capsys, tmp_path, doc)
    assert_one_line(code, out, err, path, "accesses[0].index, column 1: literal 111111111111… "
                                          "(4301 digits) does not fit in 64 bits")


# ---------------------------------------------------------------- lone surrogates


def test_a_lone_surrogate_in_the_name_prints_escaped(tmp_path, capsys):
    doc = copy.deepcopy(BASE)
    doc["name"] = "bad \ud800 name"
    doc["accesses"][0]["name"] = "\udfff"
    code, out, err, _ = report(capsys, tmp_path, doc)
    assert code == 0 and not err
    assert out.startswith("bad \\ud800 name: 64 threads") and "\\udfff" in out
    code, out, err, _ = report(capsys, tmp_path, doc, "--json")
    assert code == 0 and json.loads(out)["pattern"] == "bad \ud800 name"


def test_a_lone_surrogate_in_an_error_line(tmp_path, capsys):
    doc = copy.deepcopy(BASE)
    doc["accesses"][0]["array"] = "\ud800"
    code, out, err, path = report(capsys, tmp_path, doc)
    assert_one_line(code, out, err, path, "accesses[0].array: unknown array '\\ud800'")


def test_a_lone_surrogate_through_a_real_pipe(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path
    doc = copy.deepcopy(BASE)
    doc["name"] = "\ud800"
    path = tmp_path / "p.sectorviz.json"
    path.write_text(json.dumps(doc))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run([sys.executable, "-m", "sectorviz", "report", str(path)],
                            capture_output=True, env=env, timeout=120)
    assert result.returncode == 0 and not result.stderr
    assert result.stdout.startswith(b"\\ud800: 64 threads")


# ---------------------------------------------------------------- no global accesses


SHARED_ONLY = {
    "format": "sectorviz.pattern/1", "name": "registers and shared memory only",
    "launch": {"grid": [2], "block": [64]}, "arrays": {"out": {"dtype": "float32", "length": 1}},
    "kernel": {"function": "k", "code": """
__global__ void k(float *out)
{
    __shared__ float tile[64];
    float r = threadIdx.x * 2.0f;
    tile[threadIdx.x] = r;
    __syncthreads();
    r = tile[63 - threadIdx.x];
}
"""},
}


def test_a_kernel_with_no_global_access_gives_an_empty_sheet(tmp_path, capsys):
    pytest.importorskip("tree_sitter")
    code, out, err, _ = report(capsys, tmp_path, SHARED_ONLY, "--json")
    assert code == 0 and not err
    sheet = json.loads(out)
    assert sheet["instructions"] == [] and sheet["warps"] == 4
    assert sheet["totals"]["sectors"] == 0 and sheet["totals"]["unique_sectors"] == 0
    assert [b["sectors"] for b in sheet["boundaries"]] == [0, 0, 0, 0]
    code, out, err, _ = report(capsys, tmp_path, SHARED_ONLY, "--warp", "3")
    assert code == 0 and not err and "warp 3 (block (1, 0, 0))" in out


def test_a_pattern_needs_at_least_one_access():
    from sectorviz.model import PatternError
    doc = copy.deepcopy(BASE)
    doc["accesses"] = []
    with pytest.raises(PatternError, match="^accesses: expected a list with at least one"):
        pattern_from_text(json.dumps(doc))


@pytest.mark.parametrize("key, shown", [("\n", "\\n"), ("a\u2028b", "a\\u2028b"),
                                        ("\x1e", "\\x1e"), ("\u202e", "\\u202e")])
def test_control_characters_in_a_key_stay_on_one_line(tmp_path, capsys, key, shown):
    doc = copy.deepcopy(BASE)
    doc["params"][key] = 1
    code, out, err, path = report(capsys, tmp_path, doc)
    assert_one_line(code, out, err, path, f"params.{shown}: {ascii(key)} is not a valid name "
                                          "(letters, digits, _)")
