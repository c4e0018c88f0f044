"""Freeze the source engine's ("as written") numbers as golden data (issue 29, Correctness):
per memory instruction (name, op, array, file, line) the requests, active lanes, sectors
(global, local) and wavefronts (shared) of every CUDA example and every CUDA kernel the
tests read, at the pattern's own sizes, into tests/engine/golden/*.json.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/freeze_golden.py record TESTS...  # slow
    PYTHONPATH=$PWD .venv/bin/python benchmarks/freeze_golden.py freeze

`record` runs pytest over TESTS (default RECORD_TESTS) with this file as a plugin
(`-p freeze_golden`): every kernel pattern a front end loads outside a hypothesis example is
written to RECORDED (JSON lines), a source file outside the repository inlined as `code`.
`freeze` reads the examples and RECORDED and writes what the source engine counts for each
pattern it counts within 1 / FREEZE_SHARE of the default work budget (the rest are listed on
stdout with why, not frozen: refusals, and the work budget's own tests).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this tree's sectorviz and oracles
GOLDEN = ROOT / "tests" / "engine" / "golden"
RECORDED = Path(os.environ.get("SECTORVIZ_GOLDEN_RECORD", "/tmp/sectorviz-golden-record.jsonl"))
FREEZE_SHARE = 8  # a pattern needing more than this share of the default budget: not frozen
RECORD_TESTS = ("tests/cuda", "tests/model/ptx/test_compiler_transformations.py",
                "tests/model/test_compiler_changes.py")  # the tests that write CUDA kernels
GENERATED = ("benchmarks/freeze_golden.py: the source engine, sectorviz/cuda as of commit "
             "{commit}, on the kernels of the examples and of {tests}; regenerate with "
             "`record` then `freeze`")


def _record(pattern) -> None:
    """Append a kernel pattern's document and folder to RECORDED (not inside hypothesis)."""
    from hypothesis.control import currently_in_test_context
    if currently_in_test_context() or pattern.kernel is None or "ptx" in pattern.kernel:
        return
    doc, base = pattern.to_dict(), Path(pattern.base_dir).resolve()
    doc["kernel"].pop("engine", None)
    if not base.is_relative_to(ROOT):
        if "source" in doc["kernel"]:
            source = base / doc["kernel"].pop("source")
            if not source.is_file():
                return
            doc["kernel"]["code"] = source.read_text()
        base = ROOT
    with RECORDED.open("a", encoding="utf-8") as out:
        out.write(json.dumps({"pattern": doc, "base": str(base.relative_to(ROOT))}) + "\n")


def pytest_configure(config) -> None:
    """As a pytest plugin: record every kernel pattern either engine's front end opens."""
    from sectorviz.cuda.kernel import CudaKernel
    from sectorviz.model.ptx.kernel import CompiledKernel
    for cls in (CudaKernel, CompiledKernel):
        def recording(self, pattern, *args, _init=cls.__init__, **kw):
            _init(self, pattern, *args, **kw)
            _record(pattern)
        cls.__init__ = recording  # type: ignore[method-assign]


def source_reading(doc: dict, base: str) -> tuple[list[dict], str | None]:
    """A kernel pattern document read by the source engine -> (figures, None), or ([], why
    not)."""
    from oracles import frozen_figures

    from sectorviz.model import analyze, pattern_from_dict
    from sectorviz.model.budget import Budget, default_work
    from sectorviz.model.errors import PatternError
    from sectorviz.model.memo import MEMO
    MEMO.clear()
    doc = {**doc, "kernel": {**doc["kernel"], "engine": "source"}}
    try:
        analysis = analyze(pattern_from_dict(doc, ROOT / base),
                           budget=Budget(work=default_work() // FREEZE_SHARE))
    except PatternError as err:
        return [], f"refused: {err}"
    return frozen_figures(analysis), None


def example_docs() -> list[tuple[str, dict, str]]:
    """(id, document, folder) of every example that names a CUDA kernel."""
    found = []
    for path in sorted((ROOT / "resources" / "examples").glob("*.sectorviz.json")):
        doc = json.loads(path.read_text())
        if "kernel" in doc:
            found.append((path.name, doc, "resources/examples"))
    return found


def recorded_docs() -> list[tuple[str, dict, str]]:
    """(id, document, folder) of every distinct recorded test kernel pattern, in order."""
    seen: dict[str, tuple[dict, str]] = {}
    for line in RECORDED.read_text().splitlines():
        item = json.loads(line)
        key = json.dumps(item, sort_keys=True)
        seen.setdefault(key, (item["pattern"], item["base"]))
    return [(f"test-{i:04d}", doc, base) for i, (doc, base) in enumerate(seen.values())]


def freeze() -> None:
    """Write GOLDEN/examples.json and GOLDEN/test_kernels.json."""
    commit = subprocess.run(["git", "log", "-1", "--format=%h", "--", "sectorviz/cuda"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name, docs, inline in (("examples.json", example_docs(), False),
                               ("test_kernels.json", recorded_docs(), True)):
        entries = []
        for ident, doc, base in docs:
            figures, why = source_reading(doc, base)
            if why:
                print(f"{ident}: not frozen, {why.splitlines()[0][:200]}")
                continue
            entry = {"id": ident, "base": base, "instructions": figures}
            entry.update({"pattern": doc} if inline else {"example": ident})
            entries.append(entry)
        (GOLDEN / name).write_text(json.dumps(
            {"generated_by": GENERATED.format(commit=commit, tests=", ".join(RECORD_TESTS)),
             "patterns": entries},
            indent=1) + "\n")
        print(f"{name}: {len(entries)} of {len(docs)} patterns frozen")


def record(tests: list[str]) -> None:
    """Run pytest over `tests` with this file as a plugin, appending to RECORDED."""
    RECORDED.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'benchmarks'}{os.pathsep}{ROOT}",
           "SECTORVIZ_GOLDEN_RECORD": str(RECORDED)}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "-p", "freeze_golden", *tests], cwd=ROOT, env=env, check=False)


if __name__ == "__main__":
    if sys.argv[1:2] == ["record"]:
        record(sys.argv[2:] or list(RECORD_TESTS))
    elif sys.argv[1:2] == ["freeze"]:
        freeze()
    else:
        sys.exit(__doc__)
