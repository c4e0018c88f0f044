"""#include and the conditionals as the C++ interpreter sees them: its instructions and
errors name the file and line the user wrote (the preprocessor alone: tests/host)."""

from __future__ import annotations

import json
import os
import re

import pytest
from cuda_helpers import elements, kernel_pattern

from sectorviz.cli import main
from sectorviz.cuda.compile import MAX_COMPILED_NODES
from sectorviz.model import PatternError, analyze, load_pattern
from sectorviz.model.frontend import kernel_for

T32 = list(range(32))


def write(folder, files: dict[str, str]) -> None:
    for name, body in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def pattern(folder, source="k.cu", function="k", where=None):
    doc = kernel_pattern("").to_dict()
    doc["kernel"] = {"source": source, "function": function}
    path = (where or folder) / "k.sectorviz.json"
    path.write_text(json.dumps(doc))
    return load_pattern(path)


HEADERS = {
    "src/k.cu": """#include "util/index.h"
#include "util/index.h"
#include <cuda_runtime.h>
#if defined(WIDE) && WIDE > 2
#define STEP WIDE
#elif SCALE(2) == 6 || defined UNDEFINED_NAME
#define STEP 3
#else
#error "no step"
#endif
__global__ void k(float *a) {
    a[at(threadIdx.x)] = 0;
    a[STEP * threadIdx.x + BASE] = 0;
}
""",
    "src/util/index.h": """#pragma once
#include "../common.h"
#define SCALE(x) ((x) * 3)
__device__ int at(int i) {
    return i + BASE;
}
""",
    "src/common.h": """#ifndef COMMON_H
#define COMMON_H
#define BASE 100
#define WIDE 2
#endif
""",
}


def test_includes_conditionals_and_their_places(tmp_path):
    write(tmp_path, HEADERS)
    kernel = kernel_for(pattern(tmp_path, "src/k.cu"))
    assert [(i.name, i.line, i.column) for i in kernel.instructions] == [
        ("line 12: a[at(threadIdx.x)]", 12, 5), ("line 13: a[STEP * threadIdx.x + BASE]", 13, 5)]
    got = [[int(e) for e in b.element[0]] for _, b in kernel.trace(0, 1)]
    assert got == [[100 + t for t in T32], [3 * t + 100 for t in T32]]


def test_an_instruction_in_an_included_file_is_named_by_file_and_line(tmp_path):
    write(tmp_path, {"k.cu": '#include "lib/store.h"\n__global__ void k(float *a) '
                             '{ put(a, threadIdx.x); }\n',
                     "lib/store.h": "// helpers\n__device__ void put(float *p, int i) {\n"
                                    "    p[i * 2] = 0;\n}\n"})
    kernel = kernel_for(pattern(tmp_path))
    assert [(i.name, i.line, i.column, i.source) for i in kernel.instructions] == [
        ("lib/store.h line 3: p[i * 2]", None, None, "p[i * 2]")]


@pytest.mark.parametrize("beside, n", [(False, 7), (True, 9)])
def test_includes_are_found_next_to_the_including_file_then_the_patterns_folder(
        tmp_path, beside, n):
    write(tmp_path, {"kernels/k.cu": '#include "shared.h"\n__global__ void k(float *a) '
                                     '{ a[N] = 0; }\n',
                     "shared.h": "#define N 7\n"})
    if beside:  # the including file's folder comes first
        write(tmp_path, {"kernels/shared.h": "#define N 9\n"})
    kernel = kernel_for(pattern(tmp_path, "kernels/k.cu"))
    assert int(next(kernel.trace(0, 1))[1].element[0, 0]) == n


def test_positions_after_an_include_stay_the_main_files(tmp_path):
    write(tmp_path, {"k.cu": '#include "h.h"\n\n__global__ void k(float *a) {\n'
                             '    a[threadIdx.x + 2000] = 0;\n}\n',
                     "h.h": "#define A 1\n#define B 2\n#define C 3\n"})
    with pytest.raises(PatternError, match="line 4, column 5: element index 2000"):
        analyze(pattern(tmp_path))


def test_kernel_source_is_read_as_a_regular_capped_file(tmp_path):
    (tmp_path / "k.cu").write_bytes(b"__global__ void k(float *a) { a[0] = 0; }\x00\n")
    with pytest.raises(PatternError, match="kernel.source: cannot read k.cu: it holds a NUL"):
        analyze(pattern(tmp_path))
    os.mkfifo(tmp_path / "fifo.cu")
    with pytest.raises(PatternError, match="kernel.source: cannot read fifo.cu: not a regular"):
        analyze(pattern(tmp_path, "fifo.cu"))
    with pytest.raises(PatternError, match="^kernel.source: /dev/zero lies outside the "
                                           "pattern's root"):
        analyze(pattern(tmp_path, "/dev/zero"))
    (tmp_path / "dev").symlink_to("/dev")
    with pytest.raises(PatternError, match="^kernel.source: dev/zero lies outside the "
                                           "pattern's root"):
        analyze(pattern(tmp_path, "dev/zero"))


