"""The sweep chart scene: lines per instruction and total with their ideals, gaps at failed
points, one panel per value of a second param, 16:9 in every theme."""

import pytest

from sectorviz.scene.palette import THEMES, theme
from sectorviz.scene.shapes import Line, Rect, Text, text_width
from sectorviz.scene.sweep_chart import (
    HEIGHT,
    METRICS,
    WIDTH,
    metric_series,
    nice_top,
    sweep_chart_scene,
)


def stats(requests, sectors, ideal, useful=None, unique=None):
    useful = 4 * 32 * requests if useful is None else useful
    return {"requests": requests, "sectors": sectors, "ideal_sectors": ideal,
            "sectors_per_request": sectors / requests, "useful_bytes": useful,
            "useful_fraction": useful / (32 * sectors), "sector_size": 32,
            "sector_bytes": 32 * sectors, "unique_sectors": sectors if unique is None else unique}


def shared(wavefronts, ideal):
    return {"wavefronts": wavefronts, "ideal_wavefronts": ideal}


def report(load, store, shared_load=None):
    """A report with two global instructions, their totals and maybe one shared load."""
    return {"instructions": [{"name": "load", **stats(*load)}, {"name": "store", **stats(*store)}],
            "totals": stats(load[0] + store[0], load[1] + store[1], load[2] + store[2]),
            "shared": [] if shared_load is None else [{"name": "tile", **shared(*shared_load)}],
            "shared_totals": None if shared_load is None else shared(*shared_load)}


POINTS = [
    {"params": {"s": 1}, "report": report((2, 8, 8), (2, 8, 8), (2, 2))},
    {"params": {"s": 2}, "report": report((2, 16, 8), (2, 8, 8), (64, 2))},
    {"params": {"s": 4}, "error": "launch.block[0]: too big"},
    {"params": {"s": 8}, "report": report((2, 64, 8), (2, 8, 8), (4, 2))},
]


def test_sectors_per_request_lines_ideals_and_gaps():
    lines = metric_series(POINTS, "sectors_per_request")
    assert [s.name for s in lines] == ["load", "store", "total"]
    assert lines[0].values == (4, 8, None, 32) and lines[0].ideals == (4, 4, None, 4)
    assert lines[2].values == (4, 6, None, 18) and lines[2].ideals == (4, 4, None, 4)


def test_the_other_metrics():
    assert metric_series(POINTS, "sector_bytes")[0].values == (256, 512, None, 2048)
    assert metric_series(POINTS, "sector_bytes")[0].ideals == (256, 256, None, 256)
    useful = metric_series(POINTS, "useful")[0]  # 256 useful bytes of the sectors' bytes
    assert useful.values == (100, 50, None, 12.5) and useful.ideals == (100, 100, None, 100)
    tile, total = metric_series(POINTS, "wavefronts")
    assert (tile.name, tile.values, tile.ideals) == ("tile", (2, 64, None, 4), (2, 2, None, 2))
    assert total.values == tile.values
    dram = metric_series(POINTS, "dram_bytes")[2]
    assert dram.values == (512, 768, None, 2304) and dram.ideals == (None,) * 4


def test_the_dram_total_is_the_cache_model_when_there_is_one():
    point = {"params": {"s": 1}, "report": {**report((2, 8, 8), (2, 8, 8)), "cache": {
        "dram_read_bytes": 100, "dram_write_bytes": 28}}}
    assert metric_series([point], "dram_bytes")[-1].values == (128,)


def segments(scene, css):
    return [s for s in scene.shapes if isinstance(s, Line) and s.css == css]


