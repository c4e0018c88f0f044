"""Trimming for the bundle: collected files the app never loads, and debug info to strip.

NVRTC's libraries ship whole (libnvrtc-builtins carries the headers it has built in); of the
wheels' `include/` folders only the headers NVRTC compiles do (`nvrtc_header_kept`, its
keep-list measured with packaging/nvrtc_headers.py). Libraries PyInstaller collected only for
what was trimmed go too (`without_orphans`).

PyInstaller's Qt hooks collect every plugin and translation that goes with the Qt modules the
app imports; the spec drops the ones `unused` names. A Python built from source carries debug
info in libpython and its extension modules (tens of MiB): `without_debug_info` hands COLLECT
copies with it stripped, and leaves every other binary (auditwheel-patched ones included)
byte for byte as it was. System libraries every desktop has stay out (`host_provided`).
"""

from __future__ import annotations

import posixpath
import shutil
import struct
import subprocess
from fnmatch import fnmatch, fnmatchcase
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
    # GTK 3's platform theme: it would pair the system's GTK 3 (never bundled) with the
    # bundle's copies of cairo, pango and GIO, which it alone pulls in (~6 MiB). The
    # xdgdesktopportal theme still gives native file dialogs where a portal runs.
    "PySide6/Qt/plugins/platformthemes/libqgtk3.so",
    # PNG is built into QtGui; SVG (icons) is the only other image format the app reads.
    "PySide6/Qt/plugins/imageformats/libq[!s]*.so",
)

# System libraries PyInstaller collects that the bundle leaves to the host, as PySide6's and
# numpy's wheels do (manylinux policy and Qt's X11 requirements name them; every desktop
# that runs Qt 6 has them). Bundled, Debian 12's copies made the bundle need glibc 2.33 to
# 2.36. libstdc++ and libgcc_s: the bundle's files ask at most GLIBCXX_3.4.21 and
# CXXABI_1.3.11 (GCC 5), which a glibc 2.28 system's GCC 8 libstdc++ provides (glibc_check.py
# fails CI when they ask more), and the host's GL drivers need the host's own, which may be
# newer than any bundled copy. The XCB utility libraries (cursor, icccm, image, keysyms,
# render-util, util) stay in: desktops often lack them (Ubuntu 22.04 has no libxcb-cursor0,
# which Qt 6.5+ needs) and they need no newer glibc than 2.28.
HOST_LIBRARIES = (
    "libstdc++.so.*", "libgcc_s.so.*",
    # X11 and the core XCB protocol libraries (libxcb's extensions), xkbcommon
    "libX11.so.*", "libX11-xcb.so.*", "libXau.so.*", "libXdmcp.so.*", "libXext.so.*",
    "libXrender.so.*", "libbsd.so.*", "libmd.so.*", "libxcb.so.*", "libxcb-glx.so.*",
    "libxcb-present.so.*", "libxcb-randr.so.*", "libxcb-render.so.*", "libxcb-shape.so.*",
    "libxcb-shm.so.*", "libxcb-sync.so.*", "libxcb-xfixes.so.*", "libxcb-xinerama.so.*",
    "libxcb-xinput.so.*", "libxcb-xkb.so.*", "libxkbcommon.so.*", "libxkbcommon-x11.so.*",
    # fonts
    "libfontconfig.so.*", "libfreetype.so.*", "libpng16.so.*", "libexpat.so.*",
    "libbrotlicommon.so.*", "libbrotlidec.so.*", "libharfbuzz.so.*", "libgraphite2.so.*",
    # GLib and what it links
    "libglib-2.0.so.*", "libgobject-2.0.so.*", "libgio-2.0.so.*", "libgmodule-2.0.so.*",
    "libgthread-2.0.so.*", "libpcre2-8.so.*", "libmount.so.*", "libblkid.so.*",
    "libselinux.so.*",
    # D-Bus and what it links
    "libdbus-1.so.*", "libsystemd.so.*", "libcap.so.*", "libgcrypt.so.*", "libgpg-error.so.*",
    "liblz4.so.*", "libzstd.so.*",
    # Kerberos (GSSAPI)
    "libgssapi_krb5.so.*", "libkrb5.so.*", "libkrb5support.so.*", "libk5crypto.so.*",
    "libcom_err.so.*", "libkeyutils.so.*",
)


