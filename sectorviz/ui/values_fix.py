"""The status bar's one-click fix for a kernel that needs data the pattern does not give: when
the grid analysis fails with a message that offers values (`add "values": {...} to
arrays.data`, model.assume), a button applies exactly those values to the pattern as one
undoable edit ("Assume values for data"), saying the distribution it assumes."""

from __future__ import annotations

from PySide6.QtWidgets import QToolButton, QWidget

from ..model.assume import offered_fixes, stated, with_values
from ..model.errors import PatternError
from .document import Change, Document


class ValuesFix(QToolButton):
    """Shown while the document's analysis error offers values; a click applies them."""

    def __init__(self, document: Document, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("assumeValues")
        self.document = document
        self.fixes: dict[str, dict] = {}
        self.clicked.connect(self.apply)
        document.changed.connect(self._on_changed)
        self.hide()

    def _on_changed(self, flags: int) -> None:
        if flags & (Change.ANALYSIS | Change.PATTERN):
            self.fixes = offered_fixes(self.document.analysis_error or "")
            names = ", ".join(self.fixes)
            self.setText(f"Assume values for {names}")
            self.setToolTip("; ".join(stated(self.fixes)))
            self.setVisible(bool(self.fixes))

    def apply(self) -> None:
        """The offered values into the pattern, one undoable edit."""
        if not self.fixes:
            return
        try:
            pattern = with_values(self.document.pattern, self.fixes)
        except PatternError:  # the pattern changed under the offer: nothing to apply
            self.hide()
            return
        self.document.set_pattern(pattern, f"Assume values for {', '.join(self.fixes)}")
