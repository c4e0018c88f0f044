"""Packaging, fast checks only (building the bundle takes minutes: .ci/bundle.sh does that).

The spec is run with stand-ins for PyInstaller's build classes, so these tests need no
PyInstaller; the smoke test runs in this process on the offscreen platform.
"""

import configparser
import json
import lzma
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGING = ROOT / "packaging"
ICONS = ROOT / "resources" / "icons"
sys.path.insert(0, str(PACKAGING))

import glibc_check  # noqa: E402
import pack_nvrtc  # noqa: E402
from render_icons import SIZES, png_path  # noqa: E402
from trim import (  # noqa: E402
    has_debug_info,
    host_provided,
    measured_headers,
    needed_libraries,
    nvrtc_header_kept,
    unused,
    without_orphans,
)


class _Built:
    """Stands in for Analysis, PYZ, EXE and COLLECT: keeps what the spec passed."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs
        self.binaries, self.datas, self.pure, self.scripts = [], [], [], []


@pytest.fixture
def spec(tmp_path, monkeypatch):
    """The spec's namespace after running it with stand-in build classes."""
    pytest.importorskip("tomllib", reason="the spec reads pyproject.toml with tomllib (3.11)")
    hooks = types.ModuleType("PyInstaller.utils.hooks")
    hooks.collect_data_files = lambda package: [("model/x.json", f"{package}/model")]
    for name in ("PyInstaller", "PyInstaller.utils"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "PyInstaller.utils.hooks", hooks)
    monkeypatch.setattr(sys, "path", list(sys.path))
    handed: list = []  # what the spec asks pack_nvrtc.packed to compress (minutes for real)
    monkeypatch.setattr(pack_nvrtc, "packed", lambda libraries, workdir: handed.extend(
        libraries) or [(str(workdir / "packed.json"), "nvidia/cu13/lib")])
    namespace = {"SPECPATH": str(PACKAGING), "workpath": str(tmp_path), "handed": handed,
                 **{name: type(name, (_Built,), {}) for name in
                    ("Analysis", "PYZ", "EXE", "COLLECT")}}
    path = PACKAGING / "sectorviz.spec"
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def test_spec_takes_name_and_version_from_pyproject(spec):
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert (spec["NAME"], spec["VERSION"]) == (project["name"], project["version"])
    assert spec["exe"].kwargs["name"] == spec["coll"].kwargs["name"] == project["name"]


def test_spec_is_one_folder_without_upx_and_unused_qt(spec):
    exe, coll, analysis = spec["exe"], spec["coll"], spec["a"]
    assert exe.kwargs["exclude_binaries"] and exe.kwargs["upx"] is False
    assert coll.kwargs["upx"] is False
    excludes = set(analysis.kwargs["excludes"])
    for module in ("PySide6.QtWebEngineCore", "PySide6.QtQml", "PySide6.QtQuick",
                   "PySide6.Qt3DCore", "PySide6.QtMultimedia", "PySide6.QtCharts", "PyQt5",
                   "PyQt6", "PySide2"):
        assert module in excludes
    assert not excludes & {"PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets",
                           "PySide6.QtSvg"}
    assert {"numba", "llvmlite"} <= excludes  # the bundle runs the cache model on numpy
    assert (str(ROOT / "resources"), "resources") in analysis.kwargs["datas"]
    assert "sectorviz.smoke" in analysis.kwargs["hiddenimports"]


def test_spec_ships_nvrtc_libraries_packed_and_the_rest_as_they_are(spec):
    pytest.importorskip("nvidia", reason="NVIDIA's wheels are not installed here")
    handed, datas = spec["handed"], spec["a"].kwargs["datas"]
    names = {Path(source).name for source, _ in handed}
    assert any(name.startswith("libnvrtc.so.") for name in names), names
    assert all(pack_nvrtc.is_nvrtc_library(source) for source, _ in handed)
    assert not [source for source, _ in datas if pack_nvrtc.is_nvrtc_library(source)]
    assert any(Path(source).name == "cuda_runtime.h" for source, _ in datas)


def test_runtime_hook_pins_pyqtgraph_to_pyside6(spec, monkeypatch):
    (hook,) = spec["a"].kwargs["runtime_hooks"]
    monkeypatch.delenv("PYQTGRAPH_QT_LIB", raising=False)
    exec(compile(Path(hook).read_text(), hook, "exec"), {})
    assert os.environ["PYQTGRAPH_QT_LIB"] == "PySide6"


def test_trim_keeps_what_the_app_loads():
    qt = "PySide6/Qt/"
    for kept in ("plugins/platforms/libqxcb.so", "plugins/platforms/libqoffscreen.so",
                 "plugins/platforms/libqwayland-egl.so", "plugins/imageformats/libqsvg.so",
                 "plugins/iconengines/libqsvgicon.so", "lib/libQt6XcbQpa.so.6",
                 "lib/libQt6Gui.so.6"):
        assert not unused(qt + kept), kept
    for dropped in ("translations/qtbase_de.qm", "plugins/platforms/libqeglfs.so",
                    "plugins/platforms/libqvnc.so", "plugins/imageformats/libqjpeg.so",
                    "lib/libQt6Network.so.6", "plugins/platformthemes/libqgtk3.so"):
        assert unused(qt + dropped), dropped
    assert not unused("resources/examples/vector-add.sectorviz.json")


