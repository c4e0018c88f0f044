"""Trimming for the bundle: collected files the app never loads, and debug info to strip.

PyInstaller's Qt hooks collect every plugin and translation that goes with the Qt modules the
app imports; the spec drops the ones `unused` names. A Python built from source carries debug
info in libpython and its extension modules (tens of MiB): `without_debug_info` hands COLLECT
copies with it stripped, and leaves every other binary (auditwheel-patched ones included)
byte for byte as it was.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from fnmatch import fnmatch
from pathlib import Path

Entry = tuple[str, str, str]  # PyInstaller TOC entry: (destination, source, type code)

UNUSED = (
    # The app is English only; without Qt's translations its standard buttons stay English too.
    "PySide6/Qt/translations/*",
    # Platforms for framebuffers, KMS and VNC; the bundle runs on X11 (xcb), Wayland or
    # headless (offscreen, minimal). Their input plugins and support libraries go with them.
    "PySide6/Qt/plugins/platforms/libqeglfs.so",
    "PySide6/Qt/plugins/platforms/libqlinuxfb.so",
    "PySide6/Qt/plugins/platforms/libqminimalegl.so",
    "PySide6/Qt/plugins/platforms/libqvkkhrdisplay.so",
    "PySide6/Qt/plugins/platforms/libqvnc.so",
    "PySide6/Qt/plugins/egldeviceintegrations/*",
    "PySide6/Qt/plugins/generic/*",
    "PySide6/Qt/lib/libQt6EglFSDeviceIntegration.so*",
    "PySide6/Qt/lib/libQt6EglFsKmsSupport.so*",
    "PySide6/Qt/lib/libQt6Network.so*",  # only the VNC and TUIO plugins above link it
    # PNG is built into QtGui; SVG (icons) is the only other image format the app reads.
    "PySide6/Qt/plugins/imageformats/libq[!s]*.so",
)


def unused(destination: str) -> bool:
    """Whether a collected file (by its path inside the bundle) is one the app never loads."""
    return any(fnmatch(destination, pattern) for pattern in UNUSED)


def has_debug_info(path: Path) -> bool:
    """Whether `path` is a 64-bit little-endian ELF file with a .debug_info section."""
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:6] != b"\x7fELF\x02\x01":
            return False
        (shoff,) = struct.unpack_from("<Q", head, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
        if not shoff or shstrndx >= shnum:
            return False
        f.seek(shoff + shstrndx * shentsize + 0x18)
        names_offset, names_size = struct.unpack("<QQ", f.read(16))
        f.seek(names_offset)
        return b".debug_info\0" in f.read(names_size)


def without_debug_info(binaries: list[Entry], workdir: Path) -> list[Entry]:
    """`binaries` with each one that has debug info replaced by a copy stripped of it
    (`strip --strip-debug`, binutils) under `workdir`."""
    out = []
    for dest, src, kind in binaries:
        if has_debug_info(Path(src)):
            strip = shutil.which("strip")
            if strip is None:
                raise SystemExit(f"{src} has debug info; install binutils to strip it")
            copy = workdir / dest
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, copy)
            subprocess.run([strip, "--strip-debug", str(copy)], check=True)
            src = str(copy)
        out.append((dest, src, kind))
    return out
