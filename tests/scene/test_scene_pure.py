"""Scenes are pure functions of the model's values (a Listing, an Analysis, one warp's
details) and a view spec: nothing in sectorviz/scene resolves a kernel, runs the interpreter
or an analysis, loads a pattern or reads a file (issue 19's "no scene imports the interpreter
or reads a file"; the import side is pyproject's `scene-pure` contract)."""

import re
from pathlib import Path

SCENE = Path(__file__).resolve().parents[2] / "sectorviz" / "scene"
CALLS = {
    "kernel_for": r"\bkernel_for\b",
    ".events(": r"\.events\(",
    "analyze(": r"\banaly[sz]ed?\(",
    "load_pattern": r"\bload_pattern\b",
    "open(": r"\bopen\(",
    "read_": r"\bread_\w*",
}


def test_no_scene_runs_the_model_or_reads_a_file():
    sources = sorted(SCENE.glob("*.py"))
    assert len(sources) > 10  # the scenes are there to be read
    found = [f"{path.name}:{n}: {word}" for path in sources
             for n, line in enumerate(path.read_text().splitlines(), 1)
             for word, pattern in CALLS.items() if re.search(pattern, line)]
    assert found == []


def test_the_patterns_find_what_they_forbid():
    """The patterns are not vacuous: each matches the call it names."""
    lines = {"kernel_for": "k = kernel_for(p)", ".events(": "kernel.events(0, 1)",
             "analyze(": "a = analyzed(p, per_warp=True)", "load_pattern": "load_pattern(f)",
             "open(": "with open(path) as f:", "read_": "files.read_bytes(path)"}
    assert all(re.search(CALLS[word], line) for word, line in lines.items())
