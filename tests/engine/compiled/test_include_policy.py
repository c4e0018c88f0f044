"""Issue 28, item 2: one include policy for both compilers. Whatever way an include or a
`__has_include` is spelled (a digraph, a comment between `#` and `include`, a line splice, a
trigraph, a macro, token pasting, a link inside the root), a lookup that would leave the
root is refused, and the answer is the same whether or not the file outside exists."""

import os

import pytest
from compiled_helpers import SAXPY, needs_nvcc, write_pattern

from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.engine.compiled.includes import IncludePolicy
from sectorviz.engine.compiled.pptokens import tokens
from sectorviz.model import PatternError
from sectorviz.model.files import pattern_roots

SECRET = "SECRET-0xC0FFEE"

ESCAPES = {
    "digraph": '%:include "../outside/secret.h"\n',
    "comment": '#/* a comment */include "../outside/secret.h"\n',
    "splice": '#inc\\\nlude "../outside/secret.h"\n',
    "splice in the name": '#include "../outs\\\nide/secret.h"\n',
    "trigraph": '??=include "../outside/secret.h"\n',
    "absolute": '#include "{outside}/secret.h"\n',
    "angled absolute": "#include <{outside}/secret.h>\n",
    "include_next": '#include_next "../outside/secret.h"\n',
    "link": '#include "link/secret.h"\n',
    "has_include": '#if __has_include("../outside/secret.h")\n#endif\n',
    "has_include angled": "#if __has_include(<{outside}/secret.h>)\n#endif\n",
    "has_include macro": '#define P "../outside/secret.h"\n#if __has_include(P)\n#endif\n',
    "has_include splice": '#if __has_\\\ninclude("../outside/secret.h")\n#endif\n',
    "has_include link": '#if __has_include("link/secret.h")\n#endif\n',
    "has_include pasted": ('#define CAT(a, b) a##b\n'
                           '#if CAT(__has_, include)("../outside/secret.h")\n#endif\n'),
    "has_include_next": '#if __has_include_next("../outside/secret.h")\n#endif\n',
    "pragma dependency": '#pragma GCC dependency "../outside/secret.h"\n',
    "_Pragma dependency": '_Pragma("GCC dependency \\"../outside/secret.h\\"")\n',
    "pragma dependency stringified": ('#define S(x) #x\n'
                                      '_Pragma(S(GCC dependency "../outside/secret.h"))\n'),
}


def _layout(tmp_path, exists: bool):
    """A root `p` with a link `p/link` to a folder `outside` beside it, which holds secret.h
    when `exists` -> (root, outside)."""
    root, outside = tmp_path / "p", tmp_path / "outside"
    root.mkdir(parents=True)
    outside.mkdir()
    (root / "link").symlink_to(outside)
    if exists:
        (outside / "secret.h").write_text(f"#error {SECRET}\n")
    return root, outside


def _policy_error(root, text) -> str:
    policy = IncludePolicy(pattern_roots(root), [], [], macro_includes=False)
    with pytest.raises(PatternError) as err:
        policy.check_source(text, root, "kernel.cu")
    return str(err.value)


@pytest.mark.parametrize("case", sorted(ESCAPES))
def test_every_spelling_of_a_lookup_outside_is_refused_alike(tmp_path, case):
    said = []
    for exists in (True, False):
        root, outside = _layout(tmp_path / str(exists), exists)
        text = ESCAPES[case].format(outside=outside)
        said.append(_policy_error(root, text).replace(str(outside), "OUTSIDE"))
    assert said[0] == said[1]  # nothing tells whether the file exists
    assert said[0].startswith("kernel.cu line ") and SECRET not in said[0]
    assert "\n" not in said[0]


def test_an_include_of_the_root_is_checked_in_turn(tmp_path):
    root, _ = _layout(tmp_path, True)
    (root / "inc").mkdir()
    (root / "inc" / "a.h").write_text('#define A 1\n%:include "../../outside/secret.h"\n')
    message = _policy_error(root, '#include "inc/a.h"\n')
    assert message == ("a.h line 2: an #include of '../../outside/secret.h', outside the "
                       "pattern's root; refused")


def test_a_fifo_or_device_include_is_refused_before_any_compiler_opens_it(tmp_path):
    root, _ = _layout(tmp_path, False)
    os.mkfifo(root / "fifo.h")
    (root / "zero.h").symlink_to("/dev/zero")
    assert "not a regular file" in _policy_error(root, '#include "fifo.h"\n')
    assert "outside the pattern's root" in _policy_error(root, '#include "zero.h"\n')


def test_lookups_inside_the_root_are_recorded_found_or_not(tmp_path):
    root, _ = _layout(tmp_path, False)
    (root / "there.h").write_text("#define T 1\n")
    policy = IncludePolicy(pattern_roots(root), [], [], macro_includes=False)
    scan = policy.check_source('#include "there.h"\n#if __has_include("opt.h")\n#endif\n',
                               root, "kernel.cu")
    assert scan.files == [str(root / "there.h")]
    assert scan.lookups == {str(root / "there.h"): True, str(root / "opt.h"): False}


def test_ordinary_code_passes(tmp_path):
    root, _ = _layout(tmp_path, False)
    text = ('#include <cuda_fp16.h>\n#include "missing_but_maybe_a_system_header.h"\n'
            '#define CAT(a, b) a##b\nint CAT(x, 1) = sizeof("__has_include");\n'
            '// #include "/etc/passwd"\n/* __has_include("/etc") */ int dependency_count;\n'
            'const char *s = R"(#include "/etc/passwd")";\n')
    policy = IncludePolicy(pattern_roots(root), [], [], macro_includes=False)
    assert policy.check_source(text, root, "kernel.cu").files == []


