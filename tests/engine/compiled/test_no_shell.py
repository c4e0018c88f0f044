"""Issue 28, item 1: no text from a pattern, a file name or the environment reaches a command
line that a program hands to a shell. Each variant writes a marker file if anything runs it;
the marker must never appear, and nothing of the environment is echoed."""

import base64
import json
import subprocess
import sys
import tempfile

import pytest
from compiled_helpers import SAXPY, needs_nvcc, write_pattern

from sectorviz.engine.compiled import bounded
from sectorviz.engine.compiled.compile import compile_kernel
from sectorviz.model import PatternError, load_pattern

USES_X = SAXPY.replace("a * x[i]", "(X) * x[i]")


def _attacks(marker) -> list[str]:
    """Macro values that run `touch MARKER` if any shell reads them."""
    return [f"-DX=$(touch {marker})", f"-DX=`touch {marker}`",
            f"-DX=$(touch${{IFS}}{marker})", f"-DA=1,X=$(touch {marker})",
            f"-DX=1;touch {marker}", f"-DX=1' ; touch {marker} ; '", f'-DX=1" ; touch {marker}"']


@needs_nvcc
@pytest.mark.parametrize("attack", range(7))
def test_a_macro_value_never_reaches_a_shell(tmp_path, attack):
    marker = tmp_path / "pwned"
    flag = _attacks(marker)[attack]
    try:
        compile_kernel(write_pattern(tmp_path / "p", USES_X, "saxpy", flags=[flag]))
    except PatternError as err:  # the value is C++ the compiler may refuse: one line
        assert "\n" not in str(err)
    assert not marker.exists()


@needs_nvcc
def test_a_macro_is_defined_as_written(tmp_path):
    """The header keeps -D's meaning: the value, spaces and commas included, is the macro."""
    code = SAXPY.replace("a * x[i]", "TWO * x[i]")
    compiled = compile_kernel(write_pattern(tmp_path, code, "saxpy",
                                            flags=["-DTWO=(1.0f + 1.0f)", "-DUNUSED",
                                                   "-UUNUSED"]))
    assert "0f40000000" in compiled.ptx  # 2.0f
    assert compiled.flags[-3:] == ("-DTWO=(1.0f + 1.0f)", "-DUNUSED", "-UUNUSED")


@needs_nvcc
def test_the_environment_is_not_echoed(tmp_path, monkeypatch):
    monkeypatch.setenv("SECTORVIZ_TEST_SECRET", "hunter2-secret")
    with pytest.raises(PatternError) as err:
        compile_kernel(write_pattern(tmp_path, USES_X, "saxpy",
                                     flags=["-DX=$SECTORVIZ_TEST_SECRET"]))
    assert "hunter2" not in str(err.value) and "\n" not in str(err.value)


@needs_nvcc
def test_nvcc_flags_from_the_environment_are_not_used(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    monkeypatch.setenv("NVCC_PREPEND_FLAGS", f"-DX=$(touch {marker})")
    monkeypatch.setenv("NVCC_APPEND_FLAGS", "-DBROKEN=(")
    compile_kernel(write_pattern(tmp_path / "p", SAXPY, "saxpy"))
    assert not marker.exists()


@needs_nvcc
def test_a_temporary_folder_a_shell_would_expand_is_not_used(tmp_path, monkeypatch):
    marker = tmp_path / "pwned"
    encoded = base64.b32encode(str(marker).encode()).decode()  # a name holds no slash
    hostile = tmp_path / f"t$(touch $(echo {encoded}|base32 -d))"
    hostile.mkdir()
    monkeypatch.setenv("TMPDIR", str(hostile))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    compile_kernel(write_pattern(tmp_path / "p", SAXPY, "saxpy"))
    assert not marker.exists() and list(hostile.iterdir()) == []


@needs_nvcc
def test_a_pattern_folder_with_spaces_and_quotes_compiles_without_a_shell(tmp_path):
    """The source's own folder reaches nvcc (inline code searches it) through a link in the
    private folder when its path is not shell-safe."""
    marker = tmp_path / "pwned"
    encoded = base64.b32encode(str(marker).encode()).decode()
    folder = tmp_path / f"my kernels $(touch $(echo {encoded}|base32 -d))"
    folder.mkdir()
    (folder / "scale.h").write_text("#define SCALE 2.0f\n")
    code = '#include "scale.h"\n' + SAXPY.replace("a * x[i]", "SCALE * x[i]")
    write_pattern(folder, SAXPY, "saxpy")
    doc_path = folder / "p.sectorviz.json"
    doc = json.loads(doc_path.read_text())
    doc["kernel"] = {"code": code, "function": "saxpy"}
    doc_path.write_text(json.dumps(doc))
    assert "0f40000000" in compile_kernel(load_pattern(doc_path)).ptx
    assert not marker.exists()


def test_tools_get_a_clean_fixed_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SECTORVIZ_TEST_SECRET", "x")
    monkeypatch.setenv("PATH", "/tmp/$(touch x):/usr/bin")
    env = bounded.tool_environment(tmp_path, "/usr/bin/true")
    assert set(env) == {"PATH", "LC_ALL", "LANG", "TMPDIR", "TMP", "TEMP", "HOME"}
    assert env["TMPDIR"] == env["HOME"] == str(tmp_path)
    assert all(bounded.shell_safe(p) for p in env["PATH"].split(":"))


@needs_nvcc
def test_the_report_command_runs_nothing_of_the_pattern(tmp_path):
    marker = tmp_path / "pwned"
    write_pattern(tmp_path / "p", SAXPY, "saxpy", flags=[f"-DX=$(touch {marker})"],
                  engine="compiled")
    done = subprocess.run([sys.executable, "-m", "sectorviz", "report",
                           str(tmp_path / "p" / "p.sectorviz.json")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
