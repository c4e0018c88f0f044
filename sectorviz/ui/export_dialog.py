"""File > Export: a live preview of the export diagram, its options, Save and Copy.

The dialog holds a DiagramSpec built from its controls (the options of `sectorviz export`);
the preview is that spec's SVG (drawn on a thread: a warp's details take seconds on a large
kernel; the newest controls win) rasterized by QSvgRenderer, and Save writes the same bytes the
command line would (sectorviz.export.formats), so GUI and CLI files are identical.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QMimeData, Qt
from PySide6.QtGui import QGuiApplication, QPixmap
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..atomic import write_atomic
from ..export.formats import diagram_bytes, diagram_svg, sheet_bytes
from ..export.raster import render_image, svg_size
from ..gather.diagrams import selected_spec
from ..model import Pattern, PatternError
from ..model.errors import printable
from ..model.frontend import kernel_for
from ..scene.diagrams import KINDS, DiagramSpec
from ..scene.palette import DEFAULT_THEME, THEMES
from .background import NewestCall

PREVIEW_SIZE = (720, 420)  # smallest preview; it grows with the dialog
DRAWING = "drawing the diagram…"  # the status line while the preview is being drawn
COPY_SCALE = 2
SVG_MIME = "image/svg+xml"

# Save dialog filters -> (suffix, sheet?)
FILTERS = {
    "SVG diagram (*.svg)": (".svg", False),
    "PDF diagram (*.pdf)": (".pdf", False),
    "PNG image (*.png)": (".png", False),
    "TikZ picture (*.tex)": (".tex", False),
    "Sheet as CSV (*.csv)": (".csv", True),
    "Sheet as Markdown (*.md)": (".md", True),
    "Sheet as LaTeX booktabs (*.tex)": (".tex", True),
}


def diagram_mime(pattern: Pattern, spec: DiagramSpec, scale: float = COPY_SCALE,
                 transparent: bool = False) -> QMimeData:
    """One diagram as clipboard data: a PNG-able image and its SVG text (image/svg+xml)."""
    svg = diagram_svg(pattern, spec, transparent)
    mime = QMimeData()
    mime.setImageData(render_image(svg, scale, transparent))
    mime.setData(SVG_MIME, QByteArray(svg.encode("utf-8")))
    return mime


def copy_diagram(pattern: Pattern, warp: int, instruction: int) -> None:
    """Put the diagram of (warp, instruction) on the clipboard as PNG and SVG: the grid, or
    the banks diagram of a shared instruction (counted after the global ones)."""
    QGuiApplication.clipboard().setMimeData(
        diagram_mime(pattern, selected_spec(pattern, warp, instruction)))


class ExportDialog(QDialog):
    """Options on the left, preview on the right; Save writes the chosen format, offered in
    `folder` (the pattern file's; the home folder for an untitled pattern)."""

    def __init__(self, pattern: Pattern, warp: int, instruction: int,
                 parent: QWidget | None = None, folder: Path | None = None):
        super().__init__(parent)
        self.setObjectName("exportDialog")
        self.setWindowTitle(printable(f"Export: {pattern.name}"))
        self.pattern = pattern
        self.folder = Path.home() if folder is None else folder
        kernel = kernel_for(pattern)

        self.kind = self._combo("exportKind", KINDS, "grid")
        self.theme = self._combo("exportTheme", sorted(THEMES), DEFAULT_THEME)
        self.warp = self._spin("exportWarp", 0, kernel.warps - 1, warp)
        self.instruction = QComboBox(objectName="exportInstruction")
        self.instruction.addItems([printable(ins.name) for ins in kernel.instructions])
        self._shared_listed = False  # the combo lists the shared instructions (banks)
        chosen = selected_spec(pattern, warp, instruction)
        self.kind.setCurrentText(chosen.kind)
        self._list_instructions(chosen.kind == "banks")
        self.instruction.setCurrentIndex(chosen.instruction)
        self.execution = self._spin("exportExecution", 0, 10**6, 0)
        self.scale = self._spin("exportScale", 1, 4, COPY_SCALE)
        self.scale.setSuffix("x")
        self.transparent = self._check("exportTransparent", "transparent background", False)
        self.legend = self._check("exportLegend", "legend", True)
        self.caption = self._check("exportCaption", "caption", True)
        self.explain = self._check("exportExplain", "why, under the caption", False)
        for signal in (self.kind.currentIndexChanged, self.theme.currentIndexChanged,
                       self.warp.valueChanged, self.instruction.currentIndexChanged,
                       self.execution.valueChanged, self.transparent.toggled,
                       self.legend.toggled, self.caption.toggled, self.explain.toggled):
            signal.connect(self.refresh)

        form = QFormLayout()
        form.addRow("Diagram", self.kind)
        form.addRow("Theme", self.theme)
        form.addRow("Warp", self.warp)
        form.addRow("Instruction", self.instruction)
        form.addRow("Loop iteration", self.execution)
        form.addRow("PNG scale", self.scale)
        for box in (self.transparent, self.legend, self.caption, self.explain):
            form.addRow(box)
        self.status = QLabel(objectName="exportStatus", wordWrap=True)
        form.addRow(self.status)

        self.preview = QLabel(objectName="exportPreview", alignment=Qt.AlignmentFlag.AlignCenter)
        self.preview.setMinimumSize(*PREVIEW_SIZE)
        self.preview.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.save_button = buttons.addButton("Save...", QDialogButtonBox.ButtonRole.ActionRole)
        self.save_button.setObjectName("exportSave")
        self.copy_button = buttons.addButton("Copy", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.setObjectName("exportCopy")
        buttons.rejected.connect(self.reject)
        self.save_button.clicked.connect(self.ask_and_save)
        self.copy_button.clicked.connect(self.copy)

        top = QHBoxLayout()
        top.addLayout(form)
        top.addWidget(self.preview, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(buttons)
        self.svg = ""
        self._drawing = NewestCall()  # no parent: see NewestCall
        self._drawing.done.connect(self._drawn)
        self.refresh()

    @staticmethod
    def _combo(name: str, items, current: str) -> QComboBox:
        box = QComboBox(objectName=name)
        box.addItems(list(items))
        box.setCurrentText(current)
        return box

    @staticmethod
    def _spin(name: str, lo: int, hi: int, value: int) -> QSpinBox:
        box = QSpinBox(objectName=name)
        box.setRange(lo, hi)
        box.setValue(value)
        return box

    @staticmethod
    def _check(name: str, text: str, on: bool) -> QCheckBox:
        box = QCheckBox(text, objectName=name)
        box.setChecked(on)
        return box

    def _list_instructions(self, shared: bool) -> None:
        """List the shared instructions (the banks diagram's) or the global ones."""
        if shared == self._shared_listed:
            return
        kernel = kernel_for(self.pattern)
        self.instruction.blockSignals(True)
        self.instruction.clear()
        self.instruction.addItems([printable(ins.name) for ins in (
            kernel.shared_instructions if shared else kernel.instructions)])
        self.instruction.blockSignals(False)
        self._shared_listed = shared

    def spec(self) -> DiagramSpec:
        """The diagram the controls describe."""
        return DiagramSpec(kind=self.kind.currentText(), warp=self.warp.value(),
                           instruction=self.instruction.currentIndex(),
                           execution=self.execution.value(), theme=self.theme.currentText(),
                           legend=self.legend.isChecked(), caption=self.caption.isChecked(),
                           explain=self.explain.isChecked() and self.explain.isEnabled())

    def refresh(self) -> None:
        """Redraw the preview from the controls; a bad combination shows its message."""
        self._list_instructions(self.kind.currentText() == "banks")
        kind = self.kind.currentText()
        self.execution.setEnabled(kind in ("grid", "banks"))
        self.instruction.setEnabled(kind in ("grid", "banks", "histogram"))
        self.explain.setEnabled(kind in ("grid", "warp", "banks"))
        self.status.setText(DRAWING)
        self.save_button.setEnabled(False)
        self.copy_button.setEnabled(False)
        pattern, spec, transparent = self.pattern, self.spec(), self.transparent.isChecked()
        self._drawing.run(lambda: diagram_svg(pattern, spec, transparent))

    @property
    def drawing(self) -> bool:
        """Whether the preview of the controls' diagram is still being drawn."""
        return self.status.text() == DRAWING

    def _drawn(self, token: int, svg: str | None, error: Exception | None) -> None:
        """The newest preview's SVG arrived (or the message why the combination is bad)."""
        if token != self._drawing.token:
            return
        if error is not None:
            if not isinstance(error, PatternError):
                raise error  # a bug: as it would have been raised on this thread
            self.svg = ""
            self.status.setText(str(error))
            self.preview.clear()
            return
        assert svg is not None
        self.svg = svg
        self.status.setText("")
        self.save_button.setEnabled(True)
        self.copy_button.setEnabled(True)
        self._show_preview()

    def _show_preview(self) -> None:
        """Rasterize the current SVG to fit the preview label at the screen's pixel ratio."""
        width, height = svg_size(self.svg)
        ratio = self.devicePixelRatioF()
        fit = min(self.preview.width() / width, self.preview.height() / height)
        pixmap = QPixmap.fromImage(render_image(self.svg, fit * ratio,
                                                self.transparent.isChecked()))
        pixmap.setDevicePixelRatio(ratio)
        self.preview.setPixmap(pixmap)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        if self.svg:
            self._show_preview()

    def save(self, path: str | Path, sheet: bool = False) -> None:
        """Write the current diagram (or, with `sheet` or a .csv/.md path, the sheet about the
        chosen warp) to path, atomically; the format comes from the suffix. Raises ValueError
        or OSError."""
        path = Path(path)
        suffix = path.suffix.lower()
        spec = self.spec()
        if sheet or suffix in (".csv", ".md"):
            data = sheet_bytes(self.pattern, suffix, spec.warp, spec.instruction, spec.execution)
        else:
            data = diagram_bytes(self.pattern, [spec], suffix, self.scale.value(),
                                 self.transparent.isChecked())
        write_atomic(path, data)

    def ask_and_save(self) -> None:
        """Save... : ask for a file name, the filter picking diagram or sheet for .tex."""
        stem = "".join(c if c.isalnum() else "-" for c in self.pattern.name.lower()).strip("-")
        path, chosen = QFileDialog.getSaveFileName(self, "Export", str(self.folder / f"{stem}.svg"),
                                                   ";;".join(FILTERS))
        if not path:
            return
        suffix, sheet = FILTERS.get(chosen, (Path(path).suffix, False))
        if not Path(path).suffix:
            path += suffix
        try:
            self.save(path, sheet)
        except (ValueError, OSError, PatternError) as err:
            self.status.setText(f"{path}: {err}")
            return
        self.status.setText(f"saved {path}")

    def copy(self) -> None:
        """Copy the previewed diagram (PNG at the chosen scale, and SVG) to the clipboard."""
        QGuiApplication.clipboard().setMimeData(
            diagram_mime(self.pattern, self.spec(), self.scale.value(),
                         self.transparent.isChecked()))
        self.status.setText("copied PNG and SVG")
