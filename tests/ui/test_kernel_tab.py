"""The Kernel tab of the pattern editor, for patterns that name a CUDA kernel."""

from sectorviz.model.analysis import kernel_for


def test_kernel_tab_edits_inline_code_and_selects_lines(open_window, wait_analysis):
    window = open_window("vector-add-cuda")
    editor = window.editor
    assert editor.isTabVisible(editor.kernel_tab)
    source = editor.kernel.source()
    assert "__global__" in source
    wait_analysis(window)
    assert editor.kernel.view.notes  # per-line predictions in the gutter
    kernel = window.document.kernel
    line = kernel.instructions[0].line
    on_line = [k for k, ins in enumerate(kernel.instructions) if ins.line == line]
    window.set_instruction(on_line[0])
    editor.kernel.lineActivated.emit(line)  # clicking a line again: its next access
    assert window.document.selection.instruction == on_line[1 % len(on_line)]

    before = window.document.pattern
    editor.kernel.edited.emit(source.replace("__global__", "__global__ garbage(", 1))
    assert window.document.pattern == before
    assert editor.kernel.message.text()

    editor.kernel.edited.emit(source + "\n// edited\n")
    pattern = window.document.pattern
    assert pattern.kernel["code"].endswith("// edited\n")
    assert len(kernel_for(pattern).instructions) == len(kernel.instructions)
    window.document.undo_stack.undo()
    assert window.document.pattern == before


def test_kernel_tab_hidden_for_access_patterns(open_window):
    window = open_window("stride-32B")
    assert not window.editor.isTabVisible(window.editor.kernel_tab)
