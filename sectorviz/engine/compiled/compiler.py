"""Finding a CUDA compiler: `nvcc` on PATH, else under CUDA_HOME, else under CUDA_PATH, else
NVRTC from NVIDIA's wheels (`nvidia-cuda-nvrtc`, with the headers of `nvidia-cuda-runtime`
and `nvidia-cuda-cccl`: CUDA C++ to PTX with no toolkit, no GPU and no driver), installed or
shipped in the packaged app. SECTORVIZ_COMPILER=nvcc or =nvrtc looks for that one only.

A Toolchain names the compiler found, its release ("13.0", from `nvcc --version` or
nvrtcVersion) and, for NVRTC, the wheels' header folders. `search_list` reads nvcc's own
header folders (the toolkit's and the host compiler's `#include <...>` search list) off a
verbose preprocessing run: the only folders outside a pattern's root that a compile may read.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import re
import shutil
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ...model.errors import PatternError
from .bounded import run_bounded
from .flags import DEBUG, OPTIMIZATION
from .unpack import unpacked

QUERY_SECONDS = 30.0  # `nvcc --version`
COMPILER_VAR = "SECTORVIZ_COMPILER"  # "nvcc" or "nvrtc": look for that compiler only
_RELEASE = re.compile(r"release (\d+\.\d+)")
NO_COMPILER = "no CUDA compiler found"
# what to install where there is none: nvcc, or NVRTC's wheels (pyproject.toml's dependencies)
INSTALL = ("install nvcc (NVIDIA's CUDA toolkit) or NVRTC (pip install nvidia-cuda-nvrtc "
           "nvidia-cuda-runtime nvidia-cuda-cccl)")


@dataclass(frozen=True)
class Toolchain:
    """A compiler: nvcc's executable, or NVRTC's library with its wheels' header folders."""

    path: str  # absolute path of nvcc, or of the NVRTC shared library
    version: str  # "13.0"
    kind: str = "nvcc"  # or "nvrtc"
    include_dirs: tuple[str, ...] = ()  # NVRTC: the headers' folders (nvcc knows its own)

    @property
    def description(self) -> str:
        """`nvcc 13.0`, `NVRTC 13.5`."""
        return f"{'nvcc' if self.kind == 'nvcc' else 'NVRTC'} {self.version}"

    def compiling_for(self, arch: str, as_written: bool = False) -> str:
        """`nvcc 13.0 for sm_90 at -O3` (`at -G` for the debug compile, `as_written`): how a
        compile for `arch` is described."""
        return f"{self.description} for {arch} at {DEBUG if as_written else OPTIMIZATION}"


