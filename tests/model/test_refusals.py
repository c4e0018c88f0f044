"""Issue 22, item 5: what is wrong is refused, never silently used: a key twice in one JSON
object, a name with a trailing newline, a `.npy` of an unknown format version, machine
sizes past physical bounds."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from sectorviz.cli import main
from sectorviz.model import PatternError, pattern_from_dict, pattern_from_text
from sectorviz.model.kernel import _values_file

BASE = {"format": "sectorviz.pattern/1", "launch": {"grid": [1], "block": [32]},
        "arrays": {"a": {"dtype": "float32", "length": 1024}},
        "accesses": [{"name": "load", "op": "load", "array": "a", "index": "threadIdx.x"}]}


@pytest.mark.parametrize("text, message", [
    ('{"n": 1,\n "n": 2}', "line 2, column 2: the key 'n' appears twice in one object"),
    ('{"format": "sectorviz.pattern/1",\n "launch": {"grid": [1], "block": [32],\n'
     '  "grid": [2]}}', "line 3, column 3: the key 'grid' appears twice"),
    ('{"a": [{"x": 1}, {"y": {"z": 1, "z": 1}}]}', "line 1, column 33: the key 'z'"),
    ('{"b": {"c": 1, "c": 2}, "b": 1}', "line 1, column 16: the key 'c'"),  # reading order
])
def test_a_key_twice_in_one_object_at_any_depth_is_one_line(text, message):
    with pytest.raises(PatternError) as info:
        pattern_from_text(text)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_the_same_key_in_different_objects_is_fine():
    doc = json.loads(json.dumps(BASE))
    doc["arrays"]["b"] = {"dtype": "float32", "length": 1024}  # "dtype", "length" again
    assert pattern_from_text(json.dumps(doc)).arrays[1].name == "b"


@pytest.mark.parametrize("name", ["a\n", "n\n", "x\r", " a", "a-b"])
def test_names_are_whole_identifiers(name):
    doc = {**BASE, "params": {name: 1}}
    with pytest.raises(PatternError, match="is not a valid name"):
        pattern_from_dict(doc)


def _npy_bytes(version: tuple[int, int]) -> bytes:
    stream = io.BytesIO()
    np.lib.format.write_array(stream, np.arange(64, dtype=np.int32),
                              version=version if version in ((1, 0), (2, 0), (3, 0)) else (2, 0))
    raw = bytearray(stream.getvalue())
    raw[6:8] = bytes(version)
    return bytes(raw)


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_npy_versions_numpy_writes_are_read(tmp_path, version):
    (tmp_path / "v.npy").write_bytes(_npy_bytes(version))
    assert _values_file(tmp_path / "v.npy", 64, "here").tolist() == list(range(64))


@pytest.mark.parametrize("version", [(99, 7), (4, 0), (2, 1), (0, 0)])
def test_other_npy_versions_are_refused(tmp_path, version):
    (tmp_path / "v.npy").write_bytes(_npy_bytes(version))
    with pytest.raises(PatternError, match=f"^here: cannot read v.npy: it is a .npy file of "
                                           f"format version {version[0]}.{version[1]}; only "
                                           "1.0, 2.0 and 3.0 are read$"):
        _values_file(tmp_path / "v.npy", 64, "here")


@pytest.mark.parametrize("kernel, message", [
    ({"ptx": "k.ptx", "source": "k.cu"}, "kernel: give exactly one of 'source' (a .cu file), "
                                          "'code', 'ptx' (a .ptx file), 'triton' or 'numba' "
                                          "(a .py file)"),
    ({"ptx": "k.ptx", "flags": ["-DN=4"]}, "kernel.flags: a 'ptx' kernel is run as compiled in "
                                           "its file"),
    ({"ptx": "k.ptx", "arch": "sm_80"}, "kernel.arch: a 'ptx' kernel"),
    ({"ptx": "k.ptx", "engine": "source"}, "kernel.engine: a 'ptx' kernel"),
])
def test_a_ptx_kernel_is_run_as_compiled(kernel, message):
    doc = {key: value for key, value in BASE.items() if key != "accesses"}
    with pytest.raises(PatternError) as info:
        pattern_from_dict({**doc, "kernel": {"function": "k", **kernel}})
    assert str(info.value).startswith(message)
    assert pattern_from_dict({**doc, "kernel": {"function": "k", "ptx": "k.ptx",
                                                "engine": "compiled"}}).kernel["ptx"] == "k.ptx"


def test_the_compiled_engine_level_is_sass_or_ptx():
    doc = {key: value for key, value in BASE.items() if key != "accesses"}
    with pytest.raises(PatternError, match="^kernel.level: expected one of sass, ptx, got "
                                           "'cubin'"):
        pattern_from_dict({**doc, "kernel": {"function": "k", "code": "", "level": "cubin"}})
    for level in ("sass", "ptx"):  # a PTX file is assembled too
        kernel = {"function": "k", "ptx": "k.ptx", "level": level}
        assert pattern_from_dict({**doc, "kernel": kernel}).kernel["level"] == level


@pytest.mark.parametrize("machine, message", [
    ({"preset": "H100-SXM", "l2_bytes": 2**40 + 128}, "machine.l2_bytes: 1,099,511,627,904 is "
                                                  "over the physical bound of 1,099,511,627,776"),
    ({"preset": "H100-SXM", "sms": 2**62, "order": "waves"},
     "machine.sms: 4,611,686,018,427,387,904 is over the physical bound of 65,536"),
    ({"preset": "H100-SXM", "threads_per_sm": 2**17}, "machine.threads_per_sm: 131,072 is over"),
])
def test_machine_sizes_keep_physical_bounds(machine, message):
    with pytest.raises(PatternError) as info:
        pattern_from_dict({**BASE, "machine": machine})
    assert str(info.value).startswith(message)


def test_machine_at_its_bounds_is_accepted():
    p = pattern_from_dict({**BASE, "machine": {"preset": "H100-SXM", "l2_bytes": 2**40,
                                               "sms": 2**16}})
    assert (p.machine.l2_bytes, p.machine.sms) == (2**40, 2**16)


def test_an_l2_flag_past_the_bound_is_one_line(tmp_path, capsys):
    path = tmp_path / "p.sectorviz.json"
    path.write_text(json.dumps(BASE))
    assert main(["report", str(path), "--machine", "H100-SXM", "--l2-bytes", str(2**64)]) == 2
    err = capsys.readouterr().err
    assert err == (f"{path}: machine.l2_bytes: {2**64:,} is over the physical bound of "
                   f"{2**40:,}\n")
