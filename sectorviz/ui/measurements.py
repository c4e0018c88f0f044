"""Measured counters in the app (File > Import Measurements…): an Nsight Compute raw CSV read
by the reader `report --measured` uses, its launch picked and set against the document's
finished analysis by the same `compare`, shown as the sheet's last step.

The CSV is not part of the pattern: it stays imported across edits (a grid other than the
measured one then says so in the step) until another is imported or it is cleared.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from ..model import Analysis, Pattern, PatternError
from ..model.measured import Launch, compare, read_ncu_csv
from ..scene.sheet import Step, measured_step


class Measurements(QObject):
    """The imported CSV's launches (none before an import)."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.path: Path | None = None
        self.launches: list[Launch] = []

    def load(self, path: str | Path) -> None:
        """Read `path`; a file that is not a raw CSV with a launch raises PatternError (one
        line naming the file) and keeps what was imported before."""
        path = Path(path)
        launches = read_ncu_csv(path, path.name)
        if not launches:
            raise PatternError(path.name, "the CSV has no kernel launch rows")
        self.path, self.launches = path, launches
        self.changed.emit()

    def clear(self) -> None:
        self.path, self.launches = None, []
        self.changed.emit()

    def step(self, number: int, pattern: Pattern, analysis: Analysis | None) -> Step | None:
        """Step `number` of the sheet: the first launch of the pattern's kernel (the CSV's
        only kernel for a pattern without one) against `analysis`; None before an import."""
        if self.path is None:
            return None
        if analysis is None:
            return measured_step(number, self.path.name, None,
                                 "waiting for the grid analysis to finish")
        names = {x.name for x in self.launches}
        name = next(iter(names)) if pattern.kernel is None and len(names) == 1 else None
        try:
            rows = compare(pattern, analysis, self.launches, name, place=self.path.name)
        except PatternError as err:
            return measured_step(number, self.path.name, None, str(err))
        return measured_step(number, self.path.name, rows)
