"""Issue 22, item 1: files.Roots, the one rule for what a pattern may read (its kernel
source, includes and `.npy` values files): inside its root or an include folder."""

from __future__ import annotations

import numpy as np
import pytest

from sectorviz.model import PatternError
from sectorviz.model.files import pattern_roots, read_text, root_of
from sectorviz.model.kernel import _values_file


def test_the_root_is_the_folder_or_the_repository_above_it(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert root_of(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    (tmp_path / "a" / ".git").write_text("gitdir: elsewhere\n")  # a worktree's .git file
    assert root_of(tmp_path / "a" / "b") == tmp_path / "a"


@pytest.mark.parametrize("typed, inside", [
    ("x.npy", True), ("sub/../x.npy", True), ("../x.npy", False), ("/etc/passwd", False),
    ("../inc/x.npy", True), ("../inc/../x.npy", False)])
def test_paths_inside_the_root_or_an_include_folder_are_allowed(tmp_path, typed, inside):
    (tmp_path / "p").mkdir()
    (tmp_path / "inc").mkdir()
    roots = pattern_roots(tmp_path / "p", (str(tmp_path / "inc"),))
    assert roots.allows(tmp_path / "p" / typed) == inside
    if inside:
        assert roots.resolve(typed, "here") == tmp_path / "p" / typed
    else:
        with pytest.raises(PatternError, match=f"^here: {typed} lies outside the pattern's "
                                               f"root {tmp_path / 'p'}"):
            roots.resolve(typed, "here")


def test_a_values_file_in_an_include_folder_is_read(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "data").mkdir()
    np.save(tmp_path / "data" / "idx.npy", np.arange(64))
    with pytest.raises(PatternError, match="outside the pattern's root"):
        pattern_roots(tmp_path / "p").resolve("../data/idx.npy", "here")
    path = pattern_roots(tmp_path / "p", (str(tmp_path / "data"),)).resolve(
        "../data/idx.npy", "here")
    assert _values_file(path, 64, "here").tolist() == list(range(64))


def test_a_link_swapped_in_after_the_check_is_refused_when_opened(tmp_path):
    """The path passes Roots.resolve, then becomes a link out before it is read: the file
    actually opened is checked too, and nothing of it is returned or quoted."""
    (tmp_path / "p").mkdir()
    (tmp_path / "secret.cu").write_text("SECRET")
    roots = pattern_roots(tmp_path / "p")
    (tmp_path / "p" / "k.cu").write_text("fine")
    path = roots.resolve("k.cu", "kernel.source")
    (tmp_path / "p" / "k.cu").unlink()
    (tmp_path / "p" / "k.cu").symlink_to(tmp_path / "secret.cu")
    with pytest.raises(PatternError, match="^kernel.source: .*k.cu lies outside the pattern's "
                                           "root") as info:
        read_text(path, "kernel.source", roots=roots)
    assert "SECRET" not in str(info.value)
    assert read_text(path, "kernel.source") == "SECRET"  # without roots: read as named
