"""NVRTC's libraries as the desktop bundle ships them: xz-compressed, unpacked on first use.

packaging/pack_nvrtc.py writes, in the bundle's `nvidia/cu*/lib/` folder, `NAME.xz` for each
NVRTC library and `packed.json`, {"files": {NAME: {"sha256": hex SHA-256 of NAME's bytes,
"size": their count}}}. The first
look for NVRTC unpacks every file the manifest names into one folder of the user's cache,
ptxcache.cache_dir()/nvrtc/<the first 16 hex digits of the manifest's own SHA-256> (mode 0700),
each checked against its SHA-256 and written atomically; they share a folder because libnvrtc
loads its builtins library from beside itself ($ORIGIN). A file already there with the size of
what it was checked against is used as it is (files there are only ever written whole, after
their check, in a folder only the user can enter).
"""

from __future__ import annotations

import hashlib
import json
import lzma
from pathlib import Path

from ...atomic import write_atomic
from .ptxcache import cache_dir

MANIFEST = "packed.json"
SUFFIX = ".xz"


def unpacked(library: Path) -> Path | None:
    """`library` itself, or for a compressed one (NAME.xz beside a MANIFEST) the path of NAME
    unpacked into the cache; None when it cannot be unpacked (no manifest or an entry of the
    wrong shape, a digest that does not match, a cache that cannot be written)."""
    if library.suffix != SUFFIX:
        return library
    try:
        text = (library.parent / MANIFEST).read_bytes()
        files = json.loads(text)["files"]
        # absolute: the compile's child process loads it from a folder of its own
        folder = cache_dir().absolute() / "nvrtc" / hashlib.sha256(text).hexdigest()[:16]
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        folder.chmod(0o700)
        for name, recorded in files.items():
            _unpack_checked(library.parent / f"{name}{SUFFIX}", folder / name, recorded)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, lzma.LZMAError):
        return None
    return folder / library.stem


def _unpack_checked(packed: Path, target: Path, recorded: dict) -> None:
    """Write `packed`'s unpacked bytes to `target` unless a whole copy (of the `recorded`
    size) is there already; ValueError when they do not have the `recorded` SHA-256
    (nothing is written then)."""
    if target.is_file() and target.stat().st_size == int(recorded["size"]):
        return
    data = lzma.decompress(packed.read_bytes())
    if hashlib.sha256(data).hexdigest() != recorded["sha256"]:
        raise ValueError(f"{packed}: unpacked bytes do not match their recorded SHA-256")
    write_atomic(target, data)
