"""Settings > Include Folders…: the folders, besides a pattern's root (its folder, or the
repository holding it), whose files every pattern the app opens may also read (#includes,
searched last; kernel sources; values files), as `--include-dir` gives them on the command
line. Kept in the settings as `include_dirs` (checked on start by ui.stored)."""

from __future__ import annotations

import os

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..model.errors import printable

SETTING = "include_dirs"  # the settings key: a list of absolute folder names


class IncludeFoldersDialog(QDialog):
    """A list of folders with Add… and Remove; `folders()` is the list when accepted."""

    def __init__(self, folders: tuple[str, ...], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("includeFoldersDialog")
        self.setWindowTitle("Include Folders")
        self._folders = list(folders)
        about = QLabel("Folders whose files every pattern may also read, besides its own "
                       "folder (or its repository): #includes (searched last), kernel sources "
                       "and values files, as --include-dir gives them.")
        about.setWordWrap(True)
        self.list = QListWidget()
        self.add_button = QPushButton("Add…")
        self.remove_button = QPushButton("Remove")
        for widget, name in ((self.list, "includeFolderList"),
                             (self.add_button, "addIncludeFolder"),
                             (self.remove_button, "removeIncludeFolder")):
            widget.setObjectName(name)
        self.add_button.clicked.connect(self._ask_folder)
        self.remove_button.clicked.connect(self.remove_selected)
        self.list.currentRowChanged.connect(self._enable)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        side = QVBoxLayout()
        side.addWidget(self.add_button)
        side.addWidget(self.remove_button)
        side.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.list, 1)
        row.addLayout(side)
        layout = QVBoxLayout(self)
        layout.addWidget(about)
        layout.addLayout(row, 1)
        layout.addWidget(buttons)
        self.resize(560, 320)
        self._fill()

    def folders(self) -> tuple[str, ...]:
        return tuple(self._folders)

    def add_folder(self, folder: str) -> None:
        """Add `folder` (made absolute) at the end, unless it is listed already."""
        folder = os.path.abspath(folder)
        if folder not in self._folders:
            self._folders.append(folder)
            self._fill()

    def remove_selected(self) -> None:
        row = self.list.currentRow()
        if 0 <= row < len(self._folders):
            del self._folders[row]
            self._fill()

    def _ask_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add an include folder")
        if folder:
            self.add_folder(folder)

    def _fill(self) -> None:
        self.list.clear()
        self.list.addItems([printable(f) for f in self._folders])
        self._enable(self.list.currentRow())

    def _enable(self, row: int) -> None:
        self.remove_button.setEnabled(row >= 0)