def test_trim_keeps_the_headers_nvrtc_opens():
    measured = measured_headers()
    # what every NVRTC compile opens, and what the NVRTC stand-ins include
    for header in ("cuda_runtime.h", "cuda_fp16.h", "cooperative_groups.h",
                   "cccl/cuda/std/cstdint", "cccl/cuda/std/climits", "nv/target"):
        assert nvrtc_header_kept(header, measured), header
    for header in ("cuda.h", "cudaGL.h", "cudaVDPAUTypedefs.h", "cuda_gl_interop.h", "nvrtc.h",
                   "cccl/cub/device/device_reduce.cuh", "cccl/thrust/system/omp/execution_policy.h",
                   "cccl/cuda/std/__never_opened_by_a_compile"):
        assert not nvrtc_header_kept(header, measured), header
    assert all(not line.startswith(("/", "#")) and ".." not in line for line in measured)


def test_trim_drops_libraries_only_trimmed_files_linked(tmp_path):
    numpy_core = pytest.importorskip("numpy._core._multiarray_umath")
    import _ctypes

    needed = needed_libraries(numpy_core.__file__)
    blas = next(name for name in needed if "openblas" in name)
    assert "libc.so.6" in needed and needed_libraries(ICONS / "sectorviz.svg") == []
    elf = str(Path(_ctypes.__file__))
    entries = [("numpy/_core/umath.so", numpy_core.__file__, "EXTENSION"),
               (blas, elf, "BINARY"),  # linked by a kept file: stays
               ("libffi.so.8", elf, "BINARY"),  # linked by the kept stand-in for the BLAS
               ("libcairo.so.2", elf, "BINARY"),  # linked by nothing kept: goes
               ("libpython3.11.so.1.0", elf, "BINARY"),  # the bootloader loads it: stays
               ("libQt6Network.so.6", "PySide6/Qt/lib/libQt6Network.so.6", "SYMLINK"),
               ("libblas.so", blas, "SYMLINK")]
    kept = [dest for dest, _, _ in without_orphans(entries)]
    assert kept == ["numpy/_core/umath.so", blas, "libffi.so.8", "libpython3.11.so.1.0",
                    "libblas.so"]


def test_the_host_provides_the_desktop_libraries_not_the_interpreters():
    for left_out in ("libstdc++.so.6", "libgcc_s.so.1", "libX11.so.6", "libxcb.so.1",
                     "libxcb-randr.so.0", "libxkbcommon.so.0", "libfontconfig.so.1",
                     "libglib-2.0.so.0", "libdbus-1.so.3", "libsystemd.so.0", "libkrb5.so.3"):
        assert host_provided(left_out), left_out
    # the interpreter's own libraries, the XCB utilities desktops lack, and wheels' copies
    for kept in ("libpython3.11.so.1.0", "libssl.so.3", "libcrypto.so.3", "libffi.so.8",
                 "liblzma.so.5", "libz.so.1", "libxcb-cursor.so.0", "libxcb-icccm.so.4",
                 "PySide6/Qt/lib/libicuuc.so.73", "numpy.libs/libstdc++.so.6"):
        assert not host_provided(kept), kept


def test_packed_nvrtc_unpacks_to_the_same_bytes_and_is_packed_once(tmp_path, monkeypatch):
    from sectorviz.engine.compiled.unpack import unpacked

    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(tmp_path / "cache"))
    wheel = tmp_path / "wheel"
    wheel.mkdir()
    library, builtins = wheel / "libnvrtc.so.13", wheel / "libnvrtc-builtins.so.13.5"
    library.write_bytes(b"\x7fELF library" * 1000)
    builtins.write_bytes(b"\x7fELF builtins" * 1000)
    entries = [(str(library), "nvidia/cu13/lib"), (str(builtins), "nvidia/cu13/lib")]
    shipped = pack_nvrtc.packed(entries, tmp_path / "work")
    assert {(Path(source).name, folder) for source, folder in shipped} == {
        ("libnvrtc.so.13.xz", "nvidia/cu13/lib"), ("libnvrtc-builtins.so.13.5.xz",
                                                   "nvidia/cu13/lib"),
        ("packed.json", "nvidia/cu13/lib")}
    packed_library = tmp_path / "work" / "nvidia/cu13/lib/libnvrtc.so.13.xz"
    found = unpacked(packed_library)
    assert found is not None and found.read_bytes() == library.read_bytes()
    assert (found.parent / builtins.name).read_bytes() == builtins.read_bytes()
    before = packed_library.stat().st_mtime_ns
    pack_nvrtc.packed(entries, tmp_path / "work")  # same libraries: not compressed again
    assert packed_library.stat().st_mtime_ns == before
    library.write_bytes(b"\x7fELF newer library")
    pack_nvrtc.packed(entries, tmp_path / "work")
    assert lzma.decompress(packed_library.read_bytes()) == b"\x7fELF newer library"


