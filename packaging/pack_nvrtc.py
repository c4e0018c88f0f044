"""NVRTC's libraries packed for the bundle: xz-compressed, with the manifest the app checks.

libnvrtc is 135 of the bundle's ~330 MiB and xz takes it to ~37 MiB. `packed` hands the spec,
for each folder of NVRTC libraries, `NAME.xz` per library and `packed.json`,
{"files": {NAME: {"sha256": hex SHA-256 of NAME's bytes, "size": their count}}}; the app
unpacks them into the user's cache on its first look for NVRTC and checks each against its
SHA-256 (sectorviz/engine/compiled/unpack.py, which reads this format). Compressing takes minutes
(xz's default preset): a packed file whose manifest already records its library's digest is
reused from `workdir`.
"""

from __future__ import annotations

import hashlib
import json
import lzma
from collections import defaultdict
from pathlib import Path

MANIFEST = "packed.json"  # sectorviz.engine.compiled.unpack.MANIFEST
SUFFIX = ".xz"


def is_nvrtc_library(path: str) -> bool:
    """Whether a file of NVIDIA's wheels is one of NVRTC's libraries (libnvrtc, its builtins,
    the Windows DLLs), the files `packed` compresses."""
    name = Path(path).name
    return name.startswith(("libnvrtc", "nvrtc")) and (".so" in name or name.endswith(".dll"))


def _recorded(manifest: Path) -> dict:
    """The files an earlier build's manifest records, {} when there is none."""
    try:
        return json.loads(manifest.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError):
        return {}


def packed(libraries: list[tuple[str, str]], workdir: Path) -> list[tuple[str, str]]:
    """(file, folder in the bundle) entries for `libraries` (the same kind of entries) packed:
    under `workdir`, each library compressed and one manifest per bundle folder."""
    by_folder: dict[str, list[Path]] = defaultdict(list)
    for file, folder in libraries:
        by_folder[folder].append(Path(file))
    entries = []
    for folder, sources in sorted(by_folder.items()):
        out = workdir / folder
        out.mkdir(parents=True, exist_ok=True)
        before, files = _recorded(out / MANIFEST), {}
        for source in sorted(sources):
            data = source.read_bytes()
            record = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
            target = out / f"{source.name}{SUFFIX}"
            if before.get(source.name) != record or not target.is_file():
                target.write_bytes(lzma.compress(data))
            files[source.name] = record
            entries.append((str(target), folder))
        (out / MANIFEST).write_text(json.dumps({"files": files}, indent=1, sort_keys=True),
                                    encoding="utf-8")
        entries.append((str(out / MANIFEST), folder))
    return entries
