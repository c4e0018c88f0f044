"""The cache model's machine for the document's pattern, above the accounting sheet: none, a
GPU preset or custom values (L2 bytes), the ways and the execution order.

Every choice edits the pattern's "machine" key through the document (one undoable step, as
every edit); the widgets show what the pattern says and never hold a machine of their own.
A choice the model refuses (ways that do not divide the L2's lines) leaves the pattern as it
was and shows the model's one-line error.
"""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QGridLayout, QLabel, QWidget

from ..model import PatternError, pattern_from_dict
from ..model.cache import ORDERS, PRESETS, Machine, machine
from .document import Change, Document
from .fields import ERROR_COLOUR

NONE, CUSTOM = "no cache model", "custom"
WAYS = (0, 4, 8, 16, 32)  # offered; 0 = fully associative (a file's other value is shown too)
KIB = 1024
MIN_CHARS = 4  # the fewest characters a box keeps when the sheet's dock is narrow
DEFAULT_PRESET = "H100-SXM"  # whose numbers custom values start from, and the L2 box shows idle


def ways_text(ways: int) -> str:
    return "fully associative" if ways == 0 else f"{ways}-way"


def machine_spec(pattern_doc: dict, choice: str, current: Machine | None) -> dict | None:
    """The "machine" key for a choice in the machine box: None for NONE, a preset with the
    ways and order kept, or custom values starting from the current machine (H100-SXM's
    numbers without one)."""
    kept = {k: v for k, v in pattern_doc.get("machine", {}).items() if k in ("ways", "order")}
    if choice == NONE:
        return None
    if choice != CUSTOM:
        return {"preset": choice, **kept}
    base = current or machine({"preset": DEFAULT_PRESET})
    return {"l2_bytes": base.l2_bytes, "sms": base.sms, "dram_bytes_per_s": base.dram_bytes_per_s,
            "threads_per_sm": base.threads_per_sm, **kept}


class KibBox(QDoubleSpinBox):
    """Kibibytes in steps of 1/8 (128 B, one line), written without trailing zeros."""

    def textFromValue(self, value: float) -> str:
        return f"{value:.3f}".rstrip("0").rstrip(".")


class MachineBar(QWidget):
    """Machine, L2 size, ways and order of the document's pattern (see the module doc)."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.document = document
        self.preset = QComboBox(objectName="machinePreset",
                                toolTip="The GPU whose L2 the cache model assumes (without "
                                        "one, step 5 gives the two bounds only)")
        self.preset.addItems([NONE, *PRESETS, CUSTOM])
        self.l2 = KibBox(objectName="machineL2", suffix=" KiB", decimals=3, minimum=0.125,
                         maximum=2**21, singleStep=KIB, keyboardTracking=False,
                         toolTip="L2 size of the model (overrides the preset's)")
        self.ways = QComboBox(objectName="machineWays", toolTip="Lines per set (LRU in a set)")
        self.order = QComboBox(objectName="machineOrder",
                               toolTip="The order warp requests reach the L2")
        self.order.addItems(list(ORDERS))
        for combo in (self.preset, self.ways, self.order):  # narrow docks may squeeze them
            combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(MIN_CHARS)
        self.error = QLabel(objectName="machineError", wordWrap=True)
        self.error.setStyleSheet(f"color: {ERROR_COLOUR};")
        self.error.hide()
        grid = QGridLayout(self)  # no labels: the boxes say what they hold (and the dock stays
        grid.setContentsMargins(4, 4, 4, 0)  # as narrow as the sheet's buttons)
        for i, widget in enumerate((self.preset, self.l2, self.ways, self.order)):
            grid.addWidget(widget, i // 2, i % 2)
        grid.setColumnStretch(0, 3)
        grid.setColumnStretch(1, 2)
        grid.addWidget(self.error, 2, 0, 1, 2)
        self.preset.activated.connect(self._on_preset)
        self.l2.valueChanged.connect(self._on_l2)
        self.ways.activated.connect(self._on_ways)
        self.order.activated.connect(self._on_order)
        document.changed.connect(self._on_changed)
        self._show()

    # ------------------------------------------------------------ pattern -> widgets

    def _on_changed(self, flags: int) -> None:
        if flags & Change.PATTERN:
            self._show()

    def _show(self) -> None:
        """The widgets as the pattern's machine says, without emitting edits."""
        m = self.document.pattern.machine
        spec = self.document.pattern.to_dict().get("machine", {})
        widgets = (self.preset, self.l2, self.ways, self.order)
        for w in widgets:
            w.blockSignals(True)
        self.preset.setCurrentText(NONE if m is None else spec.get("preset", CUSTOM))
        ways = 0 if m is None else m.ways
        self.ways.clear()
        for n in sorted({*WAYS, ways}):
            self.ways.addItem(ways_text(n), n)
        self.ways.setCurrentIndex(self.ways.findData(ways))
        self.l2.setValue((m.l2_bytes if m else PRESETS[DEFAULT_PRESET].l2_bytes) / KIB)
        self.order.setCurrentText(m.order if m else ORDERS[0])
        for w in widgets[1:]:
            w.setEnabled(m is not None)
        for w in widgets:
            w.blockSignals(False)

    # ------------------------------------------------------------ widgets -> pattern

    def _on_preset(self, _index: int) -> None:
        choice = self.preset.currentText()
        spec = machine_spec(self.document.pattern.to_dict(), choice, self.document.pattern.machine)
        self._edit(spec, f"Machine {choice}")

    def _on_l2(self, kib: float) -> None:
        self._edit_key("l2_bytes", round(kib * KIB), "L2 size", merge="machine-l2")

    def _on_ways(self, _index: int) -> None:
        self._edit_key("ways", self.ways.currentData(), f"L2 {self.ways.currentText()}")

    def _on_order(self, _index: int) -> None:
        self._edit_key("order", self.order.currentText(), f"Order {self.order.currentText()}")

    def _edit_key(self, key: str, value, text: str, merge: str | None = None) -> None:
        spec = self.document.pattern.to_dict().get("machine")
        if spec is not None:
            self._edit({**spec, key: value}, text, merge)

    def _edit(self, spec: dict | None, text: str, merge: str | None = None) -> None:
        """The pattern with "machine" set to `spec` (removed for None), as one undoable step;
        a spec the model refuses shows its error and changes nothing."""
        pattern = self.document.pattern
        doc = pattern.to_dict()
        doc.pop("machine", None)
        if spec is not None:
            doc["machine"] = spec
        try:
            edited = pattern_from_dict(doc, pattern.base_dir, pattern.include_dirs)
        except PatternError as err:
            self.error.setText(str(err).splitlines()[0])
            self.error.show()
            self._show()
            return
        self.error.hide()
        self.document.set_pattern(edited, text, merge)
