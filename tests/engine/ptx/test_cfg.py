"""An entry's control-flow graph (cfg.FlowGraph: basic blocks, edges) and its immediate
post-dominators (cfg.immediate_post_dominators: where divergent lanes
reconverge) against their definition on random graphs: c post-dominates b when every path
from b to the exit passes through c, so with c taken out the exit cannot be reached from b;
the immediate one is the strict post-dominator that every other strict one post-dominates."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.engine.ptx.cfg import FlowGraph, immediate_post_dominators
from sectorviz.engine.ptx.parse import parse_module


def _reaches_exit(succ: list[set[int]], n: int, start: int, without: int) -> bool:
    """Whether the exit n is reachable from start with node `without` taken out."""
    seen, todo = {start}, [start]
    while todo:
        node = todo.pop()
        if node == n:
            return True
        for s in succ[node] if node < n else ():
            if s != without and s not in seen:
                seen.add(s)
                todo.append(s)
    return False


def _brute_force(succ: list[set[int]], n: int) -> list[int]:
    out = []
    for b in range(n):
        if not _reaches_exit(succ, n, b, -1):
            out.append(n)  # an endless loop: it meets the others only at the exit
            continue
        strict = [c for c in range(n) if c != b and not _reaches_exit(succ, n, b, c)] + [n]
        pdom = {c: {d for d in range(n) if d != c and not _reaches_exit(succ, n, c, d)}
                for c in strict if c < n}
        out.append(next(c for c in strict if all(d == c or d in pdom.get(c, {n}) or d == n
                                                  for d in strict)))
    return out


@st.composite
def graphs(draw) -> tuple[list[set[int]], int]:
    """A graph of n nodes (each with one or two successors, the exit node n among them)."""
    n = draw(st.integers(1, 9))
    succ = [set(draw(st.lists(st.integers(0, n), min_size=1, max_size=2))) for _ in range(n)]
    return succ, n


@settings(max_examples=300, deadline=None)
@given(graphs())
def test_immediate_post_dominators_match_their_definition(graph):
    succ, n = graph
    assert immediate_post_dominators(succ, n) == _brute_force(succ, n)


def test_a_diamond_meets_at_its_join():
    # 0 -> 1, 2; 1 -> 3; 2 -> 3; 3 -> exit (4): both sides meet at 3
    assert immediate_post_dominators([{1, 2}, {3}, {3}, {4}], 4) == [3, 3, 3, 4]


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
    # the entry's nearest post-dominator is the head, the head's and the arm's the join
    assert graph.immediate_post_dominators == [1, 3, 3, 4, 5]


def test_a_block_in_an_endless_loop_meets_the_others_at_the_exit():
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
    # the spinning block 1 never reaches the exit (3): it meets the others only there
    assert graph.immediate_post_dominators == [2, 3, 3]
