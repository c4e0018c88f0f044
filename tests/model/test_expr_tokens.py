"""The expression tokenizer (model.expr._tokens, one findall): every token is where its column
says, nothing but white space lies between tokens, and a character no token starts with is
refused at its column."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sectorviz.model.expr import ExprError, _tokens

PIECES = ["a", "b1", "_x", "threadIdx", ".", "x", " ", "\t", "0", "7", "0x1F", "10u", "<<",
          "<", "=", "==", "!", "&&", "|", "?", ":", "(", ")", "[", "]", ",", "$", "é", "\u00a0"]


@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_tokens_cover_the_text(text):
    try:
        tokens = _tokens(text)
    except ExprError as err:
        bad = text[err.column - 1]
        assert err.message == f"unexpected character {bad!r}"
        assert not re.match(r"[\w<>=!&|?:()\[\],+\-*/%^~]", bad, re.ASCII) or bad in "=."
        return
    for tok in tokens[:-1]:  # each token starts at its column (`threadIdx . x` folded)
        assert re.sub(r"\s+", "", text[tok.col - 1:]).startswith(tok.text), (text, tok)
    assert "".join(t.text for t in tokens) == re.sub(r"\s+", "", text)  # nothing else
    assert tokens[-1] == ("end", "", len(text) + 1)


@pytest.mark.parametrize("text, kinds", [
    ("threadIdx . x+0x10u", [("name", "threadIdx.x", 1), ("op", "+", 14), ("num", "0x10u", 15)]),
    ("a<<=b", [("name", "a", 1), ("op", "<<", 2), ("op", "=", 4)]),
])
def test_kinds_and_columns(text, kinds):
    if "=" in text and "==" not in text:
        with pytest.raises(ExprError, match="unexpected character '='"):
            _tokens(text)
        return
    assert [tuple(t) for t in _tokens(text)[:-1]] == kinds
