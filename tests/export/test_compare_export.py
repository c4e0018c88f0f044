"""`sectorviz export A --compare B`: the comparison slide (both grids' hit cells are the
model's, the caption carries the headline ratio) in every theme and format, the comparison
sheet as CSV, Markdown and LaTeX, and a golden SVG."""

import csv
import io
import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sectorviz.cli import main
from sectorviz.export.svg import scene_svg
from sectorviz.gather.compare import compare
from sectorviz.model import analyze, load_pattern, pattern_from_dict, warp_detail
from sectorviz.model.frontend import kernel_for
from sectorviz.paths import resources_dir
from sectorviz.scene.grid import grid_layout
from sectorviz.scene.palette import THEMES
from sectorviz.scene.slide import slide_scene
from sectorviz.scene.spec import DiagramSpec

EXAMPLES = resources_dir() / "examples"
NAIVE, TILED = (str(EXAMPLES / f"transpose-{k}.sectorviz.json") for k in ("naive", "tiled"))
GATHER, ADD = (str(EXAMPLES / f) for f in ("gather-distinct.sectorviz.json",
                                           "vector-add.sectorviz.json"))
GOLDEN = Path(__file__).parent / "golden"


def hits_of(pattern, warp, k):
    kernel = kernel_for(pattern)
    ins = kernel.instructions[k]
    detail = warp_detail(pattern, warp)
    return sorted(grid_layout(detail.executions[k][0], ins.width, pattern.sector_bytes,
                              kernel.arrays[ins.first_array].address0, detail.valid).hits)


def svg_hits(root):
    return sorted((int(e.get("data-lane")), int(e.get("data-sector"))) for e in root.iter()
                  if "hit" in e.get("class", "").split())


@pytest.mark.parametrize("stack", [False, True])
def test_slide_holds_both_grids_and_the_headline(tmp_path, stack):
    out = tmp_path / "slide.svg"
    argv = ["export", NAIVE, "--compare", TILED, "-o", str(out), "--warp", "33"]
    assert main(argv + ["--stack"] * stack) == 0
    root = ET.parse(out).getroot()
    a, b = load_pattern(NAIVE), load_pattern(TILED)
    assert svg_hits(root) == sorted(hits_of(a, 33, 1) + hits_of(b, 33, 1))  # the focus: stores
    texts = [e.text for e in root.iter() if e.tag.endswith("text")]
    assert texts[0] == ("Naive transpose → Tiled transpose: 32 → 4 sectors, "
                        "8x less")
    stats = " ".join(e.text for e in root.iter() if e.get("class") == "caption stats")
    assert "sector demand 36 MiB → 8 MiB, 4.5x less; useful 22.2% → 100%" in stats
    width, height = (float(root.get(k)) for k in ("width", "height"))
    assert width / height == pytest.approx(16 / 9, abs=0.01)  # a slide
    legend = [e.text for e in root.iter() if e.get("class") == "legend"]
    assert len(legend) == len(set(legend)) >= 3  # one legend for both sides


def test_slide_columns_share_one_width_and_lane_rows_line_up():
    a, b = load_pattern(GATHER), load_pattern(ADD)
    scene = slide_scene(compare(a, analyze(a), b, analyze(b)), DiagramSpec(kind="warp"))
    sectors = [s for s in scene.shapes if getattr(s, "css", "") == "sector"]
    assert len(sectors) == 40 + 12 and len({round(s.w, 6) for s in sectors}) == 1
    zero = [s.y for s in scene.shapes if getattr(s, "css", "") == "lane" and s.text == "0"]
    assert len(zero) == 2 and zero[0] == zero[1]


@pytest.mark.parametrize("theme", sorted(THEMES))
@pytest.mark.parametrize("suffix, magic", [(".svg", b"<?xml"), (".png", b"\x89PNG"),
                                           (".pdf", b"%PDF"), (".tex", b"% ")])
def test_every_theme_and_format(tmp_path, theme, suffix, magic):
    out = tmp_path / f"slide{suffix}"
    assert main(["export", GATHER, "--compare", ADD, "-o", str(out), "--theme", theme,
                 "--scale", "1"]) == 0
    data = out.read_bytes()
    assert data.startswith(magic)
    if suffix == ".svg":
        assert "40 MiB → 12 MiB, 3.33x less" in data.decode()
    if suffix == ".tex":  # the arrow as LaTeX: pdflatex needs no Unicode set-up
        assert r"40 MiB $\rightarrow$ 12 MiB, 3.33x less" in data.decode()


