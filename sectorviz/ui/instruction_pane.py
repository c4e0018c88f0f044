"""The Kernel tab's pairing of source lines with their memory instructions, as Nsight's Source
view pairs source and SASS: a tree of the lines that have memory instructions, each folding out
to its instructions in program order: the SASS opcode and width for a kernel counted in SASS
(`LDS.128, 128-bit`), the PTX operation for one counted in PTX (`ld.global.f32`), the
PTX operation of the as-written reading, the array, and from the analysis, once it is
there, sectors per request and requests (global and local memory) or wavefronts per request
(shared memory), the global ones in the overview's waste colour. Clicking an instruction selects
it (`instructionActivated`, the app's index: global instructions, then shared ones); local
instructions are listed, not selectable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget

from ..model import Analysis
from ..model.frontend import FrontEnd
from ..model.kernel import Instruction
from ..scene.palette import LIGHT, Theme, waste_classes

COLUMNS = ("line: instruction, array", "per request", "requests")


@dataclass(frozen=True)
class InstructionRow:
    """One memory instruction as the pane lists it."""

    line: int | None
    file: str | None  # the included file of the line (None: the kernel's own)
    operation: str  # "LDS.128, 128-bit", "ld.global.f32", or "load" / "store" as written
    array: str
    per_request: str  # "4 sectors", "2 wavefronts" ("" before the analysis)
    requests: str  # "8,192" ("" before the analysis)
    waste: int  # the overview's waste class of a global instruction (-1: none or not known)
    instruction: int | None  # the app's index (global, then shared); None for local memory


def _row(ins: Instruction, space: str, index: int | None, per_request: str = "",
         requests: str = "", waste: int = -1) -> InstructionRow:
    operation = f"{ins.sass}, {ins.width * 8}-bit" if ins.sass else \
        ins.ptx or ins.op + ("" if space == "global" else f" ({space})")
    return InstructionRow(ins.line, ins.file, operation, ins.array, per_request, requests, waste,
                          index)


def instruction_rows(kernel: FrontEnd, analysis: Analysis | None) -> tuple[InstructionRow, ...]:
    """A kernel's global, shared and local instructions -> the pane's rows, with the
    analysis's figures where it has them (a partial one, or a run without shared counts,
    gives rows without figures)."""
    glob, shared = kernel.instructions, kernel.shared_instructions
    stats = analysis.instructions if analysis and len(analysis.instructions) == len(glob) else ()
    rows = []
    for k, ins in enumerate(glob):
        if not stats:
            rows.append(_row(ins, "global", k))
            continue
        s = stats[k]
        over = s.sectors / s.ideal_sectors if s.ideal_sectors else float("nan")
        rows.append(_row(ins, "global", k, _per(s.sectors, s.requests, "sector"),
                         f"{s.requests:,}", int(waste_classes(np.array([over]))[0])))
    counted = analysis.shared if analysis and len(analysis.shared) == len(shared) else ()
    for k, ins in enumerate(shared):
        figures = ((_per(counted[k].wavefronts, counted[k].requests, "wavefront"),
                    f"{counted[k].requests:,}") if counted else ("", ""))
        rows.append(_row(ins, "shared", len(glob) + k, *figures))
    local = analysis.local if analysis and len(analysis.local) == len(
        kernel.local_instructions) else ()
    for k, ins in enumerate(kernel.local_instructions):
        figures = ((_per(local[k].sectors, local[k].requests, "sector"),
                    f"{local[k].requests:,}") if local else ("", ""))
        rows.append(_row(ins, "local", None, *figures))
    return tuple(rows)


def _per(total: int, requests: int, noun: str) -> str:
    """'4 sectors' per request ('-' for an instruction that never ran)."""
    if not requests:
        return "-"
    value = f"{total / requests:.4g}"
    return f"{value} {noun}{'' if value == '1' else 's'}"


def _line_label(line: int | None, file: str | None, code: list[str]) -> str:
    if line is None:
        return "no source line"
    if file is not None:
        return f"{file}:{line}"
    text = code[line - 1].strip() if 0 < line <= len(code) else ""
    return f"{line}: {text}" if text else f"line {line}"


INSTRUCTION_ROLE = Qt.ItemDataRole.UserRole  # an instruction item's app index (None: local)
LINE_ROLE = Qt.ItemDataRole.UserRole + 1  # a line item's 1-based line


class InstructionPane(QTreeWidget):
    """The tree of source lines and their instructions (see the module's docstring)."""

    instructionActivated = Signal(int)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("kernelInstructions")
        self.setColumnCount(len(COLUMNS))
        self.setHeaderLabels(list(COLUMNS))
        self.setRootIsDecorated(True)
        self.setUniformRowHeights(True)
        self.theme: Theme = LIGHT
        self.rows: tuple[InstructionRow, ...] = ()
        self._code: list[str] = []
        self._items: dict[int, QTreeWidgetItem] = {}  # app index -> its item
        self._lines: dict[tuple[str | None, int | None], QTreeWidgetItem] = {}
        self.itemClicked.connect(self._clicked)

    def set_rows(self, rows: tuple[InstructionRow, ...], code: str) -> None:
        """Show `rows` under their lines of `code` (the kernel's text), keeping what is
        folded."""
        folded = {key for key, item in self._lines.items() if not item.isExpanded()}
        self.rows, self._code = rows, code.splitlines()
        self.clear()
        self._items, self._lines = {}, {}
        for r in rows:
            key = (r.file, r.line)
            parent = self._lines.get(key)
            if parent is None:
                parent = QTreeWidgetItem(self, [_line_label(r.line, r.file, self._code)])
                parent.setData(0, LINE_ROLE, r.line if r.file is None else None)
                parent.setFirstColumnSpanned(True)
                self._lines[key] = parent
            item = QTreeWidgetItem(parent, [f"{r.operation}  {r.array}", r.per_request,
                                            r.requests])
            item.setData(0, INSTRUCTION_ROLE, r.instruction)
            if r.waste >= 0:
                item.setForeground(1, QBrush(QColor(self.theme.waste[r.waste])))
            if r.instruction is not None:
                self._items[r.instruction] = item
        for key, item in self._lines.items():
            item.setExpanded(key not in folded)
        for column in range(len(COLUMNS)):
            self.resizeColumnToContents(column)

    def set_theme(self, theme: Theme) -> None:
        """The diagram palette whose waste colours the figures take."""
        self.theme = theme
        self.set_rows(self.rows, "\n".join(self._code))

    def show_instruction(self, k: int) -> None:
        """Make app instruction k the current item (unfolding its line)."""
        item = self._items.get(k)
        if item is not None and item is not self.currentItem():
            self.blockSignals(True)
            try:
                self.setCurrentItem(item)
            finally:
                self.blockSignals(False)
            self.scrollToItem(item)

    def show_line(self, line: int) -> None:
        """Scroll to the kernel's own source line `line`, if it has instructions."""
        item = self._lines.get((None, line))
        if item is not None:
            self.scrollToItem(item, QTreeWidget.ScrollHint.PositionAtTop)

    def _clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        k = item.data(0, INSTRUCTION_ROLE)
        if isinstance(k, int):
            self.instructionActivated.emit(k)
