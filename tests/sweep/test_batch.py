"""`sectorviz batch`: one table of many files, per instruction or per file, JSON lines,
errors as rows."""

import csv
import io
import json
import os

import pytest

from sectorviz.cli import main
from sectorviz.paths import examples_dir

VECTOR_ADD = str(examples_dir() / "vector-add.sectorviz.json")  # 32,768 warps, 4 sectors each
TILED = str(examples_dir() / "transpose-tiled.sectorviz.json")  # 2 global, 2 shared


@pytest.fixture
def broken(tmp_path):
    path = tmp_path / "broken.sectorviz.json"
    path.write_text('{"format": "sectorviz.pattern/1"}')
    return str(path)


def batch(capsys, *argv):
    status = main(["batch", *argv, "--jobs", "1", "--quiet"])
    return status, capsys.readouterr().out


def test_json_lines_are_each_files_report_or_error(capsys, tmp_path, broken):
    out = tmp_path / "all.jsonl"
    status, _ = batch(capsys, VECTOR_ADD, broken, "--jsonl", str(out))
    assert status == 2  # a file failed: bad input, after every file is written
    first, second = (json.loads(line) for line in out.read_text().splitlines())
    assert main(["report", VECTOR_ADD, "--json", "--quiet"]) == 0
    assert first == {"file": VECTOR_ADD, "report": json.loads(capsys.readouterr().out)}
    assert second == {"file": broken, "error": "pattern: missing key 'launch'"}


def test_one_row_per_instruction_global_and_shared(capsys):
    status, out = batch(capsys, VECTOR_ADD, TILED, "--csv", "-")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert status == 0
    assert [(r["file"], r["instruction"], r["kind"]) for r in rows] == [
        (VECTOR_ADD, "load a[i]", "global"), (VECTOR_ADD, "load b[i]", "global"),
        (VECTOR_ADD, "store c[i]", "global"), (TILED, "load a[row][col]", "global"),
        (TILED, "store c[out_row][out_col]", "global"), (TILED, "store tile[ty][tx]", "shared"),
        (TILED, "load tile[tx][ty]", "shared")]
    assert [r["sectors"] for r in rows] == ["131072"] * 5 + [""] * 2
    assert [r["wavefronts"] for r in rows] == [""] * 5 + ["32768"] * 2


def test_one_row_per_file_with_an_error_row(capsys, broken):
    status, out = batch(capsys, VECTOR_ADD, broken, "--per", "file", "--csv", "-")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert status == 2
    assert (rows[0]["file"], rows[0]["error"], rows[0]["totals.sectors"]) == (
        VECTOR_ADD, "", str(3 * 131072))
    assert rows[0]["warps"] == "32768" and "load a[i].sectors" not in rows[0]
    assert (rows[1]["file"], rows[1]["error"], rows[1]["totals.sectors"]) == (
        broken, "pattern: missing key 'launch'", "")


def test_the_printed_table_is_short_one_row_per_file(capsys, broken):
    naive = str(examples_dir() / "transpose-naive-cuda.sectorviz.json")
    shared = str(examples_dir() / "shared-wide.sectorviz.json")
    status, out = batch(capsys, VECTOR_ADD, naive, shared, broken)
    width = max(len(f) for f in (VECTOR_ADD, naive, shared, broken))
    head = f"{'file':{width}}  "
    assert status == 2
    # the worst instruction column is as wide as its longest cell, the naive transpose's
    # store: 'line 16: c[col * m + row], st.f32' (33 characters; as written its PTX op with
    # generic addresses), so 'worst instruction' (17) takes 16 spaces more and 2 between
    # columns, 'load v2[2 * tid]' (16) 17 more, 2, and conflicts' '16' right-aligned in 9;
    # the error column starts after 69 + 33 + 2 + 9 + 2 = 115 characters (file column cut)
    assert [line[len(head):] for line in out.splitlines()] == [
        "kernel                          sectors    ideal  x ideal  useful %  worst instruction"
        + " " * 18 + "conflicts  error",
        "Vector add                      393,216  393,216        1       100  none",
        "Naive transpose (CUDA)        1,179,648  262,144      4.5     22.22  line 16: c[col * m + "
        "row], st.f32",
        "Shared 8- and…-byte accesses        128      128        1       100  load v2[2 * tid]"
        + " " * 26 + "16",
        " " * 115 + "pattern: missing key 'launch'"]
    assert [line[:len(head)].rstrip() for line in out.splitlines()] == [
        "file", VECTOR_ADD, naive, shared, broken]


def test_the_wide_table(capsys, broken):
    status, out = batch(capsys, VECTOR_ADD, broken, "--per", "file", "--wide")
    header, ok, bad = out.splitlines()
    assert header.split()[:3] == ["file", "error", "sector_size"]
    assert ok.split()[:3] == [VECTOR_ADD, "32", "32,768"]
    assert bad.split(maxsplit=1) == [broken, "pattern: missing key 'launch'"]


def test_the_pool_gives_what_one_process_gives(capsys):
    files = [VECTOR_ADD, TILED]
    assert main(["batch", *files, "--jsonl", "-", "--jobs", "2", "--quiet"]) == 0
    pooled = capsys.readouterr().out
    assert batch(capsys, *files, "--jsonl", "-") == (0, pooled)


def test_every_file_it_cannot_read_is_one_line_on_stderr_too(capsys, tmp_path):
    os.mkfifo(tmp_path / "pipe.json")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    unreadable = [str(tmp_path / "pipe.json"), os.devnull, "/proc/self/status",
                  str(tmp_path), str(tmp_path / "loop")]
    status = main(["batch", *unreadable, VECTOR_ADD, "--per", "file", "--jobs", "1", "--quiet"])
    out, err = capsys.readouterr()
    assert status == 2
    lines = err.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == unreadable
    assert all(line.split(": ", 1)[1] in out for line in lines)  # beside its error row
