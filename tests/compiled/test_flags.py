"""The compile's flags: the whitelist a pattern's `kernel.flags` must keep to."""

import pytest

from sectorviz.compiled.flags import check_arch, user_flags
from sectorviz.model import PatternError
from sectorviz.model.files import pattern_roots


@pytest.mark.parametrize("flag", ["-DTILE=16", "-DFAST", "-UNDEBUG", "-std=c++17",
                                  "--use_fast_math", "-maxrregcount=64"])
def test_whitelisted_flags_pass_unchanged(tmp_path, flag):
    assert user_flags([flag], tmp_path, pattern_roots(tmp_path)) == (flag,)


@pytest.mark.parametrize("flag", ["-ccbin=/tmp/evil", "--run", "-Xcompiler=-fplugin=x.so",
                                  "-Xptxas=-v", "-o", "/tmp/out", "--compiler-bindir", "-E",
                                  "-DX\nY", "-include=/etc/passwd", "--output-file=x"])
def test_other_flags_are_refused_in_one_line(tmp_path, flag):
    with pytest.raises(PatternError) as err:
        user_flags(["-DOK", flag], tmp_path, pattern_roots(tmp_path))
    assert err.value.place == "kernel.flags[1]"
    assert "\n" not in str(err.value) and "not allowed" in str(err.value)


def test_include_folders_resolve_inside_the_root_only(tmp_path):
    (tmp_path / "inc").mkdir()
    assert user_flags(["-Iinc"], tmp_path, pattern_roots(tmp_path)) == (f"-I{tmp_path / 'inc'}",)
    for outside in ("-I..", "-I/usr/include", "-Iinc/../.."):
        with pytest.raises(PatternError, match="lies outside the pattern's root"):
            user_flags([outside], tmp_path, pattern_roots(tmp_path))
    with pytest.raises(PatternError, match="no such folder"):
        user_flags(["-Imissing"], tmp_path, pattern_roots(tmp_path))


def test_register_counts_are_bounded(tmp_path):
    with pytest.raises(PatternError, match="16 to 255"):
        user_flags(["-maxrregcount=4"], tmp_path, pattern_roots(tmp_path))


@pytest.mark.parametrize("arch, ok", [("sm_90", True), ("sm_90a", True), ("sm_100f", True),
                                      ("sm_8", False), ("compute_90 -o x", False), (90, False)])
def test_architectures(arch, ok):
    if ok:
        assert check_arch(arch, "kernel.arch") == arch
    else:
        with pytest.raises(PatternError, match="not an architecture"):
            check_arch(arch, "kernel.arch")
