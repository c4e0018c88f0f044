"""An entry's control-flow graph (FlowGraph: basic blocks and their edges, a virtual exit)
-> where divergent lanes reconverge: for each branch instruction, the first instruction of
its block's immediate post-dominator (or EXIT: the lanes meet again only when they leave the
kernel). Computed once per entry."""

from __future__ import annotations

from bisect import bisect_right
from functools import cached_property

from .parse import Entry

BRANCHES = ("bra",)
EXITS = ("ret", "exit", "trap")


class FlowGraph:
    """An entry's basic blocks: block b holds instructions [starts[b], ends[b]) (a block
    starts at the entry, at a branch target and after a branch or exit); succ[b] the blocks
    control may go to from b, `exit` (= the number of blocks) the virtual exit."""

    def __init__(self, entry: Entry):
        code = entry.instructions
        end = len(code)
        leaders = {0} | {entry.labels[i.operands[0].name] for i in code
                         if i.op in BRANCHES and i.operands and i.operands[0].name in entry.labels}
        leaders |= {k + 1 for k, i in enumerate(code) if i.op in BRANCHES + EXITS}
        self.starts = sorted(x for x in leaders if x < end)
        self.exit = len(self.starts)
        self.ends = self.starts[1:] + [end] if self.starts else []
        self.succ: list[set[int]] = [set() for _ in self.starts]
        for b, hi in enumerate(self.ends):
            last, falls = code[hi - 1], hi < end
            after = self.of(hi) if falls else self.exit
            if last.op in BRANCHES:
                target = entry.labels.get(last.operands[0].name, end)
                self.succ[b].add(self.of(target) if target < end else self.exit)
            elif last.op in EXITS:
                self.succ[b].add(self.exit)
            if last.op not in BRANCHES + EXITS or last.guard is not None and falls:
                self.succ[b].add(after)

    def of(self, at: int) -> int:
        """Instruction index -> its block."""
        return bisect_right(self.starts, at) - 1

    @cached_property
    def immediate_post_dominators(self) -> list[int]:
        """Block -> its immediate post-dominator (immediate_post_dominators); the exit for
        a block that cannot reach it (an endless loop)."""
        return immediate_post_dominators(self.succ, self.exit)


def reconvergence(entry: Entry) -> dict[int, int]:
    """Instruction index of each branch -> instruction index where its paths meet
    (len(instructions), the virtual exit, where they only meet at the end)."""
    code = entry.instructions
    graph = FlowGraph(entry)
    out = {}
    for b, hi in enumerate(graph.ends):
        if code[hi - 1].op in BRANCHES:
            ip = graph.immediate_post_dominators[b]
            out[hi - 1] = len(code) if ip == graph.exit else graph.starts[ip]
    return out


def immediate_post_dominators(succ: list[set[int]], n: int) -> list[int]:
    """Node -> its immediate post-dominator, for nodes 0..n-1 of a graph whose exit is node
    n (succ: each node's successors); n for a node that cannot reach the exit (an endless
    loop). Cooper, Harvey and Kennedy's iteration ("A Simple, Fast Dominance Algorithm") over
    the reversed graph, in reverse postorder from the exit."""
    preds: list[list[int]] = [[] for _ in range(n + 1)]
    for b, ss in enumerate(succ):
        for s in sorted(ss):
            preds[s].append(b)
    order = _postorder(preds, n)
    number = {node: k for k, node in enumerate(order)}
    ipdom = {n: n}
    changed = True
    while changed:
        changed = False
        for b in reversed(order[:-1]):
            done = [s for s in sorted(succ[b]) if s in ipdom]
            new = done[0]
            for s in done[1:]:
                new = _meet(s, new, ipdom, number)
            if ipdom.get(b) != new:
                ipdom[b], changed = new, True
    return [ipdom.get(b, n) for b in range(n)]


def _postorder(edges: list[list[int]], root: int) -> list[int]:
    """The nodes reached from root along edges, in depth-first postorder (root last)."""
    order, seen = [], {root}
    stack = [(root, iter(edges[root]))]
    while stack:
        node, rest = stack[-1]
        after = next((m for m in rest if m not in seen), None)
        if after is None:
            stack.pop()
            order.append(node)
        else:
            seen.add(after)
            stack.append((after, iter(edges[after])))
    return order


def _meet(a: int, b: int, ipdom: dict[int, int], number: dict[int, int]) -> int:
    """The nearest common post-dominator of a and b in the tree built so far."""
    while a != b:
        while number[a] < number[b]:
            a = ipdom[a]
        while number[b] < number[a]:
            b = ipdom[b]
    return a
