"""Scene -> a TikZ picture for LaTeX: the same shapes as the SVG, in the document's font.

One diagram unit (a CSS pixel) is 0.75 pt with y pointing down, so the picture has the size of
the PDF export; wrap it in \\resizebox{\\linewidth}{!}{...} to fit a column.
"""

from __future__ import annotations

from ..scene.shapes import Line, Rect, Scene, Text, num
from .escape import latex_text

ANCHORS = {"start": "base west", "middle": "base", "end": "base east"}


def scene_tikz(scene: Scene, transparent: bool = False) -> str:
    """The tikzpicture of a scene (needs \\usepackage{tikz}); colours defined inside it."""
    colours: dict[str, str] = {}

    def colour(hex_colour: str) -> str:
        return colours.setdefault(hex_colour, f"sv{len(colours)}")

    body = []
    if not transparent:
        body.append(rf"\fill[{colour(scene.background)}] (0,0) rectangle "
                    rf"({num(scene.width)},{num(scene.height)});")
    for s in scene.shapes:
        if isinstance(s, Rect):
            draw = f", draw={colour(s.stroke)}, line width=0.56pt" if s.stroke else ""
            body.append(rf"\fill[{colour(s.fill)}{draw}] ({num(s.x)},{num(s.y)}) rectangle "
                        rf"({num(s.x + s.w)},{num(s.y + s.h)});")
        elif isinstance(s, Line):
            dash = f", dash pattern=on {num(1.5 * s.width)}pt off {num(1.5 * s.width)}pt" \
                if s.dash else ""
            body.append(rf"\draw[{colour(s.stroke)}, line width={num(0.75 * s.width)}pt{dash}] "
                        rf"({num(s.x1)},{num(s.y1)}) -- ({num(s.x2)},{num(s.y2)});")
        elif isinstance(s, Text):
            pt = num(0.75 * s.size)
            font = rf"\fontsize{{{pt}}}{{{pt}}}\selectfont" + (r"\bfseries" if s.bold else "")
            rotate = ", rotate=90" if s.rotate else ""
            body.append(rf"\node[anchor={ANCHORS[s.anchor]}, inner sep=0pt, "
                        rf"text={colour(s.fill)}, font={font}{rotate}] at ({num(s.x)},{num(s.y)}) "
                        rf"{{{latex_text(s.text)}}};")
    head = [f"% {latex_text(scene.title.replace(chr(10), ' '))}", r"% needs \usepackage{tikz}",
            rf"% {num(0.75 * scene.width)} pt wide; to fit a column: "
            r"\resizebox{\linewidth}{!}{\input{this-file.tex}}",
            r"\begin{tikzpicture}[x=0.75pt, y=-0.75pt]"]
    head += [rf"\definecolor{{{name}}}{{HTML}}{{{hex_colour[1:].upper()}}}"
             for hex_colour, name in colours.items()]
    return "\n".join(head + body + [r"\end{tikzpicture}"]) + "\n"
