"""`sectorviz --install-desktop` / `--uninstall-desktop`, run as a user runs them, with
XDG_DATA_HOME in a temporary folder."""

import configparser
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ICONS = ROOT / "resources" / "icons"


def sectorviz(tmp_path: Path, *args: str, data_home: Path | None = None):
    """Run `python -m sectorviz ARGS` from the checkout -> the finished process."""
    env = {**os.environ, "XDG_DATA_HOME": str(data_home or tmp_path / "share"),
           "HOME": str(tmp_path / "home")}
    return subprocess.run([sys.executable, "-m", "sectorviz", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)


def expected_files(share: Path) -> set[Path]:
    pngs = {share / "icons" / png.relative_to(ICONS)
            for png in ICONS.glob("hicolor/*/apps/sectorviz.png")}
    return {share / "applications" / "sectorviz.desktop",
            share / "icons/hicolor/scalable/apps/sectorviz.svg", *pngs}


def test_install_writes_the_entry_and_icons_with_exec_running_this_sectorviz(tmp_path):
    share = tmp_path / "share"
    done = sectorviz(tmp_path, "--install-desktop")
    assert done.returncode == 0 and not done.stderr, done.stderr
    files = {p for p in share.rglob("*") if p.is_file()}
    assert files == expected_files(share) and len(files) == 9
    for path in files:
        assert f"installed {path}\n" in done.stdout
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(share / "applications" / "sectorviz.desktop", encoding="utf-8")
    desktop = entry["Desktop Entry"]
    assert desktop["Exec"] == f"{sys.executable} -m sectorviz %f"
    assert desktop["TryExec"] == sys.executable
    assert desktop["Icon"] == "sectorviz" and desktop["Name"] == "sectorviz"
    svg = share / "icons/hicolor/scalable/apps/sectorviz.svg"
    assert svg.read_bytes() == (ICONS / "sectorviz.svg").read_bytes()
    assert not [p for p in share.rglob("*.tmp")]  # atomic writes leave no temporary file


def test_uninstall_removes_exactly_what_install_wrote(tmp_path):
    share = tmp_path / "share"
    assert sectorviz(tmp_path, "--install-desktop").returncode == 0
    mine = share / "applications" / "other.desktop"
    mine.write_text("[Desktop Entry]\n")
    done = sectorviz(tmp_path, "--uninstall-desktop")
    assert done.returncode == 0 and not done.stderr
    assert sorted(done.stdout.splitlines()) == sorted(f"removed {p}"
                                                      for p in expected_files(share))
    assert [p for p in share.rglob("*") if p.is_file()] == [mine]
    again = sectorviz(tmp_path, "--uninstall-desktop")
    assert again.returncode == 0 and again.stdout == f"no sectorviz desktop entry or icons " \
                                                     f"under {share}\n"


def test_relative_xdg_data_home_means_the_default(tmp_path):
    done = sectorviz(tmp_path, "--install-desktop", data_home=Path("relative"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "home/.local/share/applications/sectorviz.desktop").is_file()
    assert not (ROOT / "relative").exists()


def test_failures_are_one_line(tmp_path):
    (tmp_path / "share").write_text("a file where the data folder should be")
    done = sectorviz(tmp_path, "--install-desktop")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Not a directory" in done.stderr
    extra = sectorviz(tmp_path, "--uninstall-desktop", "now")
    assert (extra.returncode, extra.stderr) == (
        2, "sectorviz: --uninstall-desktop takes no other arguments\n")
