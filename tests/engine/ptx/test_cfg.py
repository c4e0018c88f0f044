"""An entry's control-flow graph: its basic blocks, their edges and post-dominators."""

from __future__ import annotations

from sectorviz.engine.ptx.cfg import FlowGraph
from sectorviz.engine.ptx.parse import parse_module


def test_blocks_edges_and_post_dominators_of_a_loop_with_a_branch():
    """Blocks 0 (entry), 1 (loop head), 2 (the arm of `@%p1 bra`), 3 (the join, ending in
    the back branch), 4 (the tail); node 5 the exit. Every path from the entry, the head and
    the arm passes the join, the tail and the exit: the entry is post-dominated by every
    node (not taken for a block that never reaches the exit)."""
    graph = FlowGraph(parse_module("""
.visible .entry c()
{
    .reg .pred %p<4>;
    .reg .b32 %r<4>;
    mov.u32 %r1, 0;
$L_head:
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 4;
    @%p1 bra $L_join;
    mov.u32 %r2, 1;
$L_join:
    add.u32 %r3, %r3, %r2;
    setp.lt.u32 %p2, %r1, 8;
    @%p2 bra $L_head;
    mov.u32 %r2, 3;
    ret;
}
""").entries["c"])
    assert graph.starts == [0, 1, 4, 5, 8]
    assert graph.succ == [{1}, {2, 3}, {3}, {1, 4}, {5}]
    assert [graph.of(k) for k in range(10)] == [0, 1, 1, 1, 2, 3, 3, 3, 4, 4]
    assert graph.post_dominators == [{0, 1, 3, 4, 5}, {1, 3, 4, 5}, {2, 3, 4, 5}, {3, 4, 5},
                                     {4, 5}, {5}]
    assert graph.immediate_post_dominator(1) == 3


def test_a_block_in_an_endless_loop_is_post_dominated_by_itself_and_the_exit_only():
    graph = FlowGraph(parse_module("""
.visible .entry e()
{
    .reg .pred %p<2>;
    .reg .b32 %r<2>;
    setp.lt.u32 %p1, %r1, 4;
    @%p1 bra $L_done;
$L_spin:
    add.u32 %r1, %r1, 1;
    bra.uni $L_spin;
$L_done:
    ret;
}
""").entries["e"])
    assert graph.succ == [{1, 2}, {1}, {3}]
    assert graph.post_dominators == [{0, 2, 3}, {1, 3}, {2, 3}, {3}]
