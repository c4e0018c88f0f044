"""Expressions through their shape (model.expr_shape): the same tree, columns, names and errors
as the parser itself gives the text, and every valid short text of a shape seen before goes
through its shape."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.model.errors import PatternError
from sectorviz.model.expr import ExprError, parse_text, tree_names
from sectorviz.model.expr_shape import SHORT_CHARS, parsed_at

PIECES = ["a", "b1", "_", "_x", "n", "threadIdx", "threadIdx.x", "blockDim . y", ".", "x", " ",
          "\t", "0", "7", "42", "010", "0x1F", "10u", "1e5", "1234567890123456789", "min(",
          "max(", "abs(", "foo(", "a[", "é", "\u00a0", "+", "-", "*", "/", "%", "<<", ">>", "<",
          "<=", "==", "!=", "&&", "||", "!", "~", "&", "^", "|", "?", ":", "(", ")", "[", "]",
          ","]

NAMES = st.sampled_from(["a", "b1", "_", "n", "v12", "threadIdx.x", "threadIdx . y", "i"])
RENAMED = re.compile(r"\b(a|b1|_|n|v12|i|idx)\b")  # NAMES and arrays but the built-ins
NUMBERS = st.sampled_from(["0", "1", "32", "1024", "0x10", "7u", "123456789012345678"])
OPS = st.sampled_from(["+", "-", "*", "/", "%", "<<", ">>", "<", "<=", "==", "!=", "&&", "||",
                       "&", "^", "|"])
SPACE = st.sampled_from(["", " ", "  "])


def _compound(inner):
    return st.one_of(
        st.tuples(inner, SPACE, OPS, SPACE, inner).map("".join),
        st.tuples(st.sampled_from(["-", "!", "~", "+"]), inner).map("".join),
        inner.map(lambda e: f"({e})"),
        st.tuples(inner, inner, inner).map(lambda t: f"{t[0]} ? {t[1]} : {t[2]}"),
        st.tuples(st.sampled_from(["min", "max"]), inner, inner).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        inner.map(lambda e: f"abs( {e})"),
        st.tuples(st.sampled_from(["a", "idx", "b1"]), inner).map(lambda t: f"{t[0]}[{t[1]}]"))


VALID = st.recursive(st.one_of(NAMES, NUMBERS), _compound, max_leaves=12)
ANY = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


def _outcome_as_written(text):
    """The parser's own reading of `text`: ("tree", tree) or ("error", message, column)."""
    try:
        return ("tree", parse_text(text))
    except ExprError as err:
        return ("error", err.message, err.column)


def _check_same(text):
    """Through the shape, `text` reads as the parser reads it; -> whether it was valid."""
    written = _outcome_as_written(text)
    try:
        got = parsed_at(text, "let.v")
    except PatternError as err:
        assert written == ("error", err.message, err.column), text
        return False
    assert written == ("tree", got.tree), text
    assert got.names == tree_names(got.tree), text
    return True


@settings(max_examples=400)
@given(VALID)
def test_valid_expressions_read_as_written(text):
    """`text`, then a text of its shape (its names renamed), which goes through the shape."""
    again = RENAMED.sub(r"q\1", text)
    assert _check_same(text) and _check_same(again)
    if again != text and len(again) <= SHORT_CHARS:
        assert parsed_at(again, "let.w").shape is not None, again  # the shape path ran


@settings(max_examples=600)
@given(ANY)
def test_any_text_reads_as_written(text):
    _check_same(text)


@pytest.mark.parametrize("text", [
    "v12 + 1", "threadIdx . x*4+ blockIdx.x", "a[i] + a[i + 1]", "min(n, 32) - 1", "010 + 1",
    "n.x(1)", "1e5", "x ? y : ", "", "   ", "a[b[c]]", "_ + 0", "99999999999999999999",
    "0x1F + 10u", "n .x", "abs(-n)"])
def test_known_cases_read_as_written(text):
    _check_same(text)


def test_a_shape_seen_before_is_shared():
    first, second = parsed_at("v1 +  1", "let.a"), parsed_at("w22 +  7", "let.b")
    third = parsed_at("x333 +  8", "let.c")
    assert first.shape is None and second.shape is third.shape is not None
    assert (second.tree, third.tree) == (parse_text("w22 +  7"), parse_text("x333 +  8"))


def test_an_error_names_the_place_and_the_column_as_written():
    with pytest.raises(PatternError) as err:
        parsed_at("longname + $", "accesses[3].index")
    assert (err.value.place, err.value.column) == ("accesses[3].index", 12)
