"""Help > Guide: a short guide to the picture, the sheet, the words and the keys; and the
About box with the version."""

from __future__ import annotations

from html import escape

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDialog, QMessageBox, QTextBrowser, QVBoxLayout, QWidget

from .. import __version__
from ..scene.palette import WASTE_LABELS

PICTURE = (
    "The grid shows one warp running one memory instruction. Each <b>row</b> is a lane "
    "(thread) of the warp, 0 to 31; each <b>column</b> is a 32-byte <b>sector</b> the warp "
    "touches, in address order, labelled with its address and its offset in the array. Inside "
    "a cell the width is the sector's 32 bytes: the lane's own bytes in full colour, bytes "
    "other lanes use tinted, and bytes nobody uses shaded as <b>wasted</b> (the whole sector "
    "is fetched anyway). A dashed column stands for untouched sectors skipped; a dark rule "
    "marks where a 128-byte line starts; grey rows are inactive lanes.",
    "The <b>kernel overview</b> below runs across every warp of the launch (one row per "
    "instruction): a column's colour is its sectors per request over the ideal, from "
    f"{escape(WASTE_LABELS[0])} (green) through {escape(', '.join(WASTE_LABELS[1:-1]))} to "
    f"{escape(WASTE_LABELS[-1])} (red). Click it to select that warp. The bottom row marks "
    "atypical warps in a colour of its own (they are not a cost in themselves); hover a row "
    "for its whole name. The histogram counts requests by how many sectors they take. "
    "View > Present (F5) shows the grid and the answer full screen, for a projector.")
SHEET = (
    "The <b>accounting sheet</b> starts with the answer: sector demand against the ideal, "
    "the useful share of the fetched bytes and the worst instruction (the one in the "
    "overview's worst colour: sectors, or bank wavefronts for a shared one). Then five steps: "
    "1 the memory operations, 2 the bytes the threads ask for, 3 how one warp's addresses "
    "spread (the selected warp), 4 sectors per request for that warp and over the grid, "
    "5 the traffic at named boundaries, each with the assumption it rests on and the "
    "Nsight Compute metric that measures it (copy it to profile). Kernels with shared memory "
    "add step 6, bank wavefronts. Copy it as Markdown or CSV from its buttons or the Edit "
    "menu. The boxes above the sheet set a <b>cache model</b> (a GPU's L2, its ways and the "
    "order warps reach it): step 5 then adds the DRAM bytes it estimates, between the two "
    "bounds. File > Import Measurements reads an Nsight Compute CSV and adds a last step: "
    "each boundary measured against its prediction, with the ratio.")
GLOSSARY = (
    ("sector", "32 bytes, the unit the L1 cache fetches from memory"),
    ("request", "one warp executing one memory instruction (lanes with the guard on)"),
    ("ideal sectors", "the fewest sectors the bytes the lanes use could fit in"),
    ("useful", "bytes the lanes use over bytes fetched (sectors x 32)"),
    ("excess", "sectors fetched beyond the ideal"),
    ("atypical warp", "a partial warp, one that skips an instruction, or one whose sectors "
                      "per request differ from the instruction's typical count"))


def guide_html(actions: list[QAction]) -> str:
    """The guide: the picture, the sheet, the glossary and the keyboard shortcuts of
    `actions` (those with one), in that order."""
    keys = [(a.text().replace("&", ""), a.shortcut().toString(QKeySequence.NativeText))
            for a in actions if not a.shortcut().isEmpty()]
    rows = "".join(f"<tr><td><b>{escape(k)}</b></td><td>{escape(v)}</td></tr>"
                   for k, v in GLOSSARY)
    shortcuts = "".join(f"<tr><td>{escape(name)}</td><td><code>{escape(key)}</code></td></tr>"
                        for name, key in keys)
    return ("<h2>What the picture means</h2>" + "".join(f"<p>{p}</p>" for p in PICTURE)
            + f"<h2>How to read the sheet</h2><p>{SHEET}</p>"
            + f"<h2>Words</h2><table cellspacing='4'>{rows}</table>"
            + f"<h2>Keyboard shortcuts</h2><table cellspacing='4'>{shortcuts}</table>")


def show_guide(parent: QWidget, actions: list[QAction]) -> QDialog:
    """The guide in a window of its own, beside the main window (not modal)."""
    dialog = QDialog(parent, objectName="guide", windowTitle="sectorviz guide")
    text = QTextBrowser(objectName="guideText")
    text.setHtml(guide_html(actions))
    QVBoxLayout(dialog).addWidget(text)
    dialog.resize(640, 560)
    dialog.show()
    return dialog


def about_text() -> str:
    return (f"<b>sectorviz {__version__}</b><p>Shows which 32-byte sectors each lane of a CUDA "
            "warp touches, and counts them for the whole grid: the answer, the five steps and "
            "the Nsight Compute metric for each number.</p>")


def show_about(parent: QWidget) -> None:
    QMessageBox.about(parent, "About sectorviz", about_text())