def test_comparison_sheets(tmp_path, capsys):
    assert main(["compare", NAIVE, TILED, "--json"]) == 0
    totals = json.loads(capsys.readouterr().out)["totals"]
    paths = {s: tmp_path / f"sheet{s}" for s in (".csv", ".md", ".tex")}
    for suffix, path in paths.items():
        assert main(["export", NAIVE, "--compare", TILED, "-o", str(path)]
                    + ["--sheet"] * (suffix == ".tex")) == 0
    rows = list(csv.reader(io.StringIO(paths[".csv"].read_text())))
    assert rows[0] == ["section", "item", "A", "B", "B / A", "unit", "note", "metric"]
    assert rows[1] == ["answer", "sector demand", str(totals["sector_bytes"][0]),
                       str(totals["sector_bytes"][1]), repr(totals["sector_bytes_ratio"]), "B",
                       "1179648 → 262144 sectors", ""]
    by_item = {(r[0][:1], r[1]): r for r in rows[1:]}
    sectors = by_item["3", "sectors"]
    assert [int(sectors[2]), int(sectors[3]), float(sectors[4])] == \
        totals["sectors"] + [totals["sectors_ratio"]]
    assert by_item["a", "useful"][2:6] == [repr(100 * f) for f in totals["useful_fraction"]] + \
        ["", "%"]
    warp = by_item["a", "sectors per warp (warp 0)"]
    assert [int(warp[2]), int(warp[3]), float(warp[4])] == \
        totals["warp_sectors"] + [totals["warp_sectors_ratio"]]
    assert totals["sectors"] == [1179648, 262144]
    assert "| store c[col][row] → store c[out_row][out_col] | 32 → 4 sectors, 8x less |" in \
        paths[".md"].read_text()
    tex = paths[".tex"].read_text()
    assert r"\begin{longtable}" in tex
    assert tex.isascii()  # arrows and dashes as LaTeX commands: pdflatex needs no set-up
    assert r"32 $\rightarrow$ 4 sectors" in tex and "---" in tex


@pytest.mark.parametrize("argv, line", [
    (["--compare", "/no/such.json"], "/no/such.json: "),
    (["--compare", TILED, "--kind", "overview"], "sectorviz export: --compare draws"),
    (["--compare", TILED, "--warps", "0:2"], "sectorviz export: --compare draws"),
    (["--compare", TILED, "--instruction", "9"], f"{NAIVE}: instruction: instruction 9"),
])
def test_bad_comparisons_exit_2_naming_the_file(tmp_path, capsys, argv, line):
    assert main(["export", NAIVE, "-o", str(tmp_path / "x.svg")] + argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(line) and err.count("\n") == 1


def tiny(name, index):
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": name, "launch": {"grid": [1], "block": [4]},
        "arrays": {"x": {"dtype": "float32", "length": 64}},
        "accesses": [{"name": "load x", "op": "load", "array": "x", "index": index}]}, None)


def test_golden_comparison_svg():
    """Four lanes 64 B apart against four consecutive lanes; compared byte for byte."""
    a, b = tiny("golden: stride 64 B", "threadIdx.x * 16"), tiny("golden: stride 4 B",
                                                                  "threadIdx.x")
    svg = scene_svg(slide_scene(compare(a, analyze(a), b, analyze(b)), DiagramSpec()))
    path = GOLDEN / "stride64-vs-4-compare.svg"
    if os.environ.get("SECTORVIZ_UPDATE_GOLDEN"):
        path.write_text(svg)
    assert svg == path.read_text()
    assert "4 → 1 sectors, 4x less" in svg


def test_explain_puts_why_under_the_caption(tmp_path):
    out = tmp_path / "slide.svg"
    assert main(["export", GATHER, "--compare", ADD, "-o", str(out), "--explain"]) == 0
    root = ET.parse(out).getroot()
    lines = " ".join(e.text for e in root.iter() if "explanation" in e.get("class", ""))
    assert lines == ("A, load data[index[i]]: The index array sends the 32 lanes to 32 sectors "
                     "(data-dependent): 32 sectors for 128 useful bytes (12.5%), ideal 4. "
                     "B, load b[i]: Lanes access consecutive 4-byte elements, aligned: 4 sectors "
                     "for 128 B, the ideal.")
    assert main(["export", GATHER, "--compare", ADD, "-o", str(out)]) == 0
    assert "explanation" not in out.read_text()


