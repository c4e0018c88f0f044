"""TikZ holds the same shapes as the SVG and compiles where LaTeX is installed."""

import shutil
import subprocess

import pytest

from sectorviz.cli import main
from sectorviz.export.latex_document import standalone_latex
from sectorviz.export.tikz import scene_tikz
from sectorviz.gather.diagrams import diagram_scene
from sectorviz.paths import resources_dir
from sectorviz.scene.diagrams import DiagramSpec
from sectorviz.scene.shapes import Rect, Text

CROSSING = str(resources_dir() / "examples" / "struct12-crossing.sectorviz.json")


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


def test_standalone_wraps_the_picture_in_a_document(crossing):
    picture = scene_tikz(diagram_scene(crossing, DiagramSpec()))
    lines = standalone_latex(picture, sheet=False).splitlines()
    assert lines[:5] == [r"\documentclass{article}", r"\usepackage{tikz}", r"\pagestyle{empty}",
                         r"\begin{document}", r"\noindent\resizebox{\linewidth}{!}{%"]
    assert lines[-2:] == ["}", r"\end{document}"]
    assert "\n".join(lines[5:-2]) == picture.rstrip("\n") + "%"  # the picture, unchanged


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex missing")
@pytest.mark.parametrize("extra", [[], ["--sheet"]])
def test_standalone_exports_compile_alone(tmp_path, extra):
    """`export --standalone` (the diagram, or with --sheet the sheet): pdflatex alone, no
    wrapper file, no overfull box."""
    out = tmp_path / "alone.tex"
    assert main(["export", CROSSING, "-o", str(out), "--standalone", *extra]) == 0
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                           out.name], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "Overfull \\hbox" not in proc.stdout
    assert (tmp_path / "alone.pdf").stat().st_size > 1000


def test_standalone_is_for_tex_only(tmp_path, capsys):
    assert main(["export", CROSSING, "-o", str(tmp_path / "d.svg"), "--standalone"]) == 2
    assert capsys.readouterr().err.strip() == ("sectorviz export: --standalone writes a .tex "
                                               "document, not .svg")


def test_a_standalone_sweep_chart_is_a_document(tmp_path):
    out = tmp_path / "chart.tex"
    stride = str(resources_dir() / "examples" / "stride-32B.sectorviz.json")
    assert main(["sweep", stride, "--param", "stride=1,2,4", "-o", str(out), "--standalone",
                 "--jobs", "1"]) == 0
    text = out.read_text()
    assert text.startswith("\\documentclass{article}\n") and text.endswith("\\end{document}\n")
    assert "\\begin{tikzpicture}" in text
