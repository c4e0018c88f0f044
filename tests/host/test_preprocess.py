"""#include and the conditionals run before tree-sitter parses a .cu (host/preprocess.py);
every error names the file, line and column the user wrote, and `Source.place` maps a line
of the combined text back to its file."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.host import preprocess as pre
from sectorviz.model import PatternError
from sectorviz.model.files import pattern_roots, read_text


def write(folder, files: dict[str, str]) -> None:
    for name, body in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def preprocessed(folder, name: str = "k.cu") -> pre.Source:
    """The file `name` in `folder` preprocessed, its includes read inside the folder."""
    path = folder / name
    return pre.preprocess(read_text(path, "kernel.source"), path, pattern_roots(folder))


@pytest.mark.parametrize("files, message", [
    ({"k.cu": '\n#include "nope.h"\n'}, "line 2, column 1: cannot find the include \"nope.h\""),
    ({"k.cu": '#include "dir"\n', "dir/x": ""},
     "line 1, column 1: cannot read dir: it is a folder"),
    ({"k.cu": '#include "a.h"\n', "a.h": '\n\n  #include "a.h"\n'},
     "a.h line 3, column 3: includes nested more than 40 deep"),
    ({"k.cu": '#include "b.h"\n', "b.h": "#if 1\n#else\n#else\n#endif\n"},
     "b.h line 3, column 1: #else after #else"),
    ({"k.cu": "#if 1\nint x;\n"}, "line 3: #if without #endif"),
    ({"k.cu": "#endif\n"}, "line 1, column 1: #endif without #if"),
    ({"k.cu": "#if 1 / (2 - 2)\n#endif\n"}, "line 1, column 1: division by zero in a "
                                            "preprocessor condition"),
    ({"k.cu": "#if (1\n#endif\n"}, "line 1, column 1: expected ')'"),
    ({"k.cu": "#if 1 @ 2\n#endif\n"}, "cannot read '@ 2' in a preprocessor condition"),
    ({"k.cu": "#ifdef\n#endif\n"}, "#ifdef needs one name"),
    ({"k.cu": "#define V 2\n#if V > 1\n#error V is too big\n#endif\n"},
     "line 3, column 1: #error V is too big"),
])
def test_errors_name_the_file_and_line(tmp_path, files, message):
    write(tmp_path, files)
    with pytest.raises(PatternError) as info:
        preprocessed(tmp_path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_device_file_or_an_oversized_include_is_refused(tmp_path, monkeypatch):
    write(tmp_path, {"k.cu": '#include "/dev/zero"\n'})
    with pytest.raises(PatternError, match='^line 1, column 1: the include "/dev/zero" lies '
                                           "outside the pattern's root"):
        preprocessed(tmp_path)
    monkeypatch.setattr(pre, "MAX_INCLUDE_BYTES", 10)
    write(tmp_path, {"k.cu": '\n #include "big.h"\n', "big.h": "#define X 12345678901\n"})
    with pytest.raises(PatternError, match="line 2, column 2: cannot read big.h: it is 22 "
                                           "bytes; at most 10"):
        preprocessed(tmp_path)


DOUBLING = "#define M0 1\n" + "".join(f"#define M{i} (M{i - 1} + M{i - 1})\n"
                                        for i in range(1, 41))


def test_a_condition_whose_macros_double_forty_times_is_refused_in_one_line():
    with pytest.raises(PatternError) as info:
        pre.preprocess(DOUBLING + "#if M40\n#endif\n", None, pattern_roots("."))
    assert str(info.value) == "line 42, column 1: macros expand to more than 100,000 tokens"


def test_source_maps_lines_back():
    source = pre.Source("", (pre.Span(1, None, 1), pre.Span(3, "a.h", 1),
                             pre.Span(5, None, 2)))
    assert [source.place(n) for n in range(1, 7)] == [
        "line 1", "line 2", "a.h line 1", "a.h line 2", "line 2", "line 3"]
    err = source.relocate(PatternError("line 4", "bad", 7))
    assert (err.place, err.column) == ("a.h line 2", 7)
    assert source.relocate(PatternError("kernel.function", "x")).place == "kernel.function"


def _c_value(tree) -> int:
    """Brute-force C value of an expression tree (ints, truncating division)."""
    if isinstance(tree, int):
        return tree
    op, *args = tree
    v = [_c_value(a) for a in args]
    if op == "?":
        return v[1] if v[0] else v[2]
    if len(v) == 1:
        return {"-": -v[0], "!": int(not v[0]), "~": ~v[0]}[op]
    a, b = v
    if op in "/%":
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        return q if op == "/" else a - q * b
    if op in ("<<", ">>"):
        return a << b if op == "<<" else a >> b
    return int({"+": a + b, "-": a - b, "*": a * b, "<": a < b, ">": a > b, "<=": a <= b,
                ">=": a >= b, "==": a == b, "!=": a != b, "&&": bool(a and b),
                "||": bool(a or b), "&": a & b, "|": a | b, "^": a ^ b}[op])


def _text(tree) -> str:
    if isinstance(tree, int):
        return str(tree)
    op, *args = tree
    if op == "?":
        return f"({_text(args[0])} ? {_text(args[1])} : {_text(args[2])})"
    if len(args) == 1:
        return f"({op}{_text(args[0])})"
    return f"({_text(args[0])} {op} {_text(args[1])})"


def _nonzero(tree) -> bool:
    return _c_value(tree) != 0


_LEAF = st.integers(0, 40)
_TREES = st.recursive(_LEAF, lambda sub: st.one_of(
    st.tuples(st.sampled_from(["-", "!", "~"]), sub),
    st.tuples(st.sampled_from(["+", "-", "*", "<", ">", "<=", ">=", "==", "!=", "&&", "||",
                               "&", "|", "^"]), sub, sub),
    st.tuples(st.sampled_from(["/", "%"]), sub, sub.filter(_nonzero)),
    st.tuples(st.sampled_from(["<<", ">>"]), _LEAF, st.integers(0, 7)),
    st.tuples(st.just("?"), sub, sub, sub)), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(tree=_TREES)
def test_if_expressions_match_a_brute_force_c_evaluation(tree):
    value = _c_value(tree)
    text = f"#define HALF(x) ((x) / 2)\n#if HALF(2 * ({_text(tree)})) == ({value})\nYES\n#endif\n"
    assert pre.preprocess(text, None, pattern_roots(".")).text.split("\n")[2] == "YES"


@pytest.mark.parametrize("text, message", [
    ("#if " + "(" * 500 + "1" + ")" * 500, "nested more than 100 levels deep"),
    ("#if " + "!" * 500 + "1", "nested more than 100 levels deep"),
    ("#if " + "1 ? " * 500 + "1" + " : 1" * 500, "nested more than 100 levels deep"),
    ("#define A0 1\n" + "".join(f"#define A{i} A{i - 1}\n" for i in range(1, 300)) +
     "#if A299", "macros nested more than 100 levels deep in a preprocessor condition"),
    ("#if 08", "cannot read the number '08'"),
    ("#if defined", "defined needs a name"),
])
def test_hostile_conditions_are_one_line_errors(text, message):
    with pytest.raises(PatternError) as info:
        pre.preprocess(text + "\n#endif\n", None, pattern_roots("."))
    assert message in str(info.value) and "\n" not in str(info.value)



def test_toolkit_headers_named_in_quotes_are_skipped_like_angle_includes(tmp_path):
    """The toolkit's headers are skipped, and `__has_include` of one is true: line 4's
    #define is kept; a missing header of the user's is an error at its #include."""
    write(tmp_path, {"k.cu": '#include "cuda_runtime.h"\n#include "device_launch_parameters.h"\n'
                             '#if __has_include("cuda_fp16.h")\n#define STEP 3\n#endif\n'
                             '#include "gone.h"\n'})
    with pytest.raises(PatternError, match='^line 6, column 1: cannot find the include "gone.h"'):
        preprocessed(tmp_path)
    write(tmp_path, {"gone.h": "// here after all\n"})
    assert preprocessed(tmp_path).text.split("\n")[3] == "#define STEP 3"


def test_a_line_over_the_limit_is_refused_before_parsing():
    line = "int x = " + "1 + " * (pre.MAX_LINE_CHARS // 4) + "1;"
    with pytest.raises(PatternError, match=f"^line 2: a line of {len(line):,} characters; at "
                                           "most 65,536 are read$"):
        pre.preprocess("\n" + line + "\n", None, pattern_roots("."))


def test_terms_over_the_limit_are_refused(monkeypatch):
    monkeypatch.setattr(pre, "MAX_SOURCE_TERMS", 50)
    text = "int x = 1;\n" * 5 + "int y = " + " + ".join(["1"] * 30) + ";\n"
    with pytest.raises(PatternError, match="^line 6: the source and its includes hold over 50 "
                                           "terms"):
        pre.preprocess(text, None, pattern_roots("."))
    pre.preprocess("int x = 1;\n" * 5, None, pattern_roots("."))  # 25 terms: fine
