"""#include and the conditionals as the as-written reading sees them (the kernel's debug
compile, issue 29; ported from the C++ interpreter's tests/cuda/test_preprocess_interpreted.py,
the preprocessor alone being tests/host's): nvcc preprocesses, and the instructions and errors
name the file and line the user wrote."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from oracles import elements, kernel_pattern

from sectorviz.cli import main
from sectorviz.engine.compiled import bounded
from sectorviz.model import PatternError, analyze, load_pattern
from sectorviz.model.frontend import kernel_for

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")

T32 = list(range(32))


def write(folder, files: dict[str, str]) -> None:
    for name, body in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)


def pattern(folder, source="k.cu", function="k"):
    doc = kernel_pattern("").to_dict()
    doc["kernel"] = {"source": source, "function": function}
    path = folder / "k.sectorviz.json"
    path.write_text(json.dumps(doc))
    return load_pattern(path)


def first_warp(kernel) -> list[tuple[int | None, str | None, list[int]]]:
    """(line, file, first warp's elements) of each global execution of a kernel's warp 0."""
    return [(kernel.instructions[k].line, kernel.instructions[k].file,
             [int(e) for e in b.element[0]]) for k, b in kernel.trace(0, 1)]


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
    assert [(i.line, i.column, i.op) for i in kernel.instructions] == [(12, 5, "store"),
                                                                       (13, 5, "store")]
    assert [e for _, _, e in first_warp(kernel)] == [[100 + t for t in T32],
                                                     [3 * t + 100 for t in T32]]


def test_an_instruction_in_an_included_file_is_named_by_file_and_line(tmp_path):
    write(tmp_path, {"k.cu": '#include "lib/store.h"\n__global__ void k(float *a) '
                             '{ put(a, threadIdx.x); }\n',
                     "lib/store.h": "// helpers\n__device__ void put(float *p, int i) {\n"
                                    "    p[i * 2] = 0;\n}\n"})
    kernel = kernel_for(pattern(tmp_path))
    store, = kernel.instructions
    # named by the file's name (the interpreter: its path from the pattern's folder)
    assert store.name.startswith("store.h line 3: p[i * 2] = 0;, st.")
    assert (store.line, store.column) == (3, 5) and store.file == str(tmp_path / "lib/store.h")
    assert [e for _, _, e in first_warp(kernel)] == [[2 * t for t in T32]]


def test_includes_are_found_next_to_the_including_file_not_the_patterns_folder(tmp_path):
    """As nvcc looks a quoted name up: beside the including file, then the -I folders (the
    interpreter also looked in the pattern's folder)."""
    write(tmp_path, {"kernels/k.cu": '#include "shared.h"\n__global__ void k(float *a) '
                                     '{ a[N] = 0; }\n',
                     "shared.h": "#define N 7\n"})
    with pytest.raises(PatternError, match="^k.cu line 1, column 10: shared.h: No such file"):
        kernel_for(pattern(tmp_path, "kernels/k.cu"))
    write(tmp_path, {"kernels/shared.h": "#define N 9\n"})
    assert first_warp(kernel_for(pattern(tmp_path, "kernels/k.cu")))[0][2] == [9] * 32


def test_positions_after_an_include_stay_the_main_files(tmp_path):
    write(tmp_path, {"k.cu": '#include "h.h"\n\n__global__ void k(float *a) {\n'
                             '    a[threadIdx.x + 2000] = 0;\n}\n',
                     "h.h": "#define A 1\n#define B 2\n#define C 3\n"})
    with pytest.raises(PatternError, match=r"^line 4, column 5: 'line 4: a\[threadIdx.x \+ "
                                           r"2000\], st.u32' reaches byte 8000"):
        analyze(pattern(tmp_path))


def test_kernel_source_is_read_as_a_regular_capped_file(tmp_path):
    (tmp_path / "k.cu").write_bytes(b"__global__ void k(float *a) { a[0] = 0; }\x00\n")
    with pytest.raises(PatternError, match="kernel.source: cannot read k.cu: it holds a NUL"):
        analyze(pattern(tmp_path))
    os.mkfifo(tmp_path / "fifo.cu")
    with pytest.raises(PatternError, match="kernel.source: cannot read fifo.cu: not a regular"):
        analyze(pattern(tmp_path, "fifo.cu"))
    with pytest.raises(PatternError, match="^kernel.source: '/dev/zero' lies outside the "
                                           "pattern's root"):
        analyze(pattern(tmp_path, "/dev/zero"))
    (tmp_path / "dev").symlink_to("/dev")
    with pytest.raises(PatternError, match="^kernel.source: 'dev/zero' lies outside the "
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
    assert got == [(17, "store", [8 * t for t in T32])]  # sm_90: __CUDA_ARCH__ is 900


def test_cli_shows_an_include_error_in_one_line(tmp_path, capsys):
    write(tmp_path, {"k.cu": '#include "missing.h"\n'})
    pattern(tmp_path)
    path = tmp_path / "k.sectorviz.json"
    assert main(["report", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"{path}: k.cu line 1, column 10: missing.h: No such file or directory\n"


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
    assert got == [(10, "store", [2 * t for t in T32]),
                   (11, "store", [3 * t + 101 for t in T32])]
    with pytest.raises(PatternError) as info:
        analyze(kernel_pattern("#define LOCAL 1\n#undef LOCAL\n__global__ void k(float *a) {\n"
                               "    a[LOCAL] = 0;\n}"))
    assert str(info.value) == "kernel.code line 4, column 7: identifier \"LOCAL\" is undefined"


def test_has_include_crlf_and_byte_order_mark(tmp_path):
    """(The interpreter's version also asked !__has_builtin(__builtin_expect), false to it;
    nvcc's host compiler has that builtin.)"""
    write(tmp_path, {"here.h": "#define FROM_HERE 5\n"})
    (tmp_path / "k.cu").write_bytes(
        "\ufeff#if __has_include(<cuda_bf16.h>) && __has_include(\"here.h\") && "
        "!__has_include(\"gone.h\")\r\n"
        "#include \"here.h\"\r\n#define TWICE(x) \\\r\n    ((x) * 2)\r\n#endif\r\n"
        "__global__ void k(float *a) {\r\n    a[TWICE(threadIdx.x) + FROM_HERE] = 0;\r\n}\r\n"
        .encode())
    kernel = kernel_for(pattern(tmp_path))
    assert [(i.line, i.column) for i in kernel.instructions] == [(7, 5)]
    assert first_warp(kernel)[0][2] == [2 * t + 5 for t in T32]


def test_an_unknown_name_in_an_included_file_is_named_by_file_and_line(tmp_path):
    write(tmp_path, {"k.cu": '#include "h.h"\n',
                     "h.h": "\n__global__ void k(float *a) { a[0] = x; }\n"})
    with pytest.raises(PatternError) as info:
        analyze(pattern(tmp_path))
    assert "h.h line 2, column 38: identifier \"x\" is undefined" in str(info.value)


DOUBLING = "#define M0 1\n" + "".join(f"#define M{i} (M{i - 1} + M{i - 1})\n"
                                        for i in range(1, 41))


def test_macros_that_double_forty_times_are_refused_in_one_line(monkeypatch):
    """nvcc expands M40 to 2^40 terms and never ends: the compile is stopped at its time
    limit (120 s; 2 s here) in one line."""
    monkeypatch.setattr(bounded, "COMPILE_SECONDS", 2.0)
    with pytest.raises(PatternError) as info:
        analyze(kernel_pattern(DOUBLING + "__global__ void k(float *a) { a[M40] = 0; }"))
    assert str(info.value) == ("kernel: the compile took over 2 s and was stopped (a template "
                               "or macro expansion that does not end?)")


def test_toolkit_headers_named_in_quotes_are_found_like_angle_includes(tmp_path):
    write(tmp_path, {"k.cu": '#include "cuda_runtime.h"\n#include "device_launch_parameters.h"\n'
                             '#if __has_include("cuda_fp16.h")\n#define STEP 3\n#endif\n'
                             '__global__ void k(float *a) { a[STEP * threadIdx.x] = 0; }\n'})
    kernel = kernel_for(pattern(tmp_path))
    assert first_warp(kernel)[0][2] == [3 * t for t in T32]
