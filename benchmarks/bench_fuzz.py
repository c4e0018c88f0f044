"""The long fuzzing run (issue 15, item 7): every fuzz target for a few minutes, printing
cases per second, how the cases ended, and every failure (target: none).

A target draws cases from a hypothesis strategy and runs each one, answering what broke the
promise (exit 0 with its output, or exit 2 with one line naming the file) or None; failing
cases are saved under --out. Add a target by adding a `Target` to `targets()`.

Run: PYTHONPATH=. .venv/bin/python benchmarks/bench_fuzz.py [--minutes M] [--target NAME]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import test_fuzz_patterns as patterns  # noqa: E402

CASE_SECONDS = 20  # past the default work budget (about 10 s): a case this slow has hung
MEMORY = 6 * 2**30  # bytes of address space for the whole run: a blow-up is a MemoryError
ROUND = 200  # cases per hypothesis run; runs repeat with fresh seeds until time is up


@dataclass
class Target:
    """A fuzz target: `cases` draws one case; `run(case, folder)` -> (how it ended, what
    broke the promise or None); `save(case, stem)` writes a failing case to files named
    from `stem` -> the command line that reruns it."""

    name: str
    cases: st.SearchStrategy
    run: Callable[[Any, Path], tuple[str, str | None]]
    save: Callable[[Any, Path], str]


@dataclass
class Tally:
    cases: int = 0
    seconds: float = 0.0
    slowest: float = 0.0
    endings: Counter = field(default_factory=Counter)
    failures: list = field(default_factory=list)  # (what broke, command line to rerun it)


def _pattern_case(case: tuple[str, list[str]], folder: Path) -> tuple[str, str | None]:
    text, args = case
    return _ending(patterns.run_report(text, folder, args, CASE_SECONDS), folder)


def _ending(outcome: patterns.Outcome, folder: Path) -> tuple[str, str | None]:
    """An outcome -> (how it ended, for the tally; what broke the promise or None)."""
    ending = "exit 0" if outcome.code == 0 else (
        f"exit {outcome.code}: {_kind_of(outcome.err, folder)}" if outcome.code else "timeout")
    return ending, patterns.broken_promise(outcome, folder)


def _npy_case(case: tuple[bytes, list[str]], folder: Path) -> tuple[str, str | None]:
    data, args = case
    return _ending(patterns.run_npy_case(data, folder, args, CASE_SECONDS), folder)


def _save_npy(case: tuple[bytes, list[str]], stem: Path) -> str:
    data, args = case
    stem.mkdir()
    name = patterns.npy_name(data)
    (stem / name).write_bytes(data)
    return _save_pattern((patterns.gather(name), args), stem / "gather")


def _save_pattern(case: tuple[str, list[str]], stem: Path) -> str:
    text, args = case
    patterns.example_folder(stem.parent)  # the kernel sources it may name
    path = stem.with_suffix(".sectorviz.json")
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return " ".join(["sectorviz report", str(path), *args])


def _kind_of(err: str, folder: Path) -> str:
    """An error line -> its place without indices (`accesses[].index`), for the tally."""
    line = err.strip().removeprefix(f"{folder / 'fuzzed.sectorviz.json'}: ")
    place = line.split(":")[0].split(",")[0]
    return "".join(c for c in place if not c.isdigit())[:40] or "(no place)"


def targets() -> dict[str, Target]:
    return {
        "patterns": Target("patterns", st.tuples(patterns.pattern_texts(),
                                                 st.sampled_from(patterns.REPORT_ARGS)),
                           _pattern_case, _save_pattern),
        "npy": Target("npy", st.tuples(patterns.npy_files(),
                                       st.sampled_from(patterns.REPORT_ARGS)),
                      _npy_case, _save_npy),
    }


def fuzz(target: Target, seconds: float, folder: Path, out: Path) -> Tally:
    """Run `target` for about `seconds`, in rounds of ROUND cases with fresh seeds."""
    tally = Tally()
    deadline = time.perf_counter() + seconds

    @settings(max_examples=ROUND, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=target.cases)
    def one(case):
        if time.perf_counter() > deadline:
            return
        start = time.perf_counter()
        ending, broken = target.run(case, folder)
        spent = time.perf_counter() - start
        tally.cases += 1
        tally.seconds += spent
        tally.slowest = max(tally.slowest, spent)
        tally.endings[ending.split(":")[0] if ending.startswith("exit 0") else ending] += 1
        if broken is not None:
            rerun = target.save(case, out / f"{target.name}-{len(tally.failures)}")
            tally.failures.append((broken, rerun))

    while time.perf_counter() < deadline:
        one()
    return tally


def report(target: Target, tally: Tally, seconds: float) -> None:
    rate = tally.cases / seconds if seconds else 0.0
    print(f"{target.name}: {tally.cases} cases in {seconds:.0f} s ({rate:.1f} cases/s, "
          f"slowest {tally.slowest:.2f} s); failures: {len(tally.failures)} (target 0)")
    for ending, count in tally.endings.most_common(15):
        print(f"  {count:6d}  {ending}")
    kinds = Counter(broken.split(":")[0] for broken, _ in tally.failures)
    for kind, count in kinds.most_common():
        example = next(rerun for broken, rerun in tally.failures if broken.startswith(kind))
        print(f"  FAILURE x{count}: {kind}  (rerun: {example})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0, help="per target (default 3)")
    parser.add_argument("--target", choices=sorted(targets()), action="append",
                        help="run only these targets (default all)")
    parser.add_argument("--out", type=Path, help="folder for failing cases (default: a "
                                                 "new temporary folder)")
    args = parser.parse_args()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    out = args.out or Path(tempfile.mkdtemp(prefix="sectorviz-fuzz-"))
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in args.target or sorted(targets()):
        target = targets()[name]
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            tally = fuzz(target, args.minutes * 60, patterns.example_folder(Path(tmp)), out)
            report(target, tally, time.perf_counter() - start)
        failed += len(tally.failures)
    print(f"failing cases saved in {out}" if failed else "no failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
