"""Tools > Sweep…: the tiled transpose's padding swept in the dock, the chart drawn from the
finished points, a click on a point making its value the pattern's (undoable)."""

import pyqtgraph as pg
import pytest

from sectorviz.model import analyze, load_pattern, pattern_from_dict
from sectorviz.paths import examples_dir

PAD_WAVEFRONTS = [1081344, 65536, 98304]  # shared wavefronts at pad 0 (32-way), 1, 2 (2-way)


def run_sweep(qtbot, window, param, values, metric="wavefronts", jobs=1):
    """Run a sweep in the dock; one job: the run's thread does the points itself."""
    window.show_sweep()
    sweep = window.sweep
    sweep.jobs = jobs
    sweep.params.setCurrentText(param)
    sweep.metric.setCurrentText(metric)
    sweep.values.setText(values)
    sweep.button.click()
    qtbot.waitUntil(lambda: not sweep._running, timeout=60000)
    return sweep


def lines(sweep) -> dict[str, list[float]]:
    """The solid lines drawn: name -> y values."""
    return {item.name(): list(item.yData) for item in sweep.plot.getPlotItem().listDataItems()
            if item.name()}


def test_the_chart_holds_each_points_numbers(qtbot, open_window):
    window = open_window("transpose-tiled")
    assert window.sweep_dock.isVisible() is False
    sweep = run_sweep(qtbot, window, "pad", "0:3")
    assert window.sweep_dock.isVisible()
    assert [p["report"]["shared_totals"]["wavefronts"] for p in sweep.points] == PAD_WAVEFRONTS
    doc = load_pattern(examples_dir() / "transpose-tiled.sectorviz.json").to_dict()
    for pad, point in zip(range(3), sweep.points):
        plain = analyze(pattern_from_dict({**doc, "params": {**doc["params"], "pad": pad}},
                                          examples_dir()))
        assert point["report"]["shared_totals"]["wavefronts"] == plain.shared_totals.wavefronts
    assert lines(sweep)["total"] == PAD_WAVEFRONTS
    assert lines(sweep)["load tile[tx][ty]"] == [1048576, 32768, 65536]
    assert sweep.status.text() == "3 of 3 points"


def test_a_click_on_a_point_opens_that_value_as_an_undoable_edit(qtbot, open_window):
    window = open_window("transpose-tiled")
    sweep = run_sweep(qtbot, window, "pad", "0:3")
    total = next(item for item in sweep.plot.getPlotItem().listDataItems()
                 if item.name() == "total")
    spot = total.scatter.points()[2]  # pad = 2
    total.scatter.sigClicked.emit(total.scatter, [spot], None)
    assert dict(window.document.pattern.params)["pad"] == 2
    assert window.document.undo_stack.undoText() == "Set pad = 2"
    window.document.undo_stack.undo()
    assert dict(window.document.pattern.params)["pad"] == 1


def test_a_failed_point_is_a_gap_and_its_reason_in_the_status(qtbot, open_window):
    window = open_window("vector-add")
    sweep = run_sweep(qtbot, window, "threads", "512,1024,2048", "sectors_per_request")
    total = lines(sweep)["total"]
    assert total[:2] == [4.0, 4.0] and total[2] != total[2]  # NaN: no line to 2048
    assert sweep.status.text() == ("3 of 3 points, 1 failed: threads = 2048: launch.block[0]: "
                                   "2048 is outside CUDA's limit [1, 1024]")


def test_bad_values_say_why_and_run_nothing(qtbot, open_window):
    window = open_window("vector-add")
    window.show_sweep()
    window.sweep.values.setText("8:4")
    window.sweep.button.click()
    assert window.sweep.status.text() == "'n=8:4' gives no values"
    assert not window.sweep._running and window.sweep.points == []


def test_the_params_follow_the_pattern(open_window):
    window = open_window("vector-add")
    combo = window.sweep.params
    assert [combo.itemText(i) for i in range(combo.count())] == ["n", "threads"]
    window.open_example(examples_dir() / "transpose-tiled.sectorviz.json")
    assert [combo.itemText(i) for i in range(combo.count())] == ["m", "tile_dim", "pad"]
    assert isinstance(window.sweep.plot, pg.PlotWidget)


def test_each_point_runs_under_the_apps_work_budget(qtbot, open_window, monkeypatch):
    window = open_window("vector-add")
    monkeypatch.setattr("sectorviz.model.budget._default_work", 1000)  # Settings > Work Budget
    # two points on two spawned workers, whose own default budget is the built-in one
    sweep = run_sweep(qtbot, window, "threads", "256,512", "sectors_per_request", jobs=2)
    assert sweep.points[0]["error"].startswith(
        "launch: the launch of 1,048,576 threads asks for 6,144 units of work (lane-executions "
        "and PTX steps), over the budget of 1,000 left")


def test_the_legend_sits_above_the_chart_and_the_axis_labels_the_lowest_point(qtbot,
                                                                               open_window):
    """No legend inside the plot (it covered the curves): a line above it names each line
    with its tag; pad 1 (the fewest wavefronts) is a labelled tick."""
    window = open_window("transpose-tiled")
    sweep = run_sweep(qtbot, window, "pad", "0:3")
    assert sweep.plot.getPlotItem().legend is None
    legend = sweep.legend.text()
    assert "load tile[tx][ty]" in legend and "<b>&#9632; T</b>" in legend
    assert sweep.legend.geometry().bottom() <= sweep.plot.geometry().top()
    major, minor = sweep.plot.getAxis("bottom")._tickLevels
    assert (1, "1") in major and (0, "0") in major and (2, "2") in major  # three fit
    assert minor == []


def test_run_on_is_kept_in_the_settings_and_a_bad_scheduler_is_one_line(qtbot, open_window,
                                                                          monkeypatch):
    window = open_window("vector-add")
    window.show_sweep()
    field = window.findChild(type(window.sweep.values), "sweepScheduler")
    qtbot.keyClicks(field, "tcp://127.0.0.1:9")
    qtbot.keyClick(field, "\r")
    assert window.store.value("sweep_scheduler") == "tcp://127.0.0.1:9"
    monkeypatch.setattr("sectorviz.sweep.cluster.CONNECT_TIMEOUT_S", 1)
    pytest.importorskip("distributed")
    sweep = run_sweep(qtbot, window, "threads", "256,512", "sectors_per_request")
    assert sweep.points[0].keys() == {"params"}  # nothing ran
    assert "cannot connect" in sweep.status.text()
    assert "\n" not in sweep.status.text()
