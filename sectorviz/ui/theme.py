"""Light and dark themes of the window: Qt's palette around the pictures, and the picture
colours themselves from sectorviz.scene.palette (one palette for the window and the exports)."""

from __future__ import annotations

from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from ..scene import palette


@dataclass(frozen=True)
class Theme:
    """Window colours as '#rrggbb'; `diagram` is the scene palette the views draw with."""

    name: str
    window: str
    base: str
    text: str
    muted: str
    accent: str
    bad: str
    diagram: palette.Theme


LIGHT = Theme(name="light", window="#f3f3f3", base=palette.LIGHT.background,
              text=palette.LIGHT.text, muted=palette.LIGHT.muted, accent="#2f6fd6",
              bad="#d62f2f", diagram=palette.LIGHT)
DARK = Theme(name="dark", window="#232427", base=palette.DARK.background,
             text=palette.DARK.text, muted=palette.DARK.muted, accent="#5b9bff", bad="#ff5c5c",
             diagram=palette.DARK)
THEMES = {t.name: t for t in (LIGHT, DARK)}


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


def fixed_plot(name: str) -> pg.PlotWidget:
    """A pyqtgraph plot the user reads but does not pan, zoom or open a menu on (the overview
    and histogram panes), with objectName `name`, in the light theme until themed."""
    plot = pg.PlotWidget(background=LIGHT.base)
    plot.setObjectName(name)
    plot.setMouseEnabled(x=False, y=False)
    plot.hideButtons()
    plot.setMenuEnabled(False)
    return plot


def theme_plot(plot: pg.PlotWidget, theme: Theme) -> None:
    """A plot's background and both axes (labels in the text colour, lines muted) in `theme`."""
    plot.setBackground(theme.base)
    for axis in ("left", "bottom"):
        plot.getAxis(axis).setTextPen(theme.text)
        plot.getAxis(axis).setPen(theme.muted)
