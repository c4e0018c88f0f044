"""The Kernel tab's pane of source lines and their memory instructions (ui.instruction_pane):
each line folds out to its instructions with the analysis's sectors per request, and clicking
one selects it; with the compiled engine the instructions are the SASS ones (or the PTX ones
where the PTX is counted), and the fold-out is open from the start."""

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QToolButton, QTreeWidget

from sectorviz.engine.compiled.compiler import find_compiler
from sectorviz.engine.readings import ENGINE_VAR


def _tree(window) -> list[tuple[str, list[tuple[str, ...]]]]:
    pane = window.findChild(QTreeWidget, "kernelInstructions")
    assert pane is not None and pane.isVisible()
    return [(pane.topLevelItem(i).text(0),
             [tuple(pane.topLevelItem(i).child(j).text(c) for c in range(3))
              for j in range(pane.topLevelItem(i).childCount())])
            for i in range(pane.topLevelItemCount())]


def test_each_line_folds_out_to_its_instructions_as_written(open_window, qtbot):
    """The naive transpose, as written: its line loads `a` along a row (32 lanes x 4 B: 4
    sectors per request) and stores `c` down a column (32), as the margin says; the debug
    compile's PTX ops name them (generic addresses: ld.f32, st.f32)."""
    window = open_window("transpose-naive-cuda")
    window.fit_to_screen(QRect(0, 0, 1778, 1089))
    qtbot.wait(50)  # the docks take their widths in the next layout pass
    toggle = window.findChild(QToolButton, "kernelInstructionsToggle")
    assert toggle.isVisible() and not toggle.isChecked()  # as written: closed at first
    qtbot.mouseClick(toggle, Qt.MouseButton.LeftButton)
    kernel = window.document.kernel
    analysis = window.document.analysis
    tree = _tree(window)
    lines = {ins.line for ins in kernel.instructions}
    assert len(tree) == len(lines)
    (label, rows), = [t for t in tree if t[0].startswith(f"{kernel.instructions[0].line}: ")]
    assert [r[0] for r in rows] == ["ld.f32  a", "st.f32  c"]
    assert [r[1] for r in rows] == ["4 sectors", "32 sectors"]
    assert [r[2] for r in rows] == [f"{s.requests:,}" for s in analysis.instructions]
    pane = window.findChild(QTreeWidget, "kernelInstructions")
    store = pane.topLevelItem(0).child(1)
    qtbot.mouseClick(pane.viewport(), Qt.MouseButton.LeftButton,
                     pos=pane.visualItemRect(store).center())
    assert window.document.selection.instruction == 1
    window.set_instruction(0)
    assert pane.currentItem() is pane.topLevelItem(0).child(0)


@pytest.mark.skipif(find_compiler() is None, reason="no CUDA compiler here")
def test_the_compiled_kernel_lists_its_ptx_instructions(open_window, monkeypatch, tmp_path):
    """vector add compiled: line `c[i] = a[i] + b[i]` (a and b const __restrict__) has two
    ld.global.nc.f32 and one st.global.f32, each 4 sectors per request (32 lanes x 4 B,
    aligned)."""
    monkeypatch.setenv(ENGINE_VAR, "compiled")
    monkeypatch.setenv("SECTORVIZ_CACHE_DIR", str(tmp_path))
    window = open_window("vector-add-cuda")
    assert window.findChild(QToolButton, "kernelInstructionsToggle").isChecked()  # open
    kernel = window.document.kernel
    assert all(ins.ptx for ins in kernel.instructions)
    (label, rows), = _tree(window)
    assert label.startswith(f"{kernel.instructions[0].line}: ")
    if kernel.instructions[0].sass:  # counted in SASS: the opcode and its width
        assert sorted(r[0] for r in rows) == ["LDG.E, 32-bit  a", "LDG.E, 32-bit  b",
                                              "STG.E, 32-bit  c"]
    else:
        assert sorted(r[0] for r in rows) == ["ld.global.nc.f32  a", "ld.global.nc.f32  b",
                                              "st.global.f32  c"]
    assert {r[1] for r in rows} == {"4 sectors"}
