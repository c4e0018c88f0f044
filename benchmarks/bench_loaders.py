"""How long a pattern with very many accesses or lets takes to load (issue 22, item 2): the
loader is linear, so 100,000 accesses or 100,000 lets (about 7 MB of JSON) load in under 2 s
on a laptop core; the figures for 10,000 show the growth (linear: about 10x), also for a
pattern of both, each access with a loop. Each figure is the best of REPEATS runs (a busy
machine slows some). Run on an idle machine:
.venv/bin/python benchmarks/bench_loaders.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sectorviz.model import pattern_from_text  # noqa: E402

LET_CHAIN = 30  # lets per chain (each reads the one before), below the nesting limit


def many_accesses(n: int) -> str:
    return json.dumps({"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
                       "arrays": {"a": {"dtype": "float32", "length": 1024}},
                       "accesses": [{"name": f"load{i}", "op": "load", "array": "a",
                                     "index": "threadIdx.x"} for i in range(n)]})


def many_lets(n: int) -> str:
    lets = {f"v{i}": f"v{i - 1} + 1" if i % LET_CHAIN else "threadIdx.x" for i in range(n)}
    return json.dumps({"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
                       "arrays": {"a": {"dtype": "float32", "length": 1024}}, "let": lets,
                       "accesses": [{"name": "l", "op": "load", "array": "a",
                                     "index": f"v{n - 1} % 1024"}]})


def lets_and_looped_accesses(n: int) -> str:
    """n / 2 lets and n / 2 accesses, each in a loop (its variable checked against every let)."""
    lets = {f"v{i}": "threadIdx.x + 1" for i in range(n // 2)}
    return json.dumps({"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
                       "arrays": {"a": {"dtype": "float32", "length": 1024}}, "let": lets,
                       "accesses": [{"name": f"load{i}", "op": "load", "array": "a",
                                     "index": "threadIdx.x + k",
                                     "loops": [{"var": "k", "start": 0, "stop": 2}]}
                                    for i in range(n // 2)]})


TARGET_S = 2.0  # for 100,000 accesses or lets
REPEATS = 3  # the machine may be busy: each figure is the best of these runs (all shown)


def load_seconds(text: str) -> tuple[float, float]:
    """One load of `text` -> (wall seconds, CPU seconds)."""
    start, cpu = time.perf_counter(), time.process_time()
    pattern_from_text(text)
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    for what, make in (("accesses", many_accesses), ("lets", many_lets),
                       ("lets and looped accesses", lets_and_looped_accesses)):
        small = 0.0
        for n in (10_000, 100_000):
            text = make(n)
            runs = [load_seconds(text) for _ in range(REPEATS)]
            took, used = min(runs)
            line = (f"{n:>7,} {what:8s} {len(text) / 1e6:5.1f} MB  {took:5.2f} s  ({used:5.2f} s "
                    f"of CPU; runs {', '.join(f'{w:.2f}' for w, _ in runs)})")
            if n == 100_000:
                line += f"  growth {took / small:.1f}x"
                if make is not lets_and_looped_accesses:
                    line += f", target < {TARGET_S:.1f} s, ratio {took / TARGET_S:.2f}"
            small = took
            print(line)


if __name__ == "__main__":
    main()
