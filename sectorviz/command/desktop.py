"""`sectorviz --install-desktop` and `--uninstall-desktop`: the desktop entry and its icons in
the user's XDG data folder, so desktops list sectorviz among their applications.

Install writes resources/sectorviz.desktop to $XDG_DATA_HOME/applications (default
~/.local/share) with Exec and TryExec naming the executable that runs (the packaged app's own,
the `sectorviz` console script, or this Python with `-m sectorviz`), and the icons under
icons/hicolor/SIZE/apps (the PNGs, and the SVG as scalable). Each file is written at once
(sectorviz.atomic) and named on stdout. Uninstall removes exactly those files where they are,
and names each; folders are left.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..atomic import OutputError, write_atomic
from ..exits import UsageError
from ..paths import resources_dir

INSTALL = "--install-desktop"
UNINSTALL = "--uninstall-desktop"
APP_ID = "sectorviz"


def data_home() -> Path:
    """$XDG_DATA_HOME, or ~/.local/share where it is unset, empty or relative (as the XDG
    base directory specification says)."""
    given = os.environ.get("XDG_DATA_HOME", "")
    return Path(given) if os.path.isabs(given) else Path.home() / ".local" / "share"


def launcher() -> list[str]:
    """The command that runs this sectorviz: the packaged app's executable, the console
    script that started this process, or this Python with `-m sectorviz`."""
    if getattr(sys, "frozen", False):
        return [os.path.abspath(sys.executable)]
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.suffix != ".py" and script.is_file() and \
            os.access(script, os.X_OK):
        return [os.path.abspath(script)]
    return [os.path.abspath(sys.executable), "-m", "sectorviz"]


def _string(value: str) -> str:
    """A desktop entry string value: backslash, newline, tab and return escaped."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t") \
        .replace("\r", "\\r")


def exec_value(command: list[str]) -> str:
    """The Exec value running `command` with the file the desktop hands it (%f): arguments
    with reserved characters quoted, and the string escapes applied on top (the desktop
    entry specification's two levels)."""
    reserved = set(" \t\n\"'\\><~|&;$*?#()`")

    def quoted(arg: str) -> str:
        arg = arg.replace("%", "%%")
        if not reserved & set(arg):
            return arg
        return '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'

    return _string(" ".join(quoted(arg) for arg in command) + " %f")


def icon_files() -> list[tuple[Path, str]]:
    """(icon in resources, its path under the data folder) for each size, the SVG as
    `scalable`."""
    icons = resources_dir() / "icons"
    found = [(png, f"icons/{png.relative_to(icons).as_posix()}")
             for png in sorted(icons.glob(f"hicolor/*/apps/{APP_ID}.png"))]
    return found + [(icons / f"{APP_ID}.svg", f"icons/hicolor/scalable/apps/{APP_ID}.svg")]


def entry_text(template: str, command: list[str]) -> str:
    """The desktop entry `template` with Exec and TryExec running `command`."""
    lines = []
    for line in template.splitlines():
        key = line.split("=", 1)[0].strip()
        if key == "Exec":
            line = f"Exec={exec_value(command)}"
        elif key == "TryExec":
            line = f"TryExec={_string(command[0])}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def installed_paths(home: Path) -> list[Path]:
    """Every file install writes under the data folder `home`."""
    return [home / "applications" / f"{APP_ID}.desktop",
            *(home / dest for _, dest in icon_files())]


def install_desktop() -> int:
    """Write the desktop entry and icons (module notes) -> exit status 0."""
    home, command = data_home(), launcher()
    template = resources_dir() / f"{APP_ID}.desktop"
    sources = [template, *(src for src, _ in icon_files())]
    missing = [str(p) for p in sources if not p.is_file()]
    if missing:
        raise UsageError(f"sectorviz: cannot install the desktop entry: {missing[0]} is "
                         "missing (this install has no resources folder)")
    entry, *icons = installed_paths(home)
    contents = [entry_text(template.read_text(encoding="utf-8"), command).encode("utf-8"),
                *(src.read_bytes() for src, _ in icon_files())]
    for path, data in zip([entry, *icons], contents):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputError(err.errno, err.strerror, str(path.parent)) from None
        write_atomic(path, data)
        print(f"installed {path}")
    print(f"Exec={exec_value(command)}")
    return 0


def uninstall_desktop() -> int:
    """Remove the files install writes, where they are -> exit status 0."""
    home = data_home()
    removed = 0
    for path in installed_paths(home):
        if path.is_file() or path.is_symlink():
            try:
                path.unlink()
            except OSError as err:
                raise OutputError(err.errno, err.strerror, str(path)) from None
            print(f"removed {path}")
            removed += 1
    if not removed:
        print(f"no sectorviz desktop entry or icons under {home}")
    return 0


def run_desktop(argv: list[str]) -> int:
    """`--install-desktop` or `--uninstall-desktop`, alone on the command line."""
    if len(argv) != 1:
        raise UsageError(f"sectorviz: {argv[0]} takes no other arguments")
    return install_desktop() if argv[0] == INSTALL else uninstall_desktop()
