"""Issue 22 follow-up: the source engine's messages cite lines of the file that holds them (not
of the text with its includes pasted in), and a typedef that gives a name another type than
it already has in that scope is refused, as nvcc refuses it ('invalid redeclaration of type
name'), in one line naming file, line and column. A comment inside a subscript is a comment
(a hostile one, holding a bidi control, was taken for a second index)."""

from __future__ import annotations

import json

import pytest
from cuda_helpers import run

from sectorviz.cli import main
from sectorviz.model import PatternError

HEADER = "// a helper header\n// its second line\n#define ONE 1\n"
GETTER = "__device__ float get(const float *a) {\n    return a[threadIdx.x];\n}\n"


def pattern(tmp_path, source: str) -> str:
    """tmp_path/k.cu holding `source`, with h.h (HEADER) and g.h (GETTER) beside it, and a
    pattern for its kernel k -> the pattern's path."""
    (tmp_path / "h.h").write_text(HEADER)
    (tmp_path / "g.h").write_text(GETTER)
    (tmp_path / "k.cu").write_text(source)
    doc = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
           "arrays": {"a": {"length": 4096}}, "kernel": {"source": "k.cu", "function": "k"}}
    path = tmp_path / "k.sectorviz.json"
    path.write_text(json.dumps(doc))
    return str(path)


def report_error(capsys, path: str) -> str:
    code = main(["report", path])
    out, err = capsys.readouterr()
    assert code == 2 and not out and err.count("\n") == 1, err
    return err.rstrip("\n")


def test_a_load_in_the_cu_is_cited_at_its_own_line(tmp_path, capsys):
    """h.h's three lines come before the kernel in the combined text; line 3 is still 3."""
    path = pattern(tmp_path, '#include "h.h"\n__global__ void k(float *a) {\n'
                             '    a[(int)a[threadIdx.x]] = 0;\n}\n')
    assert report_error(capsys, path) == (
        f"{tmp_path / 'k.cu'}: line 3, column 12: an address depends on data loaded by "
        "'a[threadIdx.x]' (line 3); give 'a' values in the pattern file to read it; "
        'add "values": {"kind": "uniform", "seed": 0, "low": 0, "high": 4096} to arrays.a')


def test_a_load_in_a_header_is_cited_with_the_header_and_its_line(tmp_path, capsys):
    path = pattern(tmp_path, '#include "h.h"\n#include "g.h"\n__global__ void k(float *a) {\n'
                             '    a[(int)get(a)] = 0;\n}\n')
    assert report_error(capsys, path) == (
        f"{tmp_path / 'k.cu'}: line 4, column 12: an address depends on data loaded by "
        "'a[threadIdx.x]' (g.h line 2); give 'a' values in the pattern file to read it; "
        'add "values": {"kind": "uniform", "seed": 0, "low": 0, "high": 4096} to arrays.a')


KERNEL = "__global__ void k(float *a) {\n    a[threadIdx.x] = (T)1;\n}\n"


@pytest.mark.parametrize("first, again, column", [
    ("typedef int T;", "typedef float T;", 15),
    ("typedef int T;", "using T = long;", 7),
    ("using T = float;", "typedef float *T;", 16),
])
def test_a_file_scope_typedef_of_another_type_is_refused(tmp_path, capsys, first, again, column):
    path = pattern(tmp_path, f"{first}\n{again}\n{KERNEL}")
    assert report_error(capsys, path) == (
        f"{tmp_path / 'k.cu'}: line 2, column {column}: the type name 'T' is declared again "
        "as another type than its declaration at line 1; give the new type its own name")


def test_a_conflict_with_a_header_names_the_header_line(tmp_path, capsys):
    (tmp_path / "t.h").write_text("// types\ntypedef int T;\n")
    path = pattern(tmp_path, f'#include "h.h"\n#include "t.h"\ntypedef float T;\n{KERNEL}')
    assert report_error(capsys, path) == (
        f"{tmp_path / 'k.cu'}: line 3, column 15: the type name 'T' is declared again as "
        "another type than its declaration at t.h line 2; give the new type its own name")


@pytest.mark.parametrize("types", [
    "typedef int T;\ntypedef int T;",  # the same type again: C++ allows it
    "typedef int T;\ntypedef signed int T;",
    "namespace a { typedef int T; }\nnamespace b { typedef float U; }\ntypedef int T;",
    "namespace a { typedef float T; }\ntypedef int T;",  # another scope
])
def test_the_same_type_again_or_another_scope_is_accepted(types):
    analysis, _ = run(f"{types}\n{KERNEL}")
    assert analysis.totals.sectors == 4


def test_a_local_typedef_of_another_type_is_refused():
    with pytest.raises(PatternError) as info:
        run("__global__ void k(float *a) {\n    typedef int T;\n    typedef float T;\n"
            "    a[threadIdx.x] = (T)1;\n}\n")
    assert str(info.value) == ("line 3, column 19: the type name 'T' is declared again as "
                               "another type than its declaration at line 2; give the new "
                               "type its own name")


@pytest.mark.parametrize("body", [
    "    typedef int T;\n    typedef signed int T;\n",  # the same type: allowed
    "    typedef float T;\n",  # a new scope may hide the file's T
    "    { typedef float T; }\n    typedef double T;\n",
])
def test_a_local_typedef_of_the_same_type_or_in_a_new_scope_is_accepted(body):
    analysis, _ = run(f"typedef int T;\n__global__ void k(float *a) {{\n{body}"
                      "    a[threadIdx.x] = (T)1;\n}\n")
    assert analysis.totals.sectors == 4


def test_an_include_not_found_is_named_at_the_cu_line_holding_it(tmp_path, capsys):
    path = pattern(tmp_path, '#include "h.h"\n\n#include "nowhere.h"\n' + KERNEL)
    assert report_error(capsys, path) == (
        f"{tmp_path / 'k.cu'}: line 3, column 1: cannot find the include \"nowhere.h\" (looked "
        "in the including file's folder, the pattern's folder and the include folders)")


def test_a_comment_inside_a_subscript_is_no_index():
    analysis, _ = run("__global__ void k(float *a) {\n"
                      "    a[threadIdx.x * 2 /* \u202e see */] = 0;\n}\n")
    assert analysis.totals.sectors == 8
