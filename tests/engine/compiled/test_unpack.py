"""The bundle's compressed NVRTC: unpacked into the cache once, checked, private."""

import hashlib
import json
import lzma
import stat

from sectorviz.engine.compiled import compiler
from sectorviz.engine.compiled.unpack import MANIFEST, unpacked

LIBRARY = b"\x7fELF stand-in for libnvrtc" * 100
BUILTINS = b"\x7fELF stand-in for the builtins" * 50


def _packed_folder(folder, files, digests=None):
    """`files` {name: bytes} written as the bundle ships them: NAME.xz and the manifest
    (recording `digests` where given, else the true SHA-256s)."""
    folder.mkdir()
    records = {}
    for name, data in files.items():
        (folder / f"{name}.xz").write_bytes(lzma.compress(data))
        digest = (digests or {}).get(name, hashlib.sha256(data).hexdigest())
        records[name] = {"sha256": digest, "size": len(data)}
    (folder / MANIFEST).write_text(json.dumps({"files": records}))
    return folder


def test_a_library_that_is_not_compressed_is_used_where_it_is(tmp_path):
    assert unpacked(tmp_path / "libnvrtc.so.13") == tmp_path / "libnvrtc.so.13"


def test_unpacks_every_file_of_the_manifest_beside_each_other(tmp_path, ptx_cache):
    lib = _packed_folder(tmp_path / "lib", {"libnvrtc.so.13": LIBRARY,
                                            "libnvrtc-builtins.so.13.5": BUILTINS})
    found = unpacked(lib / "libnvrtc.so.13.xz")
    assert found is not None and found.name == "libnvrtc.so.13"
    assert found.read_bytes() == LIBRARY
    assert (found.parent / "libnvrtc-builtins.so.13.5").read_bytes() == BUILTINS
    assert found.parent.parent == ptx_cache / "nvrtc"
    assert stat.S_IMODE(found.parent.stat().st_mode) == 0o700


def test_a_cache_folder_given_relative_unpacks_to_an_absolute_path(tmp_path, monkeypatch):
    lib = _packed_folder(tmp_path / "lib", {"libnvrtc.so.13": LIBRARY})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", "relative-cache")
    found = unpacked(lib / "libnvrtc.so.13.xz")
    assert found == tmp_path / "relative-cache" / "nvrtc" / found.parent.name / found.name


def test_a_second_look_reuses_the_unpacked_files(tmp_path):
    lib = _packed_folder(tmp_path / "lib", {"libnvrtc.so.13": LIBRARY})
    first = unpacked(lib / "libnvrtc.so.13.xz")
    assert first is not None
    before = first.stat().st_mtime_ns
    (lib / "libnvrtc.so.13.xz").write_bytes(b"not read again")
    assert unpacked(lib / "libnvrtc.so.13.xz") == first
    assert first.stat().st_mtime_ns == before


def test_a_digest_that_does_not_match_unpacks_nothing(tmp_path, ptx_cache):
    lib = _packed_folder(tmp_path / "lib", {"libnvrtc.so.13": LIBRARY},
                         digests={"libnvrtc.so.13": "0" * 64})
    assert unpacked(lib / "libnvrtc.so.13.xz") is None
    assert not list(ptx_cache.rglob("libnvrtc.so.13"))


def test_a_missing_or_malformed_manifest_is_no_nvrtc(tmp_path):
    lib = _packed_folder(tmp_path / "lib", {"libnvrtc.so.13": LIBRARY})
    (lib / MANIFEST).write_text('{"files": ["libnvrtc.so.13"]}')
    assert unpacked(lib / "libnvrtc.so.13.xz") is None
    (lib / MANIFEST).unlink()
    assert unpacked(lib / "libnvrtc.so.13.xz") is None


def test_the_bundles_packed_nvrtc_is_found_unpacked_in_the_cache(tmp_path, monkeypatch,
                                                                 ptx_cache):
    bundle = tmp_path / "_MEIPASS" / "nvidia"
    include = bundle / "cu13" / "include"
    include.mkdir(parents=True)
    (include / "cuda_runtime.h").write_text("// stand-in: only looked for\n")
    _packed_folder(bundle / "cu13" / "lib", {"libnvrtc.so.13": LIBRARY})
    loaded = []  # the libraries find_nvrtc asked the version of (loading them)
    monkeypatch.setattr(compiler, "wheel_folders", lambda: [str(bundle)])
    monkeypatch.setattr(compiler, "nvrtc_version", lambda path: loaded.append(path) or "13.5")
    compiler.find_nvrtc.cache_clear()
    try:
        found = compiler.find_nvrtc()
    finally:
        compiler.find_nvrtc.cache_clear()
    unpacked_path = next((ptx_cache / "nvrtc").glob("*/libnvrtc.so.13"))
    assert loaded == [str(unpacked_path)] and unpacked_path.read_bytes() == LIBRARY
    assert found == compiler.Toolchain(str(unpacked_path), "13.5", "nvrtc", (str(include),))
