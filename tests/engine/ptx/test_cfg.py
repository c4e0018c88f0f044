"""An entry's control-flow graph: its blocks, edges and which blocks are control equivalent
(equal control dependences: they run equally often, with the same lanes)."""

from __future__ import annotations

from sectorviz.engine.ptx.cfg import FlowGraph
from sectorviz.engine.ptx.parse import parse_module

LOOP_WITH_BRANCH = """
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
"""


def test_blocks_of_one_loop_iteration_are_control_equivalent_and_a_branch_arm_is_not():
    """Blocks 0 (entry), 1 (loop head), 2 (the arm of `@%p1 bra`), 3 (the join, ending in
    the back branch), 4 (the tail). The head and the join depend on the back edge (3, 1)
    alone; the arm on the edge (1, 2) into it; the entry and the tail on none."""
    graph = FlowGraph(parse_module(LOOP_WITH_BRANCH).entries["c"])
    assert graph.starts == [0, 1, 4, 5, 8]
    assert graph.succ == [{1}, {2, 3}, {3}, {1, 4}, {5}]
    assert graph.control_dependences == [frozenset(), {(3, 1)}, {(1, 2)}, {(3, 1)},
                                         frozenset()]


def test_a_block_an_earlier_one_always_reaches_is_not_equivalent_when_a_loop_returns_first():
    """`do { A; if (p) continue; B; } while (q)`: A (block 1) dominates B (block 2) and B
    post-dominates A, both in the loop, yet A runs again without B (the `continue` edge
    (1, 1)): their control dependences differ."""
    entry = parse_module("""
.visible .entry d()
{
    .reg .pred %p<4>;
    .reg .b32 %r<4>;
    mov.u32 %r1, 0;
$L_head:
    add.u32 %r1, %r1, 1;
    setp.lt.u32 %p1, %r1, 4;
    @%p1 bra $L_head;
    add.u32 %r3, %r3, %r1;
    setp.lt.u32 %p2, %r1, 8;
    @%p2 bra $L_head;
    ret;
}
""").entries["d"]
    graph = FlowGraph(entry)
    assert graph.succ == [{1}, {1, 2}, {1, 3}, {4}]
    assert 2 in graph.post_dominators[1]
    assert graph.control_dependences[1] == {(1, 1), (2, 1)}
    assert graph.control_dependences[2] == {(2, 1)}