def _nvcc_candidates() -> list[str]:
    """Where nvcc may be, in the order looked at: PATH, $CUDA_HOME/bin, $CUDA_PATH/bin."""
    found = [shutil.which("nvcc")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home:
            found.append(shutil.which("nvcc", path=str(Path(home) / "bin")))
    return [str(Path(f).absolute()) for f in found if f]


def tool_release(tool: str, place: str, seconds: float = QUERY_SECONDS) -> str | None:
    """`TOOL --version` (nvcc, ptxas: NVIDIA's tools say "release 13.0"), run bounded ->
    its release ("13.0"), None when it does not run or say; `place` names the run in a
    refusal."""
    try:
        done = run_bounded([tool, "--version"], place, f"{Path(tool).name} --version",
                           seconds=seconds)
    except PatternError:
        return None
    found = _RELEASE.search(done.stdout)
    return found.group(1) if done.returncode == 0 and found else None


def find_compiler() -> Toolchain | None:
    """The first nvcc that runs and reports its release, else NVRTC from the wheels; None
    when there is neither (or not the one SECTORVIZ_COMPILER names)."""
    return compiler_named(os.environ.get(COMPILER_VAR, ""))


@lru_cache(maxsize=4)
def compiler_named(choice: str) -> Toolchain | None:
    """find_compiler's answer for a SECTORVIZ_COMPILER of `choice` ("nvcc", "nvrtc", or
    anything else: either, nvcc first)."""
    if choice != "nvrtc":
        for nvcc in _nvcc_candidates():
            version = tool_release(nvcc, "compiler")
            if version is not None:
                return Toolchain(nvcc, version)
    return None if choice == "nvcc" else find_nvrtc()


def _nvrtc_layouts(base: Path) -> list[tuple[Path, list[Path]]]:
    """(library, header folders) where NVIDIA's wheels may have put them under
    site-packages/nvidia/: CUDA 13's one folder per release (`cu13/lib`, `cu13/include`),
    CUDA 12's one folder per wheel (`cuda_nvrtc/lib`, `cuda_runtime/include`)."""
    found = []
    for lib in sorted(base.glob("cu*/lib/libnvrtc.so.*")) + \
            sorted(base.glob("cu*/bin/**/nvrtc64_*.dll")):
        release = base / lib.relative_to(base).parts[0]
        found.append((lib, [release / "include", release / "include" / "cccl"]))
    for lib in sorted(base.glob("cuda_nvrtc/lib/libnvrtc.so.*")) + \
            sorted(base.glob("cuda_nvrtc/bin/nvrtc64_*.dll")):
        found.append((lib, [base / "cuda_runtime" / "include", base / "cuda_cccl" / "include"]))
    return found


@lru_cache(maxsize=1)
def find_nvrtc() -> Toolchain | None:
    """NVRTC from the `nvidia` wheels, when its library loads and the runtime's headers are
    there; None otherwise. The bundle's compressed library (`libnvrtc.so.N.xz`, which the
    layouts' globs match too) is unpacked into the user's cache first (unpack.py)."""
    for base in wheel_folders():
        for lib, folders in _nvrtc_layouts(Path(base)):
            library = unpacked(lib) if (folders[0] / "cuda_runtime.h").is_file() else None
            if library is not None:
                version = nvrtc_version(str(library))
                if version is not None:
                    return Toolchain(str(library), version, "nvrtc",
                                     tuple(str(f) for f in folders if f.is_dir()))
    return None


def wheel_folders() -> list[str]:
    """Where NVIDIA's wheels put their files: the installed `nvidia` namespace package's
    folders, and in the packaged app the copy it ships (_MEIPASS/nvidia)."""
    spec = importlib.util.find_spec("nvidia")
    found = list(spec.submodule_search_locations or []) if spec else []
    bundled = getattr(sys, "_MEIPASS", None)
    if bundled and (Path(bundled) / "nvidia").is_dir():
        found.append(str(Path(bundled) / "nvidia"))
    return found


def nvrtc_version(library: str) -> str | None:
    """The release ("13.5") of the NVRTC library at `library`, None when it does not load."""
    try:
        nvrtc = ctypes.CDLL(library)
    except OSError:
        return None
    major, minor = ctypes.c_int(), ctypes.c_int()
    if nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) != 0:
        return None
    return f"{major.value}.{minor.value}"


def toolkit_folders(nvcc: str) -> tuple[str, ...]:
    """The folders of an nvcc's own headers that lie beside it (`bin/../include`,
    `bin/../targets/*/include`) and, on Windows, those of the host compiler (%INCLUDE%):
    its headers whatever the host preprocessor prints."""
    top = Path(os.path.realpath(nvcc)).parent.parent
    found = [top / "include", *sorted(top.glob("targets/*/include"))]
    if os.name == "nt":
        found += [Path(f) for f in os.environ.get("INCLUDE", "").split(os.pathsep) if f]
    return tuple(os.path.realpath(f) for f in found if f.is_dir())


def search_list(verbose: str) -> tuple[str, ...]:
    """The real paths of the `#include <...>` search list the host preprocessor prints with
    -v (nvcc passes it `-Xcompiler -v`): the toolkit's folders, then the host compiler's."""
    folders: list[str] = []
    inside = False
    for line in verbose.splitlines():
        if line.startswith("#include <...> search starts here"):
            inside = True
        elif line.startswith("End of search list"):
            inside = False
        elif inside and line.startswith(" "):
            folder = os.path.realpath(line.strip())
            if folder not in folders:
                folders.append(folder)
    return tuple(folders)
