"""Finding a CUDA compiler: `nvcc` on PATH, else under CUDA_HOME, else under CUDA_PATH.

A Toolchain names the nvcc found and its release ("13.0", from `nvcc --version`);
`search_list` reads the folders its own headers come from (the toolkit's and the host
compiler's `#include <...>` search list) off a verbose preprocessing run: the only folders
outside a pattern's root that a compile may read.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..model.errors import PatternError
from .bounded import run_bounded

QUERY_SECONDS = 30.0  # `nvcc --version`
_RELEASE = re.compile(r"release (\d+\.\d+)")


@dataclass(frozen=True)
class Toolchain:
    """An nvcc executable and its release."""

    nvcc: str  # absolute path of the executable
    version: str  # "13.0"

    @property
    def description(self) -> str:
        """`nvcc 13.0`."""
        return f"nvcc {self.version}"


def _nvcc_candidates() -> list[str]:
    """Where nvcc may be, in the order looked at: PATH, $CUDA_HOME/bin, $CUDA_PATH/bin."""
    found = [shutil.which("nvcc")]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(var)
        if home:
            found.append(shutil.which("nvcc", path=str(Path(home) / "bin")))
    return [str(Path(f).absolute()) for f in found if f]


def _release(nvcc: str) -> str | None:
    """`nvcc --version` -> its release ("13.0"), None when it does not run or say."""
    try:
        done = run_bounded([nvcc, "--version"], "compiler", "nvcc --version",
                           seconds=QUERY_SECONDS)
    except PatternError:
        return None
    found = _RELEASE.search(done.stdout)
    return found.group(1) if done.returncode == 0 and found else None


@lru_cache(maxsize=1)
def find_compiler() -> Toolchain | None:
    """The first nvcc that runs and reports its release; None when there is none."""
    for nvcc in _nvcc_candidates():
        version = _release(nvcc)
        if version is not None:
            return Toolchain(nvcc, version)
    return None


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
