"""The long fuzzing run over CUDA kernels (issue 15, item 7): the cases of
tests/cuda/test_fuzz_kernels.py for a few minutes, in this process under a time limit per case
and a memory limit for the whole run, printing cases per second, how the cases ended, and
every failure (target: none). Failing cases are saved under --out.

Run: PYTHONPATH=. .venv/bin/python benchmarks/bench_fuzz_kernels.py [--minutes M] [--default]
(--default: run at the default work budget too, as the app does: endless loops then take
about 10 s each).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "cuda")]

import test_fuzz_kernels as fuzz  # noqa: E402

CASE_SECONDS = 60  # several times the default budget's 10 s: a case this slow has hung
MEMORY = 6 * 2**30  # bytes of address space for the whole run: a blow-up is a MemoryError
ROUND = 100  # cases per hypothesis run; runs repeat with fresh seeds until time is up


def ending(outcome: fuzz.Outcome, folder: Path) -> str:
    """How a case ended, for the tally: exit 0, or exit 2 and the kind of its message."""
    if outcome.code != 2:
        return f"exit {outcome.code}"
    line = outcome.err.removeprefix(f"{folder / 'fuzzed.sectorviz.json'}: ")
    place, _, message = line.partition(": ")
    place = "line L" if place.startswith("line ") else place
    return f"exit 2: {place}: {' '.join(message.split()[:5])[:60]}"


def run(seconds: float, budgets: list[list[str]], folder: Path, out: Path) -> int:
    """Fuzz for about `seconds`; print the tally; return the number of failures."""
    endings: Counter = Counter()
    failures: list[tuple[str, Path]] = []
    slowest, cases = 0.0, 0
    deadline = start = time.perf_counter()
    deadline += seconds

    @settings(max_examples=ROUND, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(text=fuzz.kernel_texts(), args=st.sampled_from(budgets))
    def one(text, args):
        nonlocal slowest, cases
        if time.perf_counter() > deadline:
            return
        outcome = fuzz.run_report(text, folder, args, CASE_SECONDS)
        cases += 1
        if outcome.seconds > slowest:
            slowest = outcome.seconds
            (out / "slowest.sectorviz.json").write_text(text, encoding="utf-8",
                                                        errors="surrogatepass")
        endings[ending(outcome, folder)] += 1
        broken = fuzz.broken_promise(outcome, folder)
        if broken is not None:
            saved = out / f"kernel-{len(failures)}.sectorviz.json"
            saved.write_text(text, encoding="utf-8", errors="surrogatepass")
            failures.append((broken, saved))

    while time.perf_counter() < deadline:
        one()
    spent = time.perf_counter() - start
    print(f"kernels: {cases} cases in {spent:.0f} s ({cases / spent:.2f} cases/s, slowest "
          f"{slowest:.1f} s, saved in {out}); failures: {len(failures)} (target 0)")
    for kind, count in endings.most_common(25):
        print(f"  {count:6d}  {kind}")
    for broken, saved in failures:
        print(f"  FAILURE: {broken[:200]}  ({saved})")
    return len(failures)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0, help="how long (default 3)")
    parser.add_argument("--default", action="store_true",
                        help="also run cases at the default work budget")
    parser.add_argument("--out", type=Path, help="folder for failing cases (default: a new "
                                                 "temporary folder)")
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    out = args.out or Path(tempfile.mkdtemp(prefix="sectorviz-fuzz-kernels-"))
    out.mkdir(parents=True, exist_ok=True)
    budgets = [list(b) for b in fuzz.BUDGETS] + ([[]] if args.default else [])
    with tempfile.TemporaryDirectory() as folder:
        failed = run(args.minutes * 60, budgets, Path(folder), out)
    print(f"failing cases saved in {out}" if failed else "no failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
