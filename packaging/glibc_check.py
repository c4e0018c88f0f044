"""The newest glibc a bundle needs: `objdump -T` over every ELF file in it.

    python packaging/glibc_check.py dist/sectorviz --target 2.28

Reads the dynamic symbols each ELF file (a regular file starting with \\x7fELF; links are
skipped, their targets are counted once) takes from elsewhere (`*UND*`) and the GLIBC_x.y
version each one asks for. Prints the highest such version against TARGET, the files that
need it and every file above TARGET, and the highest GLIBCXX_/CXXABI_ versions asked of
libstdc++ against HOST_LIBSTDCXX (the bundle leaves libstdc++ out, so the host's serves: a
glibc 2.28 system has GCC 8's, GLIBCXX_3.4.25 and CXXABI_1.3.11). Exits 1 when a file needs
a glibc newer than TARGET or more of libstdc++ than HOST_LIBSTDCXX, 2 when objdump is
missing. Needs binutils.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

Version = tuple[int, ...]
HOST_LIBSTDCXX = {"GLIBCXX": (3, 4, 25), "CXXABI": (1, 3, 11)}  # GCC 8's (RHEL 8, Debian 10)
_WANTED = re.compile(r"\*UND\*.*?\b(GLIBC|GLIBCXX|CXXABI)_(\d+(?:\.\d+)*)\b")


def parse_version(text: str) -> Version:
    """'2.28' -> (2, 28)."""
    return tuple(int(part) for part in text.split("."))


def shown(version: Version) -> str:
    """(2, 28) -> '2.28'."""
    return ".".join(map(str, version))


def elf_files(folder: Path) -> list[Path]:
    """The regular (not linked) files under `folder` that start with the ELF magic."""
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        with open(path, "rb") as f:
            if f.read(4) == b"\x7fELF":
                found.append(path)
    return found


def wanted_versions(objdump_text: str) -> dict[str, Version]:
    """The highest version of each of GLIBC, GLIBCXX and CXXABI that the undefined symbols
    in `objdump -T` output ask for (a family none asks for is absent)."""
    highest: dict[str, Version] = {}
    for match in _WANTED.finditer(objdump_text):
        family, version = match.group(1), parse_version(match.group(2))
        highest[family] = max(highest.get(family, version), version)
    return highest


def needs(path: Path, objdump: str) -> dict[str, Version]:
    """wanted_versions of one ELF file."""
    result = subprocess.run([objdump, "-T", str(path)], capture_output=True, text=True,
                            check=False)
    return wanted_versions(result.stdout)


def report(folder: Path, target: Version, objdump: str) -> int:
    """Print what `folder`'s ELF files need; 1 when one needs a glibc above `target`."""
    per_file = {path.relative_to(folder).as_posix(): needs(path, objdump)
                for path in elf_files(folder)}
    glibc = {name: wants["GLIBC"] for name, wants in per_file.items() if "GLIBC" in wants}
    highest = max(glibc.values(), default=(0,))
    verdict = "above it" if highest > target else "within it"
    print(f"glibc: {len(per_file)} ELF files in {folder}; the highest GLIBC_ one needs is "
          f"{shown(highest)}, target {shown(target)}: {verdict}")
    for name in sorted(n for n, v in glibc.items() if v == highest):
        print(f"  needs {shown(highest)}: {name}")
    for name, version in sorted(glibc.items(), key=lambda item: (item[1], item[0]),
                                reverse=True):
        if target < version < highest:
            print(f"  needs {shown(version)}: {name}")
    too_new = highest > target
    for family, host in HOST_LIBSTDCXX.items():
        asked = max((wants[family] for wants in per_file.values() if family in wants),
                    default=(0,))
        too_new |= asked > host
        print(f"libstdc++: the highest {family}_ asked for is "
              f"{shown(asked) if asked > (0,) else 'none'}, the host's "
              f"(GCC 8) has {shown(host)}: {'above it' if asked > host else 'within it'}")
    return 1 if too_new else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path, help="the bundle's folder (dist/sectorviz)")
    parser.add_argument("--target", type=parse_version, default=parse_version("2.28"),
                        help="the newest glibc the bundle may need (default 2.28)")
    args = parser.parse_args(argv)
    objdump = shutil.which("objdump")
    if objdump is None:
        print("glibc_check: objdump not found (install binutils)", file=sys.stderr)
        return 2
    return report(args.bundle, args.target, objdump)


if __name__ == "__main__":
    sys.exit(main())
