"""Issue 22, item 1: a CUDA pattern's kernel source and #includes are read only inside its
root (its folder, or the repository holding it) and the --include-dirs the user names; a
path that leaves them is refused in one line that quotes nothing from it, and so is
`__has_include` of it, whether or not the file exists (the compile step's include policy,
sectorviz/engine/compiled/includes.py, checks every lookup before nvcc runs)."""

from __future__ import annotations

import json

import pytest

from sectorviz.cli import main
from sectorviz.model.memo import MEMO

SECRET = "root:x:0:0:SECRET-LINE"
KERNEL = "__global__ void k(float *a) {{ a[threadIdx.x * {step}] = 0; }}\n"


def layout(tmp_path, source: str, folder: str = "proj"):
    """A pattern in tmp_path/folder whose kernel `source` is k.cu there; a secret file in
    tmp_path/outside. -> the pattern's path."""
    (tmp_path / "outside").mkdir(exist_ok=True)
    (tmp_path / "outside" / "secret.h").write_text(SECRET + "\n")
    home = tmp_path / folder
    home.mkdir(parents=True, exist_ok=True)
    (home / "k.cu").write_text(source)
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"length": 4096}}, "kernel": {"source": "k.cu", "function": "k"}}
    path = home / "k.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


def report(capsys, *argv):
    code = main(["report", *map(str, argv), "--json"])
    out, err = capsys.readouterr()
    return code, out, err


def refused(code, out, err, path, line, typed, what="an #include of"):
    """The refusal is one line: the pattern, the .cu holding the lookup and its line, the
    name as typed, and nothing read from the file."""
    assert code == 2 and not out and err == (f"{path}: k.cu line {line}: {what} {typed!r}, "
                                             "outside the pattern's root; refused\n"), err
    assert "SECRET" not in err and "root:x" not in err


@pytest.mark.parametrize("typed", ["/etc/passwd", "../outside/secret.h",
                                   "../../../../../../../../etc/hostname"])
def test_an_include_that_leaves_the_root_is_refused_unread(tmp_path, capsys, typed):
    path = layout(tmp_path, f'\n#include "{typed}"\n' + KERNEL.format(step=1))
    refused(*report(capsys, path), path, 2, typed)


def test_a_link_out_of_the_root_is_refused(tmp_path, capsys):
    path = layout(tmp_path, '#include "inc.h"\n' + KERNEL.format(step=1))
    (path.parent / "inc.h").symlink_to(tmp_path / "outside" / "secret.h")
    refused(*report(capsys, path), path, 1, "inc.h")


def test_has_include_of_an_outside_file_is_refused_whether_or_not_it_exists(tmp_path, capsys):
    """The answer (a refusal, the same line) cannot tell whether the outside file exists."""
    source = ('#if __has_include("../outside/secret.h")\n#define STEP 2\n#else\n'
              '#define STEP 1\n#endif\n' + KERNEL.format(step="STEP"))
    path = layout(tmp_path, source)
    with_secret = report(capsys, path)
    refused(*with_secret, path, 1, "../outside/secret.h", "__has_include of")
    (tmp_path / "outside" / "secret.h").unlink()
    MEMO.clear()
    assert report(capsys, path) == with_secret


def test_a_kernel_source_outside_the_root_is_refused(tmp_path, capsys):
    path = layout(tmp_path, KERNEL.format(step=1))
    doc = json.loads(path.read_text())
    doc["kernel"]["source"] = "../outside/secret.h"
    path.write_text(json.dumps(doc))
    code, out, err = report(capsys, path)
    assert code == 2 and not out and err == (f"{path}: kernel.source: '../outside/secret.h' lies "
                                             f"outside the pattern's root {path.parent} (only "
                                             "files there or in an --include-dir are read)\n")


def test_the_repository_holding_the_pattern_is_its_root(tmp_path, capsys):
    """A pattern in repo/kernels/ may include repo/common/idx.h: repo holds `.git`."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "common").mkdir()
    (tmp_path / "repo" / "common" / "idx.h").write_text("#define STEP 8\n")
    path = layout(tmp_path, '#include "../common/idx.h"\n' + KERNEL.format(step="STEP"),
                  folder="repo/kernels")
    code, out, err = report(capsys, path)
    assert code == 0 and json.loads(out)["totals"]["sectors"] == 32, err
    (tmp_path / "repo" / ".git").rmdir()  # no repository: the folder alone is the root
    MEMO.clear()  # the same pattern: its kernel is cached
    refused(*report(capsys, path), path, 1, "../common/idx.h")


def test_an_include_dir_is_searched_last_and_may_be_read(tmp_path, capsys):
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "idx.h").write_text("#define STEP 2\n")
    path = layout(tmp_path, '#include "idx.h"\n' + KERNEL.format(step="STEP"))
    code, out, err = report(capsys, path)
    # nvcc's first message, at the quoted name (`#include "idx.h"`: column 10)
    assert code == 2 and not out and err == (f"{path}: k.cu line 1, column 10: idx.h: No such "
                                             "file or directory\n"), err
    code, out, err = report(capsys, path, "--include-dir", lib)
    assert code == 0 and json.loads(out)["totals"]["sectors"] == 8, err
    (path.parent / "idx.h").write_text("#define STEP 1\n")  # the pattern's folder comes first
    MEMO.clear()
    code, out, err = report(capsys, path, "--include-dir", lib)
    assert code == 0 and json.loads(out)["totals"]["sectors"] == 4, err


def test_an_include_dir_that_is_no_folder_is_one_line(tmp_path, capsys):
    path = layout(tmp_path, KERNEL.format(step=1))
    code, out, err = report(capsys, path, "--include-dir", tmp_path / "nope")
    assert code == 2 and not out and err == ("sectorviz report: argument --include-dir: "
                                             f"{tmp_path / 'nope'} is not a folder\n")