def test_comparison_sheets_carry_shared_memory(tmp_path, capsys):
    """The shared rows of the CSV hold `compare --json`'s numbers, plain; Markdown and LaTeX
    print the same rows; the slide's caption carries the shared headline."""
    assert main(["compare", NAIVE, TILED, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    t = doc["totals"]
    paths = {s: tmp_path / f"sheet{s}" for s in (".csv", ".md", ".tex")}
    for suffix, path in paths.items():
        assert main(["export", NAIVE, "--compare", TILED, "-o", str(path)]
                    + ["--sheet"] * (suffix == ".tex")) == 0
    rows = list(csv.reader(io.StringIO(paths[".csv"].read_text())))
    by_item = {(r[0][:1], r[1]): r for r in rows[1:]}
    assert by_item["a", "shared wavefronts"][2:6] == ["", str(t["shared_wavefronts"][1]), "",
                                                     "wavefronts"]
    assert by_item["a", "shared wavefronts per warp (warp 0)"][2:6] == [
        "", str(t["warp_shared_wavefronts"][1]), "", "wavefronts"]
    for pair in doc["shared"]:
        row = by_item["4", f"{pair['name'][1]} (only in B)"]
        assert row[2:6] == ["", str(pair["warp_wavefronts"][1]), "", "wavefronts"]
    assert by_item["4", "bank conflicts"][2:4] == ["", str(t["shared_bank_conflicts"][1])]
    assert by_item["4", "wavefronts"][3] == "65536"
    md = paths[".md"].read_text()
    assert "- **shared wavefronts** — → 65,536, conflict-free" in md
    assert "### 4. Shared memory, A → B (bank wavefronts in warp 0)" in md
    assert "| B: load tile[tx][ty] (shared) | Lanes 0-31 read column 0" in md
    assert r"\textbf{4. Shared memory" in paths[".tex"].read_text()
    out = tmp_path / "slide.svg"
    assert main(["export", NAIVE, "--compare", TILED, "-o", str(out)]) == 0
    assert f"whole grid: {t['headline']}" in out.read_text()
    assert t["headline"].endswith("; shared wavefronts — → 65,536, conflict-free")


def test_a_slide_of_a_shared_instruction_is_one_line(tmp_path, capsys):
    assert main(["export", TILED, "--compare", NAIVE, "-o", str(tmp_path / "x.svg"),
                 "--instruction", "load tile[tx][ty]"]) == 2
    assert capsys.readouterr().err == (
        f"{TILED}: --instruction: load tile[tx][ty] is a shared instruction: the comparison "
        "slide draws global ones\n")


@pytest.mark.parametrize("stack", [False, True])
def test_a_slide_fills_a_1920_by_1080_screen(stack):
    """Side by side and stacked, the slide's PNG shown 1920 pixels wide is 1080 high: a 16:9
    slide the drawing fills (its grids sized for it), with one legend for both sides."""
    from PySide6.QtGui import QImage

    from sectorviz.export.formats import scene_bytes
    a, b = load_pattern(NAIVE), load_pattern(TILED)
    scene = slide_scene(compare(a, analyze(a), b, analyze(b)), DiagramSpec(), stack)
    image = QImage.fromData(scene_bytes(scene, ".png", max(1.0, 1920 / scene.width)))
    shown = image.scaledToWidth(1920)  # on the screen
    assert shown.width() == 1920 and abs(shown.height() - 1080) <= 1
    drawn = [s for s in scene.shapes if getattr(s, "css", "") == "sector"]
    left, right = min(s.x for s in drawn), max(s.x + s.w for s in drawn)
    top = min(s.y for s in drawn)
    bottom = max(s.y + s.h for s in drawn)
    across, down = (right - left) / scene.width, (bottom - top) / scene.height
    assert max(across, down) > 0.6  # the grids fill the slide one way at least
    assert sum(getattr(s, "css", "") == "legend" and s.text == "bytes a lane uses"
               for s in scene.shapes) == 1
