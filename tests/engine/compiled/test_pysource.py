"""A Python kernel's file is never run: what a compile gets is built from its syntax tree
alone; module code is left out, and a decorator, default, constant or body name that would
run anything is refused in one line naming the file and line. Nothing is written."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from sectorviz.engine.compiled.pysource import read_python_kernel
from sectorviz.model import PatternError, load_pattern
from sectorviz.model.analysis import analyze

KERNEL = '''\
import os
import triton
import triton.language as tl
open({mark!r}, "w").write("module code ran")
LIMIT = 1024
SIDE = os.system("touch {mark}")


@triton.jit
def helper(v):
    return v + 1


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, helper(tl.load(x_ptr + offs, mask=mask)), mask=mask)


if __name__ == "__main__":
    copy_kernel[(1,)](None, None, 0, BLOCK=LIMIT)
'''


def write(folder: Path, text: str) -> Path:
    """`text` as k.py beside a pattern running copy_kernel over 1024 floats."""
    (folder / "k.py").write_text(text)
    doc = {"format": "sectorviz.pattern/1", "params": {"n": 1024},
           "launch": {"grid": [1]},
           "arrays": {"x_ptr": {"dtype": "float32", "length": "n"},
                      "out_ptr": {"dtype": "float32", "length": "n"}},
           "kernel": {"triton": "k.py", "function": "copy_kernel",
                      "constexprs": {"BLOCK": 1024}}}
    path = folder / "p.sectorviz.json"
    path.write_text(json.dumps(doc))
    return path


def test_only_the_kernel_its_jit_helpers_and_imports_are_taken(tmp_path):
    mark = tmp_path / "ran"
    text = KERNEL.format(mark=str(mark))
    taken = read_python_kernel(tmp_path / "k.py", text, "copy_kernel")
    lines = taken.module.splitlines()
    assert len(lines) == len(text.splitlines())  # every line at its own number
    assert [n + 1 for n, line in enumerate(lines) if line] == \
        [2, 3, *range(9, 12), *range(14, 19)]
    assert taken.params == ("x_ptr", "out_ptr", "n", "BLOCK")


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="no Triton")
def test_a_file_whose_module_code_would_write_a_file_compiles_and_writes_nothing(tmp_path):
    """One program of 4 warps, 8 floats per thread as 2 v4 runs: 2 loads and 2 stores per
    warp of 16 sectors each; the module code, the os.system constant and the __main__
    block are never run."""
    mark = tmp_path / "ran"
    path = write(tmp_path, KERNEL.format(mark=str(mark)))
    found = [(s.op, s.requests, s.sectors) for s in analyze(load_pattern(path)).instructions]
    assert found == [("load", 4, 64)] * 2 + [("store", 4, 64)] * 2
    assert not mark.exists()


@pytest.mark.parametrize("old, new, line, words", [
    ("@triton.jit\ndef copy_kernel(",
     "@triton.jit(debug=open(MARK, 'w').write('x'))\ndef copy_kernel(", 14,
     "is not read: only a jit decorator with literal arguments"),
    ("def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):",
     "def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, s=open(MARK, 'w')):", 15,
     "is not a literal"),
    ("    mask = offs < n\n", "    mask = offs < n\n    open(MARK, 'w')\n", 18,
     "open is not defined by a literal"),
    ("    mask = offs < n\n", "    mask = offs < SIDE\n", 17, "SIDE is not a literal constant"),
    ("    mask = offs < n\n", "    mask = offs < os.getpid()\n", 17,
     "os comes from a module other than triton"),
    ("    mask = offs < n\n", "    mask = offs < tl.__dict__\n", 17, "'__dict__' is not read"),
    ("def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):",
     "def copy_kernel(x_ptr, out_ptr, n, BLOCK: print(MARK)):", 15, "is not a name"),
    ("@triton.jit\ndef copy_kernel(", "@triton.autotune([])\n@triton.jit\ndef copy_kernel(",
     14, "decorator triton.autotune([])"),
])
def test_anything_that_would_run_is_refused_in_one_line(tmp_path, old, new, line, words):
    mark = tmp_path / "ran"
    text = KERNEL.format(mark=str(mark)).replace("LIMIT = 1024", f"MARK = {str(mark)!r}")
    assert old in text
    path = write(tmp_path, text.replace(old, new))
    with pytest.raises(PatternError) as err:
        read_python_kernel(path.parent / "k.py", (path.parent / "k.py").read_text(),
                           "copy_kernel")
    assert err.value.place == f"line {line}" and words in err.value.message
    assert err.value.file == str(tmp_path / "k.py") and "\n" not in str(err.value)
    assert not mark.exists()


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="no Triton")
@pytest.mark.parametrize("name, reaches", [("tl.core.builtins.open", "builtins"),
                                           ("triton.runtime.driver", "triton.runtime"),
                                           ("tl.core.knobs", "triton.knobs")])
def test_a_dotted_name_that_reaches_another_module_is_refused_before_the_compile(
        tmp_path, name, reaches):
    """Triton calls at compile time any Python function a kernel hands it; the child
    refuses a name reaching outside triton.language, Triton's jit, Numba and math."""
    mark = tmp_path / "ran"
    text = KERNEL.format(mark=str(mark)).replace("    mask = offs < n\n",
                                                 f"    mask = offs < n\n    {name}\n")
    with pytest.raises(PatternError) as err:
        analyze(load_pattern(write(tmp_path, text)))
    assert err.value.place == "line 18" and f"reaches {reaches}," in err.value.message
    assert not mark.exists()


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="no Triton")
def test_a_triton_compile_error_is_one_line_at_the_files_line(tmp_path):
    """Triton counts from the function's def (line 15): its line 3 is the file's 17."""
    text = KERNEL.format(mark=str(tmp_path / "ran")).replace("offs < n", "offs < tl.nothing(n)")
    with pytest.raises(PatternError) as err:
        analyze(load_pattern(write(tmp_path, text)))
    assert err.value.place == "line 17" and err.value.file == str(tmp_path / "k.py")
    assert err.value.message == ("CompilationError: AttributeError(\"module 'triton.language' "
                                 "has no attribute 'nothing'\")")


def test_a_function_the_file_does_not_define_is_named_with_those_it_does(tmp_path):
    with pytest.raises(PatternError) as err:
        read_python_kernel(tmp_path / "k.py", KERNEL.format(mark="m"), "copy")
    assert err.value.place == "kernel.function"
    assert err.value.message == ("k.py defines no function 'copy' at its top level "
                                 "(functions: helper, copy_kernel)")


@pytest.mark.parametrize("text, place", [("def k(:\n", "line 1"), ("x = 1\x00\n", "kernel"),
                                         ("x = " + "(" * 100000 + "1" + ")" * 100000, None)])
def test_a_file_that_is_not_python_is_refused_in_one_line(tmp_path, text, place):
    with pytest.raises(PatternError) as err:
        read_python_kernel(tmp_path / "k.py", text, "k")
    assert err.value.file == str(tmp_path / "k.py") and "\n" not in str(err.value)
    assert place is None or err.value.place == place
