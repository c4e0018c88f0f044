"""Issue 22, item 2: one warp's per-lane listing (`report --warp N`) is bounded: a warp that
runs more executions than it lists is one line, before any record is made."""

from __future__ import annotations

import json

from sectorviz.cli import main
from sectorviz.model import detail


def looped(folder, trips):
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"dtype": "float32", "length": 32 * trips}},
           "accesses": [{"name": "l", "op": "load", "array": "a", "index": "threadIdx.x + 32 * j",
                         "loops": [{"var": "j", "start": 0, "stop": trips}]}]}
    path = folder / "p.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_long_listing_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(detail, "MAX_LISTED_EXECUTIONS", 16)
    path = looped(tmp_path, 17)
    for extra in ([], ["--json"]):
        assert main(["report", str(path), "--warp", "0", *extra]) == 2
        out, err = capsys.readouterr()
        assert not out and err == (f"{path}: --warp: warp 0 runs 17 executions of accesses; "
                                   "its per-lane detail lists at most 16 (512 lanes); the "
                                   "report without --warp gives the sums\n")
    assert main(["report", str(path), "--json"]) == 0  # the sums need no listing
    capsys.readouterr()


def test_a_listing_within_the_bound_is_whole(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(detail, "MAX_LISTED_EXECUTIONS", 16)
    assert main(["report", str(looped(tmp_path, 16)), "--warp", "0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["warp"]["instructions"][0]["executions"]) == 16
