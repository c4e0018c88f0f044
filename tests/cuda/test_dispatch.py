"""The compiler's one dispatch style: statements and expressions by node kind, built-ins by
name, each in its table (cuda/dispatch.py); every key names something real."""

import pytest
import tree_sitter
import tree_sitter_cuda

from sectorviz.cuda import builtins, compile  # noqa: F401  (importing fills the tables)
from sectorviz.cuda.dispatch import BUILTINS, EXPRESSIONS, STATEMENTS, Handlers

LANGUAGE = tree_sitter.Language(tree_sitter_cuda.language())
KINDS = {LANGUAGE.node_kind_for_id(i) for i in range(LANGUAGE.node_kind_count)
         if LANGUAGE.node_kind_is_named(i)}


def test_every_statement_and_expression_key_is_a_node_kind_of_the_grammar():
    for table in (STATEMENTS, EXPRESSIONS):
        assert set(table.by_key) <= KINDS, set(table.by_key) - KINDS


def test_the_tables_cover_the_constructs_the_compiler_names():
    assert {"if_statement", "for_statement", "switch_statement", "return_statement",
            "declaration", "expression_statement"} <= set(STATEMENTS.by_key)
    assert {"binary_expression", "call_expression", "subscript_expression", "identifier",
            "cast_expression", "field_expression"} <= set(EXPRESSIONS.by_key)
    assert {"__syncthreads", "__shfl_xor_sync", "__shfl_xor", "atomicAdd_block", "make_float4",
            "__ldg", "sincosf", "__ballot"} <= set(BUILTINS.by_key)


def test_a_key_is_handled_once():
    table = Handlers("test")
    table("a")(lambda: None)
    with pytest.raises(ValueError, match="two test handlers for 'a'"):
        table("a")(lambda: None)