def test_inline_code_conditionals_and_undef():
    got = elements("""
    #define WIDTH 4
    #if WIDTH == 4 && !defined(NARROW) && __CUDA_ARCH__ >= 800
    #define STRIDE 8
    #else
    #define STRIDE 1
    #endif
    #ifndef WIDTH
    this line is not compiled at all (
    #endif
    /* #if 0 in a comment is not a directive
    #endif */
    #undef WIDTH
    #ifdef WIDTH
    #error gone
    #endif
    __global__ void k(float *a) { a[threadIdx.x * STRIDE] = 0; }
    """)
    assert got == [("line 17: a[threadIdx.x * STRIDE]", [8 * t for t in T32])]


def test_cli_shows_an_include_error_in_one_line(tmp_path, capsys):
    write(tmp_path, {"k.cu": '#include "missing.h"\n'})
    pattern(tmp_path)
    assert main(["report", str(tmp_path / "k.sectorviz.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 1, column 1: cannot find the include" in err[0]


def test_a_macro_means_what_it_means_where_it_is_used():
    got = elements("""
    #define A B
    #define B 1
    #define STEP 2
    __device__ int first(int t) { return t * STEP; }
    #undef STEP
    #define STEP 3
    __global__ void k(float *a) {
        #define LOCAL 100
        a[first(threadIdx.x)] = 0;
        a[threadIdx.x * STEP + A + LOCAL] = 0;
        #undef LOCAL
    }
    """)
    assert got == [("line 10: a[first(threadIdx.x)]", [2 * t for t in T32]),
                   ("line 11: a[threadIdx.x * STEP + A + LOCAL]", [3 * t + 101 for t in T32])]
    message = "line 4, column 7: unknown name 'LOCAL' (no #define of it is in effect here)"
    with pytest.raises(PatternError, match=re.escape(message)):
        analyze(kernel_pattern("#define LOCAL 1\n#undef LOCAL\n__global__ void k(float *a) {\n"
                               "    a[LOCAL] = 0;\n}"))


def test_has_include_crlf_and_byte_order_mark(tmp_path):
    write(tmp_path, {"here.h": "#define FROM_HERE 5\n"})
    (tmp_path / "k.cu").write_bytes(
        "\ufeff#if __has_include(<cuda_bf16.h>) && __has_include(\"here.h\") && "
        "!__has_include(\"gone.h\") && !__has_builtin(__builtin_expect)\r\n"
        "#include \"here.h\"\r\n#define TWICE(x) \\\r\n    ((x) * 2)\r\n#endif\r\n"
        "__global__ void k(float *a) {\r\n    a[TWICE(threadIdx.x) + FROM_HERE] = 0;\r\n}\r\n"
        .encode())
    kernel = kernel_for(pattern(tmp_path))
    assert [(i.name, i.line, i.column) for i in kernel.instructions] == [
        ("line 7: a[TWICE(threadIdx.x) + FROM_HERE]", 7, 5)]
    assert [int(e) for e in next(kernel.trace(0, 1))[1].element[0]] == [2 * t + 5 for t in T32]


def test_an_unknown_name_in_an_included_file_is_named_by_file_and_line(tmp_path):
    write(tmp_path, {"k.cu": '#include "h.h"\n',
                     "h.h": "\n__global__ void k(float *a) { a[0] = x; }\n"})
    with pytest.raises(PatternError) as info:
        analyze(pattern(tmp_path))
    assert "h.h line 2, column 38: unknown name 'x'" in str(info.value)


DOUBLING = "#define M0 1\n" + "".join(f"#define M{i} (M{i - 1} + M{i - 1})\n"
                                        for i in range(1, 41))


def test_macros_that_double_forty_times_are_refused_in_one_line():
    with pytest.raises(PatternError) as info:
        analyze(kernel_pattern(DOUBLING + "__global__ void k(float *a) { a[M40] = 0; }"))
    assert re.fullmatch(rf"line 42, column 33: the kernel grows past {MAX_COMPILED_NODES:,} "
                        r"syntax nodes with device functions inlined and macros expanded at "
                        r"each use \(in the expansion of M40\)",
                        str(info.value))


def test_toolkit_headers_named_in_quotes_are_skipped_like_angle_includes(tmp_path):
    write(tmp_path, {"k.cu": '#include "cuda_runtime.h"\n#include "device_launch_parameters.h"\n'
                             '#if __has_include("cuda_fp16.h")\n#define STEP 3\n#endif\n'
                             '__global__ void k(float *a) { a[STEP * threadIdx.x] = 0; }\n'})
    kernel = kernel_for(pattern(tmp_path))
    assert [int(e) for e in next(kernel.trace(0, 1))[1].element[0]] == [3 * t for t in T32]
