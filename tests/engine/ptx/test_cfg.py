"""Immediate post-dominators (cfg.immediate_post_dominators: where divergent lanes
reconverge) against their definition on random graphs: c post-dominates b when every path
from b to the exit passes through c, so with c taken out the exit cannot be reached from b;
the immediate one is the strict post-dominator that every other strict one post-dominates."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.engine.ptx.cfg import immediate_post_dominators


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