def test_glibc_check_reads_only_undefined_symbols_versions():
    text = ("0000000000000000      DF *UND*\t0000000000000000 (GLIBC_2.34) pthread_create\n"
            "0000000000000000      DF *UND*\t0000000000000000  GLIBC_2.2.5 malloc\n"
            "0000000000000000      DF *UND*\t0000000000000000 (GLIBCXX_3.4.21) _ZNSs4swapERSs\n"
            "0000000000001000 g    DF .text\t0000000000000010  GLIBC_2.40  defined_here\n")
    assert glibc_check.wanted_versions(text) == {"GLIBC": (2, 34), "GLIBCXX": (3, 4, 21)}
    assert glibc_check.parse_version("2.28") < (2, 34) and glibc_check.shown((2, 2, 5)) == "2.2.5"


def test_glibc_check_fails_above_its_target_only(tmp_path, capsys):
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("binutils (objdump) is not installed")
    import _ctypes

    shutil.copy(_ctypes.__file__, tmp_path / "a.so")
    (tmp_path / "link.so").symlink_to(tmp_path / "a.so")
    (tmp_path / "notes.txt").write_text("not ELF")
    assert glibc_check.elf_files(tmp_path) == [tmp_path / "a.so"]
    needed = glibc_check.needs(tmp_path / "a.so", objdump)["GLIBC"]
    assert glibc_check.report(tmp_path, needed, objdump) == 0
    assert f"the highest GLIBC_ one needs is {glibc_check.shown(needed)}" in \
        capsys.readouterr().out
    assert glibc_check.report(tmp_path, (2, 0), objdump) == 1
    assert "needs " + glibc_check.shown(needed) + ": a.so" in capsys.readouterr().out


def test_glibc_check_fails_when_libstdcxx_is_asked_more_than_gcc_8_has(tmp_path, monkeypatch,
                                                                       capsys):
    (tmp_path / "a.so").write_bytes(b"\x7fELF")
    wants = {"GLIBC": (2, 17), "GLIBCXX": (3, 4, 26)}  # GCC 9's GLIBCXX: not on RHEL 8
    monkeypatch.setattr(glibc_check, "needs", lambda path, objdump: wants)
    assert glibc_check.report(tmp_path, (2, 28), "objdump") == 1
    assert "GLIBCXX_ asked for is 3.4.26, the host's (GCC 8) has 3.4.25: above it" in \
        capsys.readouterr().out
    wants["GLIBCXX"] = (3, 4, 21)
    assert glibc_check.report(tmp_path, (2, 28), "objdump") == 0


def test_debug_info_is_found_only_in_elf_files():
    assert not has_debug_info(ICONS / "sectorviz.svg")
    assert isinstance(has_debug_info(sys.executable), bool)


def test_scripts_parse():
    for script in (PACKAGING / "build.sh", ROOT / ".ci" / "bundle.sh",
                   ROOT / ".ci" / "wheel.sh"):
        subprocess.run(["bash", "-n", str(script)], check=True)


def test_desktop_file_has_the_required_keys():
    path = ROOT / "resources" / "sectorviz.desktop"
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(path, encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Name"] == "sectorviz"
    assert entry["Exec"].split()[0] == "sectorviz"
    assert entry["Icon"] == "sectorviz"
    assert entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";")
    if shutil.which("desktop-file-validate"):
        done = subprocess.run(["desktop-file-validate", str(path)], capture_output=True,
                              text=True)
        assert done.returncode == 0 and "error" not in done.stdout, done.stdout


def test_icon_svg_and_pngs_exist(qapp):
    from PySide6.QtGui import QImage
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(ICONS / "sectorviz.svg"))
    assert renderer.isValid()
    box = renderer.viewBoxF()
    assert box.width() == box.height() > 0
    for size in SIZES:
        image = QImage(str(png_path(size)))
        assert (image.width(), image.height()) == (size, size)
        assert image.hasAlphaChannel()


def test_smoke_test_runs_in_process_and_reports_ok(qapp, tmp_path):
    from sectorviz.smoke import run_smoke_test

    status = run_smoke_test(tmp_path)
    doc = json.loads((tmp_path / "smoke.json").read_text())
    assert status == 0, [c for c in doc["checks"] if not c["ok"]]
    assert doc["ok"] is True
    names = [c["name"] for c in doc["checks"]]
    for step in ("open window", "step warp", "edit stride", "export svg", "export pdf",
                 "export png", "close window"):
        assert step in names
    for suffix in (".svg", ".pdf", ".png"):
        assert (tmp_path / f"smoke-grid{suffix}").stat().st_size > 0
    assert doc["timings"]["total_s"] > 0


def test_smoke_test_refuses_a_pipe_as_its_report(tmp_path):
    from sectorviz.atomic import RefusedOutput
    from sectorviz.smoke import run_smoke_test

    os.mkfifo(tmp_path / "smoke.json")
    with pytest.raises(RefusedOutput, match="it is a named pipe"):
        run_smoke_test(tmp_path)  # before the session starts; the pipe is left as it was
    assert not (tmp_path / "smoke.json").is_file()
