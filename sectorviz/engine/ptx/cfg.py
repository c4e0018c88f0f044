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
    pdom = _post_dominators(succ, n)
    out = {}
    for b, hi in enumerate(starts[1:]):
        if code[hi - 1].op in BRANCHES:
            ip = _immediate(pdom, b, exit_node)
            out[hi - 1] = exit_index if ip == exit_node else starts[ip]
    return out


def _post_dominators(succ: list[set[int]], n: int) -> list[set[int]]:
    """Node -> the set of nodes post-dominating it (itself and the exit included); a node
    that cannot reach the exit keeps only itself and the exit."""
    everything = set(range(n + 1))
    pdom = [set(everything) for _ in range(n)] + [{n}]
    changed = True
    while changed:
        changed = False
        for b in reversed(range(n)):
            if not succ[b]:
                new = {b, n}
            else:
                new = set.intersection(*(pdom[s] for s in succ[b])) | {b}
            if new != pdom[b]:
                pdom[b], changed = new, True
    for b in range(n):
        if pdom[b] == everything:  # never reaches the exit (an endless loop)
            pdom[b] = {b, n}
    return pdom


def _immediate(pdom: list[set[int]], b: int, exit_node: int) -> int:
    """The immediate post-dominator of b: the strict post-dominator that every other strict
    post-dominator post-dominates."""
    strict = pdom[b] - {b}
    for c in strict:
        if strict <= pdom[c] | {c}:
            return c
    return exit_node
