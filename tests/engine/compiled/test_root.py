"""Reads confined to the pattern's root: the kernel source, its includes, -I folders and
`__has_include` stay inside it, and nothing read outside is ever quoted."""

import json

import pytest
from compiled_helpers import SAXPY, needs_nvcc, write_pattern

from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.model import PatternError, load_pattern
from sectorviz.model.files import root_of

SECRET = "SECRET-0xC0FFEE"


def _outside(tmp_path):
    """A folder beside the pattern's, holding a header whose text must never be shown."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.h").write_text(f"#error {SECRET}\n#define LEAK {SECRET}\n")
    return folder


def test_the_root_is_the_pattern_folder_or_the_repository_above(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    assert root_of(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    (tmp_path / "a" / ".git").mkdir()
    assert root_of(tmp_path / "a" / "b") == tmp_path / "a"


@pytest.mark.parametrize("source", ["../outside/secret.h", "/etc/hostname",
                                    "sub/../../outside/secret.h", "link.cu"])
def test_a_kernel_source_outside_the_root_is_refused_unread(tmp_path, source):
    outside = _outside(tmp_path)
    pattern = write_pattern(tmp_path / "p", SAXPY, "saxpy")
    (tmp_path / "p" / "link.cu").symlink_to(outside / "secret.h")
    doc = json.loads((tmp_path / "p" / "p.sectorviz.json").read_text())
    doc["kernel"]["source"] = source
    (tmp_path / "p" / "p.sectorviz.json").write_text(json.dumps(doc))
    with pytest.raises(PatternError) as err:
        compile_kernel(load_pattern(tmp_path / "p" / "p.sectorviz.json"))
    assert str(err.value) == (f"kernel.source: {source!r} lies outside the pattern's root "
                              f"{pattern.base_dir} (only files there or in an --include-dir "
                              "are read)")


@needs_nvcc
def test_a_source_elsewhere_in_the_repository_is_inside(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "saxpy.cu").write_text(SAXPY)
    write_pattern(tmp_path / "patterns", SAXPY, "saxpy")
    path = tmp_path / "patterns" / "p.sectorviz.json"
    doc = json.loads(path.read_text())
    doc["kernel"]["source"] = "../kernels/saxpy.cu"
    path.write_text(json.dumps(doc))
    compiled = compile_kernel(load_pattern(path))
    assert compiled.files == (str(tmp_path / "kernels" / "saxpy.cu"),)


@needs_nvcc
@pytest.mark.parametrize("include", ['"../outside/secret.h"', '"{outside}/secret.h"',
                                     '"link/secret.h"'])
def test_an_include_outside_the_root_is_refused_without_quoting_it(tmp_path, include):
    outside = _outside(tmp_path)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "link").symlink_to(outside)
    code = f"#include {include.format(outside=outside)}\n" + SAXPY
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(tmp_path / "p", code, "saxpy"))
    message = str(err.value)
    assert SECRET not in message and "\n" not in message
    name = include.format(outside=outside).strip('"')
    assert message == (f"kernel.cu line 1: an #include of {name!r}, outside the pattern's "
                       "root; refused")


@needs_nvcc
def test_a_header_outside_the_root_that_compiles_is_still_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "quiet.h").write_text(f"#define VALUE 1 /* {SECRET} */\n")
    code = '#include "../outside/quiet.h"\n' + SAXPY
    with pytest.raises(PatternError, match=r"^kernel.cu line 1: an #include of "
                                           r"'../outside/quiet.h', outside the pattern's root; "
                                           r"refused$"):
        compile_kernel(write_pattern(tmp_path / "p", code, "saxpy"))


@needs_nvcc
def test_has_include_of_a_path_outside_the_root_is_refused(tmp_path):
    _outside(tmp_path)
    code = ('#if __has_include("../outside/secret.h")\n#define N 2\n#else\n#define N 1\n'
            '#endif\n' + SAXPY)
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(tmp_path / "p", code, "saxpy"))
    assert str(err.value) == ("kernel.cu line 1: __has_include of '../outside/secret.h', "
                              "outside the pattern's root; refused")


@needs_nvcc
def test_includes_inside_the_root_and_the_toolkits_headers_are_read(tmp_path):
    code = ('#include <cuda_fp16.h>\n#include "inc/scale.h"\n'
            "__global__ void k(__half *y) { y[threadIdx.x] = __float2half(SCALE); }\n")
    compiled = compile_kernel(write_pattern(tmp_path, code, "k",
                                            files={"inc/scale.h": "#define SCALE 2.0f\n"}))
    assert compiled.files == (str(tmp_path / "kernel.cu"), str(tmp_path / "inc" / "scale.h"))
    assert compiled.params == ("y",)


@needs_nvcc
def test_an_include_dir_given_by_the_user_is_searched_last(tmp_path):
    """`--include-dir DIR` (the pattern's include_dirs): the compiled engine reads a header
    there as the source engine does, after the pattern's own folders."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "scale.h").write_text("#define SCALE 2.0f\n")
    source = '#include "scale.h"\n' + SAXPY.replace("a * x[i]", "SCALE * a * x[i]")
    write_pattern(tmp_path / "p", source, "saxpy")
    path = tmp_path / "p" / "p.sectorviz.json"
    with pytest.raises(PatternError):
        compile_kernel(load_pattern(path))
    compiled = compile_kernel(load_pattern(path, (str(shared),)))
    assert compiled.entry
