"""Warp stepping: block (x, y, z) and warp-in-block selectors, a global warp slider, the
instruction, its execution (loop iteration) in this warp, and play/pause at a chosen speed.

Global warp g (launch order) <-> block (x, y, z) and warp-in-block w:
g = ((z * grid_y + y) * grid_x + x) * warps_per_block + w.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, QTimer
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QSlider,
    QSpinBox,
    QStyle,
    QToolButton,
    QWidget,
)

from ..model.kernel import Kernel
from .document import Change, Document, instruction_names

INSTRUCTION_CHARS = 10  # the instruction box's least width, in characters
POPUP_MARGIN = 24  # pixels beside the longest name in the instruction list (its scroll bar)


def warp_coords(kernel: Kernel, warp: int) -> tuple[int, int, int, int]:
    """Global warp -> (block x, block y, block z, warp in block)."""
    block, w = divmod(warp, kernel.warps_per_block)
    gx, gy, _ = kernel.grid
    return block % gx, (block // gx) % gy, block // (gx * gy), w


def warp_index(kernel: Kernel, bx: int, by: int, bz: int, w: int) -> int:
    """(block x, y, z, warp in block) -> global warp."""
    gx, gy, _ = kernel.grid
    return ((bz * gy + by) * gx + bx) * kernel.warps_per_block + w


def _spin(name: str, tip: str) -> QSpinBox:
    s = QSpinBox()
    s.setObjectName(name)
    s.setToolTip(tip)
    s.setKeyboardTracking(False)
    s.setAccelerated(True)
    return s


class Stepper(QWidget):
    """Selectors that show the document's selection and move it; Play steps execution by
    execution, then warp by warp, `speed` steps per second."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("stepper")
        self.document = document
        self.block = [_spin(f"block{a.upper()}", f"blockIdx.{a}") for a in "xyz"]
        self.warp_in_block = _spin("warpInBlock", "warp inside the block (threads 32w .. 32w+31)")
        self.warp_spin = _spin("warpSpin", "global warp index, in launch order")
        self.slider = QSlider(Qt.Horizontal, objectName="warpSlider")
        self.slider.setToolTip("global warp (Left/Right, Home/End)")
        self.warps_label = QLabel()
        self.instruction = QComboBox(objectName="instructionCombo")
        self.instruction.setToolTip("memory instruction, in program order (Up/Down)")
        # a compiled line's name is long: the box shrinks to fit the window (its popup lists
        # the names whole) instead of widening the window past a projector's screen
        self.instruction.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
        self.instruction.setMinimumContentsLength(INSTRUCTION_CHARS)
        self.run = _spin("executionSpin", "execution of the instruction by this warp "
                                          "(loop iteration; Ctrl+Left/Right)")
        self.runs_label = QLabel()
        self.play = QToolButton(objectName="playButton", checkable=True)
        self.play.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        self.play.setToolTip("step through executions and warps (Space)")
        self.speed = _spin("speedSpin", "steps per second")
        self.speed.setRange(1, 60)
        self.speed.setValue(4)
        self.speed.setSuffix(" /s")
        self.timer = QTimer(self)
        self._build()
        for s in (*self.block, self.warp_in_block):
            s.valueChanged.connect(self._from_block)
        self.warp_spin.valueChanged.connect(lambda v: document.select(warp=v))
        self.slider.valueChanged.connect(lambda v: document.select(warp=v))
        self.instruction.currentIndexChanged.connect(lambda k: document.select(instruction=k))
        self.run.valueChanged.connect(lambda r: document.select(run=r - 1))
        self.play.toggled.connect(self._toggled)
        self.speed.valueChanged.connect(lambda _: self._toggled(self.play.isChecked()))
        self.timer.timeout.connect(self.step_forward)
        self._show_play(False)
        document.changed.connect(self._on_changed)
        self._on_changed(Change.PATTERN | Change.SELECTION)

    def _build(self) -> None:
        grid = QGridLayout(self)
        grid.setContentsMargins(6, 4, 6, 4)
        blocks = QHBoxLayout()
        blocks.addWidget(QLabel("block"))
        for s in self.block:
            blocks.addWidget(s)
        blocks.addWidget(QLabel("warp in block"))
        blocks.addWidget(self.warp_in_block)
        blocks.addStretch(1)
        grid.addLayout(blocks, 0, 0, 1, 3)
        grid.addWidget(QLabel("warp"), 1, 0)
        grid.addWidget(self.slider, 1, 1)
        warp = QHBoxLayout()
        warp.addWidget(self.warp_spin)
        warp.addWidget(self.warps_label)
        grid.addLayout(warp, 1, 2)
        grid.addWidget(QLabel("instruction"), 2, 0)
        row = QHBoxLayout()
        row.addWidget(self.instruction, 1)
        row.addWidget(QLabel("execution"))
        row.addWidget(self.run)
        row.addWidget(self.runs_label)
        row.addSpacing(12)
        row.addWidget(self.play)
        row.addWidget(self.speed)
        grid.addLayout(row, 2, 1, 1, 2)
        grid.setColumnStretch(1, 1)

    # ------------------------------------------------------------ stepping

    def step_warp(self, delta: int) -> None:
        self.document.select(warp=self.document.selection.warp + delta)

    def step_instruction(self, delta: int) -> None:
        self.document.select(instruction=self.document.selection.instruction + delta)

    def step_run(self, delta: int) -> None:
        self.document.select(run=self.document.selection.run + delta)

    def first_warp(self) -> None:
        self.document.select(warp=0)

    def last_warp(self) -> None:
        self.document.select(warp=self.document.kernel.warps - 1)

    def step_forward(self) -> None:
        """Next execution of this instruction, else the next warp's first; stops at the end."""
        doc = self.document
        sel, view = doc.selection, doc.view()
        if view.pending:  # its executions are not known yet: the next tick tries again
            return
        if sel.run + 1 < view.runs:
            doc.select(run=sel.run + 1)
        elif sel.warp + 1 < doc.kernel.warps:
            doc.select(warp=sel.warp + 1, run=0)
        else:
            self.play.setChecked(False)

    def _show_play(self, playing: bool) -> None:
        """The play control: a pause icon and 'Pause' while playing, else play and 'Play'
        (the style's icons: a font may lack the media glyphs)."""
        icon = QStyle.SP_MediaPause if playing else QStyle.SP_MediaPlay
        self.play.setIcon(self.style().standardIcon(icon))
        self.play.setText("Pause" if playing else "Play")

    def _toggled(self, on: bool) -> None:
        self._show_play(on)
        if on:
            self.timer.start(int(1000 / self.speed.value()))
        else:
            self.timer.stop()

    # ------------------------------------------------------------ view <- document

    def _from_block(self) -> None:
        kernel = self.document.kernel
        self.document.select(warp=warp_index(kernel, *(s.value() for s in self.block),
                                             self.warp_in_block.value()))

    def _on_changed(self, flags: int) -> None:
        if not flags & (Change.PATTERN | Change.SELECTION):
            return
        doc = self.document
        kernel, sel, view = doc.kernel, doc.selection, doc.view()
        widgets = (*self.block, self.warp_in_block, self.warp_spin, self.slider,
                   self.instruction, self.run)
        blockers = [QSignalBlocker(w) for w in widgets]
        if flags & Change.PATTERN:
            for s, n in zip(self.block, kernel.grid):
                s.setRange(0, n - 1)
                s.setEnabled(n > 1)
            self.warp_in_block.setRange(0, kernel.warps_per_block - 1)
            self.warp_spin.setRange(0, kernel.warps - 1)
            self.slider.setRange(0, kernel.warps - 1)
            self.slider.setPageStep(max(1, kernel.warps_per_block))
            self.warps_label.setText(f"of {kernel.warps:,}")
            self.instruction.clear()
            self.instruction.addItems([f"{k}: {name}" for k, name in
                                       enumerate(instruction_names(kernel))])
            popup = self.instruction.view()  # the list shows each name whole
            popup.setMinimumWidth(popup.sizeHintForColumn(0) + POPUP_MARGIN)
        for s, v in zip((*self.block, self.warp_in_block), warp_coords(kernel, sel.warp)):
            s.setValue(v)
        self.warp_spin.setValue(sel.warp)
        self.slider.setValue(sel.warp)
        self.instruction.setCurrentIndex(sel.instruction)
        self.run.setRange(1, max(view.runs, 1))
        self.run.setEnabled(view.runs > 1)
        self.run.setValue(sel.run + 1)
        self.runs_label.setText(f"of {view.runs:,}")
        del blockers