def test_a_failed_point_is_a_gap_and_a_cross():
    scene = sweep_chart_scene("P", ["s"], POINTS, "sectors_per_request", theme("light"))
    assert (scene.width, scene.height) == (WIDTH, HEIGHT) and WIDTH / HEIGHT == 16 / 9
    # 3 lines over 4 points with the third failed: 1 segment each (s 1 -> 2), none to s 8
    assert len(segments(scene, "line")) == 3 and len(segments(scene, "ideal")) == 3
    points = [s for s in scene.shapes if isinstance(s, Rect) and s.css == "point"]
    assert len(points) == 9 and {dict(p.data)["s"] for p in points} == {"1", "2", "8"}
    crosses = [s for s in scene.shapes if isinstance(s, Text) and s.css == "failed"]
    assert len(crosses) == 1
    assert "4 points, 1 failed" in scene.title


def test_a_second_param_gives_one_panel_per_value():
    points = [{"params": {"s": s, "t": t}, **{k: v for k, v in p.items() if k != "params"}}
              for t in (32, 64) for s, p in zip((1, 2, 4, 8), POINTS)]
    scene = sweep_chart_scene("P", ["s", "t"], points, "sectors_per_request", theme("light"))
    titles = [s.text for s in scene.shapes if isinstance(s, Text) and s.css == "panel-title"]
    assert titles == ["t = 32", "t = 64"]
    assert len(segments(scene, "line")) == 6


def test_more_than_two_params_are_refused():
    with pytest.raises(ValueError, match="one or two parameters, not 3"):
        sweep_chart_scene("P", ["a", "b", "c"], [], "useful", theme("light"))


EVEN = [{"params": {"s": s}, "report": report((2, 8, 8), (2, 8, 8))} for s in (1, 2)]


@pytest.mark.parametrize("name", sorted(THEMES))
@pytest.mark.parametrize("points", [POINTS, EVEN])  # EVEN: every line ends at one height
def test_every_theme_draws_inside_the_canvas(name, points):
    scene = sweep_chart_scene("P", ["s"], points, "sectors_per_request", theme(name))
    assert scene.background == THEMES[name].background
    for s in scene.shapes:
        xs = (s.x1, s.x2) if isinstance(s, Line) else (s.x,) if isinstance(s, Text) else \
            (s.x, s.x + s.w)
        if isinstance(s, Text) and s.anchor == "start" and not s.rotate:
            xs = (s.x, s.x + text_width(s.text, s.size))
        ys = (s.y1, s.y2) if isinstance(s, Line) else (s.y,) if isinstance(s, Text) else \
            (s.y, s.y + s.h)
        assert all(0 <= x <= WIDTH for x in xs) and all(0 <= y <= HEIGHT for y in ys), s


@pytest.mark.parametrize("value, expected", [(4.32, (5, 1)), (1.17e6, (1.25e6, 2.5e5)),
                                             (108, (125, 25)), (0, (1, 0.25)), (1, (1, 0.2))])
def test_value_axis(value, expected):
    assert nice_top(value) == pytest.approx(expected)


def test_every_metric_is_drawn():
    for metric in METRICS:
        assert sweep_chart_scene("P", ["s"], POINTS, metric, theme("print")).shapes


def test_tick_labels_fall_on_the_lowest_points_and_never_touch():
    """s = 1..32, conflicts lowest at s = 8, 16, 24, 32 (a padding study): every one of those
    is labelled (an every-third rule would label 1, 4, 7, ... and miss them all), with 1;
    no two labels overlap."""
    points = [{"params": {"s": s}, "report": report((2, 8, 8), (2, 8, 8),
                                                     (2 if s % 8 == 0 else 32, 2))}
              for s in range(1, 33)]
    scene = sweep_chart_scene("pad", ["s"], points, "wavefronts", theme("light"))
    labels = [t for t in scene.shapes if isinstance(t, Text) and t.css == "tick-label"
              and t.anchor == "middle"]
    assert {8, 16, 24, 32, 1} <= {int(t.text) for t in labels}
    spans = sorted((t.x - text_width(t.text, t.size) / 2, t.x + text_width(t.text, t.size) / 2)
                   for t in labels)
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
