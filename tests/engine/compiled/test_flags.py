"""The compile's flags: the whitelist a pattern's `kernel.flags` must keep to; macros become
lines of a generated header, never command-line text."""

import pytest

from sectorviz.engine.compiled.flags import CompileFlags, check_arch, user_flags
from sectorviz.model import PatternError
from sectorviz.model.files import pattern_roots


@pytest.mark.parametrize("flag", ["-DTILE=16", "-DFAST", "-UNDEBUG", "-std=c++17",
                                  "--use_fast_math", "-maxrregcount=64"])
def test_whitelisted_flags_are_described_as_given(tmp_path, flag):
    assert user_flags([flag], tmp_path, pattern_roots(tmp_path)).described == (flag,)


def test_macros_become_header_lines_in_order_and_never_options(tmp_path):
    flags = user_flags(["-DTILE=16", "-DX=$(touch /tmp/pwned)", "-UNDEBUG", "-DFAST",
                        "-DA=1,B=`id`", "-DE="], tmp_path, pattern_roots(tmp_path))
    assert flags.options == () and flags.include_dirs == ()
    assert flags.header == ("#define TILE 16\n#define X $(touch /tmp/pwned)\n#undef NDEBUG\n"
                            "#define FAST 1\n#define A 1,B=`id`\n#define E \n")


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\x00b", "a\x1bb", "a\u2028b", "end\\",
                                   "open /* comment", "/* a */ b /* c"])
def test_a_macro_value_is_one_clean_line(tmp_path, value):
    with pytest.raises(PatternError) as err:
        user_flags([f"-DV={value}"], tmp_path, pattern_roots(tmp_path))
    assert err.value.place == "kernel.flags[0]" and "\n" not in str(err.value)


def test_flags_add_up_in_order():
    a = CompileFlags(("-O3",), ("/a",), ("#define A 1",))
    b = CompileFlags(("-std=c++17",), ("/b",), ("#undef A",))
    assert (a + b).described == ("-O3", "-std=c++17", "-DA", "-UA", "-I/a", "-I/b")


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
    assert user_flags(["-Iinc"], tmp_path, pattern_roots(tmp_path)).include_dirs == \
        (str(tmp_path / "inc"),)
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


@pytest.mark.parametrize("name", ["inc,", "a b", "d$x", "q'uote", 'q"uote', "b`t`", "semi;"])
def test_an_include_folder_a_shell_or_nvcc_would_split_is_refused(tmp_path, name):
    (tmp_path / name).mkdir()
    with pytest.raises(PatternError) as err:
        user_flags([f"-I{name}"], tmp_path, pattern_roots(tmp_path))
    assert err.value.place == "kernel.flags[0]"
    assert "nvcc or a shell splits or expands" in str(err.value)
