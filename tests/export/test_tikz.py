"""TikZ holds the same shapes as the SVG and compiles where LaTeX is installed."""

import shutil
import subprocess

import pytest

from sectorviz.export.tikz import scene_tikz
from sectorviz.gather.diagrams import diagram_scene
from sectorviz.scene.diagrams import DiagramSpec
from sectorviz.scene.shapes import Rect, Text


def test_one_command_per_shape(crossing):
    scene = diagram_scene(crossing, DiagramSpec())
    tikz = scene_tikz(scene, transparent=True)
    lines = tikz.splitlines()
    assert lines[2].endswith(r"pt wide; to fit a column: \resizebox{\linewidth}{!}"
                             r"{\input{this-file.tex}}")  # how to scale it, in the file
    assert lines[3] == r"\begin{tikzpicture}[x=0.75pt, y=-0.75pt]"
    assert lines[-1] == r"\end{tikzpicture}"
    assert sum(line.startswith(r"\fill") for line in lines) == \
        sum(isinstance(s, Rect) for s in scene.shapes)
    assert sum(line.startswith(r"\node") for line in lines) == \
        sum(isinstance(s, Text) for s in scene.shapes)
    assert r"{p[0] +}" in tikz and r"useful 100.0\%" in tikz


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex missing")
def test_tikz_compiles(tmp_path, partial):
    for i, spec in enumerate((DiagramSpec(warp=31), DiagramSpec(kind="overview", theme="dark"))):
        (tmp_path / f"d{i}.tex").write_text(scene_tikz(diagram_scene(partial, spec)))
    (tmp_path / "doc.tex").write_text(
        "\\documentclass{article}\\usepackage{tikz}\\begin{document}\n"
        "\\resizebox{\\linewidth}{!}{\\input{d0.tex}}\n"
        "\\resizebox{\\linewidth}{!}{\\input{d1.tex}}\n\\end{document}\n")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:]
