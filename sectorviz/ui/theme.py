"""Light and dark themes: one palette for Qt widgets and the colours the views paint with."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication


@dataclass(frozen=True)
class Theme:
    """Colours as '#rrggbb'. `ramp` maps sectors per request 1, 2, 4, 8, 16, 32 (log2 steps)."""

    name: str
    window: str
    base: str
    text: str
    muted: str
    line: str
    cell: str  # the unused bytes of a touched sector
    hit: str  # bytes a lane uses
    crossing: str  # lane whose access spans two sectors
    shared: str  # lane that shares a word with another lane
    inactive: str  # lane that exists but does not take part
    missing: str  # lane past the end of a partial warp
    accent: str
    bad: str
    ramp: tuple[str, ...]


LIGHT = Theme(
    name="light", window="#f3f3f3", base="#ffffff", text="#1d1d1f", muted="#6b6b70",
    line="#c9c9ce", cell="#e4e8ee", hit="#2f6fd6", crossing="#e07b00", shared="#8e44ad",
    inactive="#d6d6d6", missing="#bbbbbb", accent="#2f6fd6", bad="#d62f2f",
    ramp=("#1a9850", "#52b35a", "#91cf60", "#fee08b", "#fc8d59", "#d73027"),
)
DARK = Theme(
    name="dark", window="#232427", base="#1a1b1e", text="#e8e8ea", muted="#9a9aa2",
    line="#45464c", cell="#33363d", hit="#5b9bff", crossing="#ff9f1a", shared="#c17ddf",
    inactive="#3a3a3e", missing="#2a2a2d", accent="#5b9bff", bad="#ff5c5c",
    ramp=("#1a9850", "#4fae55", "#8cc863", "#f2d06b", "#f46d43", "#e0332a"),
)
THEMES = {t.name: t for t in (LIGHT, DARK)}


def ramp_rgba(theme: Theme, sectors_per_request: np.ndarray) -> np.ndarray:
    """Sectors per request (float array, NaN = no request) -> uint8 RGBA, log2 scale 1..32."""
    stops = np.array([QColor(c).getRgb()[:3] for c in theme.ramp], dtype=float)
    x = np.clip(np.log2(np.maximum(np.nan_to_num(sectors_per_request, nan=1.0), 1.0)), 0, 5)
    i = np.minimum(x.astype(int), len(stops) - 2)
    f = (x - i)[..., None]
    rgb = stops[i] * (1 - f) + stops[i + 1] * f
    alpha = np.where(np.isnan(sectors_per_request), 0, 255)[..., None]
    return np.concatenate([rgb, alpha], axis=-1).astype(np.uint8)


def apply_theme(app: QApplication, theme: Theme) -> None:
    """Fusion style with the theme's palette; pyqtgraph defaults for widgets made later."""
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    pal = QPalette()
    roles = {
        QPalette.Window: theme.window, QPalette.WindowText: theme.text, QPalette.Base: theme.base,
        QPalette.AlternateBase: theme.window, QPalette.Text: theme.text,
        QPalette.Button: theme.window, QPalette.ButtonText: theme.text,
        QPalette.ToolTipBase: theme.base, QPalette.ToolTipText: theme.text,
        QPalette.Highlight: theme.accent, QPalette.HighlightedText: "#ffffff",
        QPalette.PlaceholderText: theme.muted, QPalette.Link: theme.accent,
    }
    for role, colour in roles.items():
        pal.setColor(role, QColor(colour))
    for role in (QPalette.WindowText, QPalette.Text, QPalette.ButtonText):
        pal.setColor(QPalette.Disabled, role, QColor(theme.muted))
    app.setPalette(pal)
    pg.setConfigOptions(background=theme.base, foreground=theme.text, antialias=True)