def test_a_paste_that_starts_with_a_fixed_name_passes(tmp_path):
    """LeetCUDA's kernels name their instantiations `block_all_reduce_sum_##T##_##U##_kernel`:
    the pasted name starts with `block_all_reduce_sum_`, so the `_` in it cannot make a
    __has_include (a multi-line macro, an object-like one and a number start alike)."""
    root, _ = _layout(tmp_path, False)
    text = ('#define NAME(packed_type, acc_type) \\\n'
            '  block_all_reduce_sum_##packed_type##_##acc_type##_kernel\n'
            '#define OBJECT fixed##_##__has_\n#define NUMBER(x) 1##_##x\n')
    policy = IncludePolicy(pattern_roots(root), [], [], macro_includes=False)
    assert policy.check_source(text, root, "kernel.cu").files == []


@pytest.mark.parametrize("text, piece", [
    ("#define CAT(a, b) a##b##__has_\n", "__has_"),
    ("#define CAT(b) __h##b\n", "__h"),  # the piece comes first
])
def test_a_piece_that_may_start_a_pasted_name_is_still_refused(tmp_path, text, piece):
    root, _ = _layout(tmp_path, False)
    assert _policy_error(root, text) == (f"kernel.cu line 1: the identifier {piece!r} could be "
                                         "pasted into __has_include; rename it")


@pytest.mark.parametrize("text", [
    "#define CAT(a, b) a##_##b\nint _has_include;\n",  # a empty: _ ## _has_include
    "#define CAT(b) __##b\nint has_include;\n",
    "#define CAT(...) __VA_ARGS__##_##x\nint h, as_include;\n",  # _ _ h as_include
    "#define CAT _##_has_include\n",
    "int _ = 0;\nint has_, include;\n",  # outside a #define: a macro's argument, maybe
    "#define F(_, b) b\nint has, include;\n",  # a parameter named like a piece
    "int _;\nint has_embed;\n",
])
def test_an_underscore_is_refused_where_the_texts_could_spell_a_has_include(tmp_path, text):
    root, _ = _layout(tmp_path, False)
    name = "__has_embed" if "embed" in text else "__has_include"
    assert _policy_error(root, text) == ("kernel.cu line 1: the identifier '_' could be pasted "
                                         f"with others of the source into {name}; rename it")


def test_an_underscore_is_refused_where_an_included_file_holds_what_could_follow_it(tmp_path):
    root, _ = _layout(tmp_path, False)
    (root / "pieces.h").write_text("#define TAIL has_include\n")
    assert _policy_error(root, '#include "pieces.h"\n#define CAT(a, b) a##b\nint _;\n') == (
        "kernel.cu line 3: the identifier '_' could be pasted with others of the source into "
        "__has_include; rename it")


def test_cutes_underscore_placeholder_passes_alone(tmp_path):
    """CuTe writes `_` for "all of this mode" (`local_tile(A, tiler, make_coord(_, 0))`);
    where the texts' identifiers cannot spell a __has_include (here `_`, `__`, `h`, `a`,
    `x` and `include`, but no `s` nor `has`...), no paste can make one of it, even beside a
    macro that pastes."""
    root, _ = _layout(tmp_path, False)
    text = ("#include <cute/tensor.hpp>\n#define CAT(a, b) a##b\n"
            "auto tile = local_tile(A, tiler, make_coord(_, 0));\n"
            "auto col = A(_, 1); int __ = CAT(x, 1), h = 0, a = h;\n")
    policy = IncludePolicy(pattern_roots(root), [], [], macro_includes=False)
    assert policy.check_source(text, root, "kernel.cu").files == []


@pytest.mark.parametrize("flag, said", [
    ('-DX=__has_include("../outside/secret.h")', "__has_include of '../outside/secret.h', "
                                                 "outside the pattern's root; refused"),
    ("-DX=__has_", "the identifier '__has_' could be pasted into __has_include; rename it"),
])
def test_the_patterns_macros_are_checked_as_its_files_are(tmp_path, flag, said):
    """A pattern's `-D` value is text the compiler reads: `#if X` in the kernel would tell
    whether a file outside the root exists."""
    root, _ = _layout(tmp_path, True)
    code = "#if X\n#endif\n" + SAXPY
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(root, code, "saxpy", flags=[flag]))
    assert str(err.value) == f"kernel.flags line 1: {said}"


def test_tokens_keep_physical_lines_across_splices_and_comments():
    read = tokens('a\\\nb /* x\ny */ c\n"s\\"t" d\n')
    assert [(t.text, t.line) for t in read.tokens if t.kind != "newline"] == \
        [("ab", 1), ("c", 3), ('"s\\"t"', 4), ("d", 4)]


@needs_nvcc
@pytest.mark.parametrize("case", ["comment", "splice", "has_include macro", "has_include link",
                                  "pragma dependency"])
def test_the_nvcc_route_refuses_alike(tmp_path, case):
    root, outside = _layout(tmp_path, True)
    code = ESCAPES[case].format(outside=outside) + SAXPY
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(root, code, "saxpy"))
    assert str(err.value).startswith("kernel.cu line ") and SECRET not in str(err.value)


@needs_nvcc
@pytest.mark.parametrize("exists", [True, False])
def test_a_macro_named_include_outside_is_refused_by_nvccs_own_listing(tmp_path, exists):
    root, outside = _layout(tmp_path, exists)
    code = f'#define H "{outside}/secret.h"\n#include H\n' + SAXPY
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(root, code, "saxpy"))
    message = str(err.value).replace(str(outside), "OUTSIDE")
    assert SECRET not in message and "outside the pattern's root; refused" in message
