"""An entry's control-flow graph -> where divergent lanes reconverge: for each branch
instruction, the first instruction of its block's immediate post-dominator (or EXIT: the
lanes meet again only when they leave the kernel). Computed once per entry."""

from __future__ import annotations

from .parse import Entry

BRANCHES = ("bra",)
EXITS = ("ret", "exit", "trap")


def reconvergence(entry: Entry) -> dict[int, int]:
    """Instruction index of each branch -> instruction index where its paths meet
    (len(instructions), the virtual exit, where they only meet at the end)."""
    code = entry.instructions
    exit_index = len(code)
    leaders = {0} | {entry.labels[i.operands[0].name] for i in code
                     if i.op in BRANCHES and i.operands and i.operands[0].name in entry.labels}
    leaders |= {k + 1 for k, i in enumerate(code) if i.op in BRANCHES + EXITS}
    firsts = sorted(x for x in leaders if x < exit_index)
    if not firsts:
        return {}
    block_of = {}
    starts = firsts + [exit_index]
    for b, (lo, hi) in enumerate(zip(starts, starts[1:])):
        for k in range(lo, hi):
            block_of[k] = b
    n = len(firsts)
    exit_node = n
    succ: list[set[int]] = [set() for _ in range(n)]
    for b, hi in enumerate(starts[1:]):
        last = code[hi - 1]
        falls = hi < exit_index
        if last.op in BRANCHES:
            succ[b].add(block_of.get(entry.labels.get(last.operands[0].name, exit_index),
                                     exit_node))
            if last.guard is not None and falls:
                succ[b].add(block_of[hi])
        elif last.op in EXITS:
            succ[b].add(exit_node)
            if last.guard is not None and falls:
                succ[b].add(block_of[hi])
        else:
            succ[b].add(block_of[hi] if falls else exit_node)
    ipdom = immediate_post_dominators(succ, n)
    out = {}
    for b, hi in enumerate(starts[1:]):
        if code[hi - 1].op in BRANCHES:
            ip = ipdom[b]
            out[hi - 1] = exit_index if ip == exit_node else starts[ip]
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
