"""The one cache: entries keyed by pattern and the stamps of the files they read; a changed
kernel source, include or values file gives new numbers for the same pattern value."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import sectorviz.engine.readings  # noqa: F401  (registers the CUDA front end)
from sectorviz.cli import main
from sectorviz.model import load_pattern
from sectorviz.model.analysis import analyzed
from sectorviz.model.files import read_text
from sectorviz.model.frontend import kernel_for
from sectorviz.model.memo import LIMITS, MEMO, Memo, recording, stamp, stamps

KERNEL = """
__global__ void copy(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[STRIDE * i];
}
"""


def write(path: Path, text: str) -> None:
    """Write `text` and move the modification time on, so that even a same-size rewrite
    within the clock's resolution is a different stamp."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def kernel_files(folder: Path, stride: int) -> Path:
    write(folder / "stride.h", f"#define STRIDE {stride}\n")
    write(folder / "copy.cu", '#include "stride.h"\n' + KERNEL)
    doc = {"format": "sectorviz.pattern/1", "name": "copy", "params": {"n": 1024},
           "launch": {"grid": ["n / 256"], "block": [256]},
           "arrays": {"in": {"dtype": "float32", "length": "32 * n"},
                      "out": {"dtype": "float32", "length": "n"}},
           "kernel": {"source": "copy.cu", "function": "copy"}}
    path = folder / "copy.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


def sectors(pattern) -> int:
    return analyzed(pattern).totals.sectors


def test_a_stamp_names_size_and_time_and_a_missing_file(tmp_path):
    f = tmp_path / "a.txt"
    assert stamp(f).size == -1
    write(f, "abc")
    s = stamp(f)
    assert (s.path, s.size) == (str(f), 3) and s.mtime_ns == f.stat().st_mtime_ns
    assert stamps([f, f, str(f)]) == (s,)


def test_an_entry_is_recomputed_when_a_file_it_read_changes(tmp_path):
    memo, f, calls = Memo(), tmp_path / "v.txt", []
    write(f, "one")

    def compute():
        calls.append(1)
        return read_text(f, "v")

    assert memo.get("k", "key", compute) == "one"
    assert memo.get("k", "key", compute) == "one" and len(calls) == 1
    write(f, "two!")
    assert memo.get("k", "key", compute) == "two!" and len(calls) == 2


def test_a_value_built_from_a_cached_one_depends_on_its_files(tmp_path):
    memo, f = Memo(), tmp_path / "v.txt"
    write(f, "one")
    inner = lambda: memo.get("inner", 0, lambda: read_text(f, "v"))  # noqa: E731
    assert memo.get("inner", 0, lambda: read_text(f, "v")) == "one"  # cached first
    assert memo.get("outer", 0, lambda: inner().upper()) == "ONE"
    write(f, "two")
    assert memo.get("outer", 0, lambda: inner().upper()) == "TWO"


def test_files_read_elsewhere_are_named_by_the_caller(tmp_path):
    memo, f, calls = Memo(), tmp_path / "ptx", []
    write(f, "x")
    compute = lambda: calls.append(1) or len(calls)  # noqa: E731
    memo.get("k", 1, compute, lambda: [f])
    memo.get("k", 1, compute, lambda: [f])
    write(f, "yy")
    assert memo.get("k", 1, compute, lambda: [f]) == 2


def test_each_kind_keeps_at_most_its_limit_and_clear_empties_all():
    memo = Memo()
    for k in range(LIMITS["kernel"] + 3):
        memo.put("kernel", k, k, ())
    assert memo.peek("kernel", 0) is None and memo.peek("kernel", LIMITS["kernel"] + 2) == \
        LIMITS["kernel"] + 2
    memo.clear()
    assert memo.peek("kernel", LIMITS["kernel"] + 2) is None


def test_recording_collects_nested_reads(tmp_path):
    f, g = tmp_path / "f", tmp_path / "g"
    write(f, "1")
    write(g, "2")
    with recording() as outer:
        read_text(f, "f")
        with recording() as inner:
            read_text(g, "g")
    assert inner == {str(g)} and outer == {str(f), str(g)}


def test_editing_an_include_gives_the_same_pattern_new_numbers(tmp_path):
    path = kernel_files(tmp_path, 1)
    pattern = load_pattern(path)
    assert sectors(pattern) == 4 * 2 * (1024 // 32)  # in and out, 4 sectors per warp each
    kernel = kernel_for(pattern)
    write(tmp_path / "stride.h", "#define STRIDE 8\n")
    again = load_pattern(path)
    assert again == pattern
    assert kernel_for(again) is not kernel
    assert sectors(again) == (32 + 4) * (1024 // 32)


def test_editing_values_gives_new_numbers(tmp_path):
    np.save(tmp_path / "idx.npy", np.arange(64, dtype=np.int64))
    doc = {"format": "sectorviz.pattern/1", "name": "gather", "launch": {"grid": [2],
           "block": [32]}, "arrays": {"idx": {"dtype": "int64", "length": 64,
                                               "values": {"kind": "file", "path": "idx.npy"}},
                                      "x": {"dtype": "float32", "length": 64 * 32}},
           "accesses": [{"array": "x", "op": "load", "index": "idx[i]"}],
           "let": {"i": "blockIdx.x * 32 + threadIdx.x"}}
    path = tmp_path / "g.sectorviz.json"
    path.write_text(json.dumps(doc))
    pattern = load_pattern(path)
    assert sectors(pattern) == 2 * 4
    np.save(tmp_path / "idx.npy", np.arange(64, dtype=np.int64) * 32)
    os.utime(tmp_path / "idx.npy", ns=(1, 1))
    assert sectors(load_pattern(path)) == 2 * 32


def test_report_in_one_process_follows_an_edited_kernel(tmp_path, capsys):
    path = kernel_files(tmp_path, 1)
    MEMO.clear()
    assert main(["report", str(path), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)["totals"]["sectors"]
    write(tmp_path / "copy.cu", '#include "stride.h"\n' + KERNEL.replace("STRIDE * i", "2 * i"))
    assert main(["report", str(path), "--json"]) == 0
    second = json.loads(capsys.readouterr().out)["totals"]["sectors"]
    assert (first, second) == (8 * 32, (8 + 4) * 32)


@pytest.fixture(autouse=True)
def _fresh_cache():
    MEMO.clear()
    yield
    MEMO.clear()


def test_the_two_engines_of_one_pattern_never_share_an_entry(tmp_path, monkeypatch):
    """SECTORVIZ_ENGINE is not in the pattern's value: the cache keys by its reading too."""
    from sectorviz.model.frontend import reading_of
    path = kernel_files(tmp_path, 1)
    pattern = load_pattern(path)
    source = analyzed(pattern)
    monkeypatch.setenv("SECTORVIZ_ENGINE", "compiled")
    if reading_of(pattern).engine != "compiled":
        pytest.skip("no CUDA compiler here")
    compiled = analyzed(pattern)
    assert compiled is not source
    # both readings are compiles: -O3 loads `in` as global memory (cvta.to.global), the
    # debug compile (-G) through its generic address
    assert (compiled.instructions[0].ptx, source.instructions[0].ptx) == ("ld.global.f32",
                                                                           "ld.f32")
    assert compiled.totals.sectors == source.totals.sectors