def host_provided(destination: str) -> bool:
    """Whether a collected file (by its path inside the bundle) is a system library the
    bundle leaves to the host: one HOST_LIBRARIES names, collected as a dependency (top
    level of the bundle), not one a wheel ships in its own folder."""
    return "/" not in destination and any(fnmatchcase(destination, pattern)
                                          for pattern in HOST_LIBRARIES)


# The wheels' headers NVRTC compiles (paths under an `include/` folder): every top-level
# runtime header, less the driver API's and the graphics interop's (host code, which NVRTC
# never compiles) and NVRTC's own, and below the top level the files NVRTC_HEADERS lists.
# That list is measured with packaging/nvrtc_headers.py (strace on NVRTC compiling every
# `*-cuda` example and a probe that includes cuda_fp16/bf16/fp8, cooperative groups,
# pipelines and barriers, libcu++ and CUB's warp and block primitives): 749 of the wheels'
# 2,435 files, 10 of their 28 MiB. .ci/bundle.sh compiles the same with the bundle's NVRTC,
# so a list that newer wheels outgrew fails CI rather than a user's compile.
NVRTC_HEADERS = Path(__file__).resolve().with_name("nvrtc_headers.txt")
HOST_ONLY_HEADERS = ("cuda.h", "cuda[A-Z]*.h", "*_interop.h", "nvrtc.h")


def measured_headers(path: Path = NVRTC_HEADERS) -> frozenset[str]:
    """The headers a list like NVRTC_HEADERS names, one a line ('#' starts a comment)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and line[0] != "#")


def nvrtc_header_kept(header: str, measured: frozenset[str]) -> bool:
    """Whether a header of the CUDA wheels (its path under `include/`, '/'-separated) goes in
    the bundle: a top-level one that is not HOST_ONLY_HEADERS, or one `measured` names."""
    if "/" not in header:
        return not any(fnmatch(header, pattern) for pattern in HOST_ONLY_HEADERS)
    return header in measured


def unused(destination: str) -> bool:
    """Whether a collected file (by its path inside the bundle) is one the app never loads."""
    return any(fnmatch(destination, pattern) for pattern in UNUSED)


def needed_libraries(path: str | Path) -> list[str]:
    """The libraries a 64-bit little-endian ELF file links (its DT_NEEDED entries); [] for
    any other file."""
    with open(path, "rb") as f:
        head = f.read(64)
        if len(head) < 64 or head[:6] != b"\x7fELF\x02\x01":
            return []
        (shoff,) = struct.unpack_from("<Q", head, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", head, 0x3A)
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        sections = [struct.unpack_from("<IIQQQQII", table, i * shentsize) for i in range(shnum)]
        for _, kind, _, _, offset, size, link, _ in sections:
            if kind != 6:  # SHT_DYNAMIC; its sh_link is the string table of the names
                continue
            f.seek(offset)
            entries = f.read(size)
            names_offset, names_size = sections[link][4], sections[link][5]
            f.seek(names_offset)
            names = f.read(names_size)
            found = []
            for tag, value in struct.iter_unpack("<qQ", entries):
                if tag == 0:  # DT_NULL
                    break
                if tag == 1:  # DT_NEEDED
                    found.append(names[value:names.index(b"\0", value)].decode())
            return found
    return []


def without_orphans(binaries: list[Entry]) -> list[Entry]:
    """`binaries` less the libraries PyInstaller collected as dependencies (top level of the
    bundle, libpython aside) that no kept file links any more, once `unused` took away what
    did, and less the links to files not kept."""
    files = {dest: src for dest, src, kind in binaries if kind != "SYMLINK"}

    def dependency(dest: str) -> bool:
        return "/" not in dest and not dest.startswith("libpython")

    kept = {dest for dest in files if not dependency(dest)}
    queue = list(kept)
    while queue:
        for name in needed_libraries(files[queue.pop()]):
            if name in files and name not in kept:
                kept.add(name)
                queue.append(name)
    return [(dest, src, kind) for dest, src, kind in binaries
            if (dest in kept if kind != "SYMLINK"
                else posixpath.normpath(posixpath.join(posixpath.dirname(dest), src)) in kept)]


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
