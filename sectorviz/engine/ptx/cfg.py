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
    def post_dominators(self) -> list[set[int]]:
        """Block (and exit) -> the nodes post-dominating it (itself and the exit included),
        over the paths that reach the exit; a block that cannot reach the exit (an endless
        loop) keeps only itself and the exit."""
        n = self.exit
        reaching = {n}
        before: list[list[int]] = [[] for _ in range(n + 1)]
        for b, targets in enumerate(self.succ):
            for s in targets:
                before[s].append(b)
        todo = [n]
        while todo:
            for b in before[todo.pop()]:
                if b not in reaching:
                    reaching.add(b)
                    todo.append(b)
        pdom = [set(range(n + 1)) if b in reaching else {b, n} for b in range(n)] + [{n}]
        changed = True
        while changed:
            changed = False
            for b in reversed(sorted(reaching - {n})):
                new = set.intersection(*(pdom[s] for s in self.succ[b] if s in reaching)) | {b}
                if new != pdom[b]:
                    pdom[b], changed = new, True
        return pdom

    def immediate_post_dominator(self, b: int) -> int:
        """The strict post-dominator of b that every other strict post-dominator
        post-dominates (the exit where there is none)."""
        pdom = self.post_dominators
        strict = pdom[b] - {b}
        for c in strict:
            if strict <= pdom[c] | {c}:
                return c
        return self.exit


def reconvergence(entry: Entry) -> dict[int, int]:
    """Instruction index of each branch -> instruction index where its paths meet
    (len(instructions), the virtual exit, where they only meet at the end)."""
    code = entry.instructions
    graph = FlowGraph(entry)
    out = {}
    for b, hi in enumerate(graph.ends):
        if code[hi - 1].op in BRANCHES:
            ip = graph.immediate_post_dominator(b)
            out[hi - 1] = len(code) if ip == graph.exit else graph.starts[ip]
    return out
