"""The machine selector above the sheet and File > Import Measurements: the pattern's
"machine" key and the widgets follow each other (undoable edits through the document), the
sheet shows the L2 -> DRAM estimate between the bounds, and an Nsight Compute CSV shows up as
predicted against measured per boundary (a bad file: one line, nothing else changes)."""

from pathlib import Path

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QLabel

from sectorviz.model import pattern_from_dict

FIXTURE = Path(__file__).parent.parent / "measured" / "vector-add.ncu.csv"
CACHE_READS = "L2 -> DRAM reads, cache model"


def widgets(window):
    return (window.findChild(QComboBox, "machinePreset"),
            window.findChild(QDoubleSpinBox, "machineL2"),
            window.findChild(QComboBox, "machineWays"),
            window.findChild(QComboBox, "machineOrder"))


def choose(combo: QComboBox, text: str) -> None:
    """What a user's pick does: the current item changes, then `activated`."""
    combo.setCurrentText(text)
    combo.activated.emit(combo.currentIndex())


def with_machine(pattern, spec):
    doc = pattern.to_dict()
    doc["machine"] = spec
    return pattern_from_dict(doc, pattern.base_dir)


def step5_labels(window) -> list[str]:
    step = next(s for s in window.sheet.sheet.steps if s.number == 5)
    return [r.label for r in step.rows]


def test_the_patterns_machine_shows_in_the_widgets(open_window):
    window = open_window("stride-32B")
    preset, l2, ways, order = widgets(window)
    assert ((preset.currentText(), l2.isEnabled(), ways.isEnabled())
            == ("no cache model", False, False))
    doc = window.document
    doc.set_pattern(with_machine(doc.pattern, {"preset": "A100-80GB", "ways": 16,
                                               "order": "waves"}), "machine")
    assert (preset.currentText(), l2.value(), ways.currentData(), order.currentText()) == (
        "A100-80GB", 40 * 1024, 16, "waves")
    assert l2.isEnabled() and l2.text() == "40960 KiB"
    doc.undo_stack.undo()
    assert (preset.currentText(), order.isEnabled()) == ("no cache model", False)


def test_picking_a_preset_edits_the_pattern_and_the_sheet_shows_the_estimate(
        open_window, wait_analysis):
    window = open_window("stride-32B")
    preset, l2, ways, order = widgets(window)
    doc = window.document
    choose(preset, "H100-SXM")
    assert doc.pattern.to_dict()["machine"] == {"preset": "H100-SXM"}
    assert doc.undo_stack.count() == 1
    wait_analysis(window)
    labels = step5_labels(window)
    assert labels.index("below L1, no reuse") < labels.index(CACHE_READS) < labels.index(
        "below L1, perfect reuse")
    choose(ways, "16-way")
    choose(order, "waves")
    assert doc.pattern.to_dict()["machine"] == {"preset": "H100-SXM", "ways": 16,
                                                "order": "waves"}
    l2.setValue(1024)  # KiB: an override of the preset's size
    assert doc.pattern.machine.l2_bytes == 2**20 and doc.pattern.machine.name == "H100-SXM"
    choose(preset, "custom")
    m = doc.pattern.machine
    assert (m.name, m.l2_bytes, m.ways, m.order, m.sms) == ("custom", 2**20, 16, "waves", 132)
    assert doc.undo_stack.count() == 5
    choose(preset, "no cache model")
    assert "machine" not in doc.pattern.to_dict()
    wait_analysis(window)
    assert CACHE_READS not in step5_labels(window)
    doc.undo_stack.undo()
    assert doc.pattern.machine.name == "custom" and preset.currentText() == "custom"


def test_a_machine_the_model_refuses_changes_nothing_and_says_why(open_window):
    window = open_window("stride-32B")
    preset, l2, ways, _ = widgets(window)
    choose(preset, "custom")
    l2.setValue(0.375)  # 3 lines of 128 B
    before = window.document.pattern
    choose(ways, "4-way")
    error = window.findChild(QLabel, "machineError")
    assert window.document.pattern is before
    assert error.isVisible() and error.text() == (
        "machine.ways: 4 ways must divide the L2's 3 lines")
    assert ways.currentData() == 0  # the widget shows the pattern again
    choose(ways, "fully associative")
    assert not error.isVisible()


def test_imported_measurements_stand_beside_each_boundary(open_window, wait_analysis):
    window = open_window("vector-add-cuda")
    assert window.findChild(QAction, "importMeasurements") is not None
    assert window.import_measurements(FIXTURE)
    last = window.sheet.sheet.steps[-1]
    assert last.title == "Predicted against measured (vector-add.ncu.csv, Nsight Compute)"
    rows = {r.label: r for r in last.rows}
    assert rows["L1 request side, loads"].value == "measured 8 MiB / predicted 8 MiB = 1.000"
    assert rows["L1 request side, loads"].code == "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    assert rows["below L1, perfect reuse"].value == (
        "measured 12.01 MiB / predicted 12 MiB = 1.001")
    choose(widgets(window)[0], "H100-SXM")  # the estimate is measured too, once it is done
    wait_analysis(window)
    rows = {r.label: r for r in window.sheet.sheet.steps[-1].rows}
    assert rows[CACHE_READS].note == "8,390,000 B measured, 8,388,608 B predicted"


def test_a_bad_csv_is_one_line_and_keeps_the_last_import(open_window, tmp_path):
    window = open_window("vector-add-cuda")
    bad = tmp_path / "notes.csv"
    bad.write_text("just,some\ntext,here\n")
    assert not window.import_measurements(bad)
    assert window.message.text() == ("notes.csv: not an Nsight Compute raw CSV: no header row "
                                     "with 'Kernel Name' followed by a units row")
    assert window.sheet.sheet.steps[-1].number == 5  # nothing imported
    assert window.import_measurements(FIXTURE)
    assert not window.import_measurements(tmp_path / "missing.csv")
    assert "\n" not in window.message.text() and "missing.csv" in window.message.text()
    assert window.sheet.sheet.steps[-1].title.startswith("Predicted against measured")


def test_a_grid_other_than_the_measured_one_says_so_in_the_sheet(open_window):
    window = open_window("stride-32B")  # no CUDA kernel: the CSV's only kernel is taken
    window.import_measurements(FIXTURE)
    (row,) = window.sheet.sheet.steps[-1].rows
    assert (row.label, row.value) == ("measured", "not compared")
    assert row.note.startswith("vector-add.ncu.csv: the measured launch of 'vectorAdd' has "
                               "grid (4096, 1, 1), the pattern (")
