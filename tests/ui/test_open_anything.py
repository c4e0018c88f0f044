"""Open anything, see something: the window is up before a long analysis ends; a file that
cannot be opened at launch opens the window with its error; a CUDA error names the .cu, its
line and column (and opens nothing); a bare .cu becomes a starting pattern saved beside it."""

import json
import shutil

import pytest
from PySide6.QtWidgets import QApplication, QInputDialog, QLabel, QMessageBox

from sectorviz.command import app as launch
from sectorviz.model import analyze, load_pattern
from sectorviz.paths import examples_dir
from sectorviz.ui import app
from sectorviz.ui.main_window import MainWindow

EX = examples_dir()


@pytest.fixture
def launched(monkeypatch, qtbot):
    """launched(argv, check) -> launch.main's exit code; the event loop runs until the launched
    window is shown, then `check(window)` runs in it and the loop ends."""
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.Discard)
    windows = []

    class Recorded(MainWindow):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            windows.append(self)

    monkeypatch.setattr(app, "MainWindow", Recorded)

    def run(argv, check):
        def exec_(self):
            qtbot.waitUntil(lambda: windows and windows[0].isVisible())
            check(windows[0])
            return 0
        monkeypatch.setattr(QApplication, "exec", exec_)
        code = launch.main(argv)
        for window in windows:
            window.close()
        return code
    return run


def test_the_window_is_up_before_a_long_analysis_ends(launched, tmp_path):
    doc = json.loads((EX / "gather-distinct.sectorviz.json").read_text())
    doc["params"]["n"] = 2**24  # 2^19 warps on the lane path: seconds in its worker process
    path = tmp_path / "big.sectorviz.json"
    path.write_text(json.dumps(doc))
    seen = []

    def check(window):
        seen.append((window.document.analysis_running, len(window.grid_view.item.columns())))

    assert launched([str(path)], check) == 0
    assert seen[0][0] and seen[0][1] > 0  # the grid drawn while the analysis runs


def test_a_file_that_cannot_be_opened_at_launch_opens_the_window(launched, capsys, qtbot):
    seen = []

    def check(window):
        qtbot.waitUntil(lambda: "such.sectorviz.json" in
                        window.findChild(QLabel, "statusMessage").text())
        seen.append(window.findChild(QLabel, "statusMessage").text())

    assert launched(["/no/such.sectorviz.json"], check) == 0
    assert "cannot read such.sectorviz.json: No such file" in seen[0]
    assert "cannot read such.sectorviz.json" in capsys.readouterr().err


BROKEN = 'vector-add.cu line 22, column 5: expected a ";"'


def broken_vector_add(folder):
    """vector-add-cuda with a ';' missing at the end of line 21 of its .cu. nvcc finds it
    missing at the next token, the '}' at line 22, column 5: its first message there,
    `expected a ";"`, is the error (BROKEN), after the pattern that names the .cu."""
    cu = folder / "vector-add.cu"
    cu.write_text((EX / "vector-add.cu").read_text().replace("c[i] = a[i] + b[i];",
                                                             "c[i] = a[i] + b[i]"))
    pattern = folder / "broken.sectorviz.json"
    shutil.copy(EX / "vector-add-cuda.sectorviz.json", pattern)
    return cu, pattern


def test_a_cuda_error_names_the_cu_and_opens_nothing(open_window, qtbot, tmp_path, wait_check):
    """All or nothing (test_open_all_or_nothing): the window stays as it was, the status
    line names the .cu, line and column."""
    _, pattern = broken_vector_add(tmp_path)
    window = open_window("stride-32B")
    assert window.open_path(pattern)  # being compiled on a thread: refused when it answers
    wait_check(window)
    status = window.findChild(QLabel, "statusMessage").text()
    assert status == f"{pattern}: {BROKEN}"
    editor = window.editor
    assert not editor.isTabVisible(editor.kernel_tab) and editor.kernel.message.text() == ""
    assert window.document.pattern.name == "Strided words 32i"  # the document as it was


def test_the_cli_names_the_cu_too(tmp_path, capsys):
    from sectorviz.cli import main
    _, pattern = broken_vector_add(tmp_path)
    assert main(["report", str(pattern)]) == 2
    assert capsys.readouterr().err == f"{pattern}: {BROKEN}\n"


def test_a_bare_cu_becomes_a_pattern_beside_it(open_window, monkeypatch, tmp_path, wait_check):
    cu = tmp_path / "transpose.cu"
    shutil.copy(EX / "transpose.cu", cu)
    offered = []
    monkeypatch.setattr(QInputDialog, "getItem", lambda parent, title, label, items, *a:
                        (offered.append(list(items)), ("transposeTiled", True))[1])
    window = open_window("stride-32B")
    assert window.open_path(cu)
    wait_check(window)
    assert offered == [["transposeNaive", "transposeTiled"]]
    made = tmp_path / "transpose-transposeTiled.sectorviz.json"
    assert window.document.path == made and made.exists()
    assert window.document.pattern.kernel == {"source": "transpose.cu",
                                              "function": "transposeTiled"}
    assert {a.name for a in window.document.pattern.arrays} == {"a", "c"}
    doc = window.document.pattern.to_dict()  # from main(): m = 1024, dim3 grid, block
    assert doc["params"] == {"m": 1024, "TILE_DIM": 32}
    assert doc["launch"] == {"grid": ["m / TILE_DIM", "m / TILE_DIM"],
                             "block": ["TILE_DIM", "TILE_DIM"]}
    assert doc["arrays"]["a"]["length"] == "m * m"  # cudaMalloc(&a, m * m * sizeof(float))
    ours = analyze(window.document.pattern).totals
    assert ours == analyze(load_pattern(EX / "transpose-tiled-cuda.sectorviz.json")).totals


def test_a_cu_without_a_launch_gets_the_default_pattern(tmp_path):
    """No host code: a 1-D launch of n threads over arrays of n elements, n the kernel's
    own count parameter."""
    from sectorviz.host.kernels import global_functions
    from sectorviz.host.starter import write_starter
    cu = tmp_path / "k.cu"
    cu.write_text("__global__ void scale(float *x, int n)\n"
                  "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }\n")
    (kernel,) = global_functions(cu)
    doc = json.loads(write_starter(cu, kernel).read_text())
    assert doc["launch"] == {"grid": ["(n + threads - 1) / threads"], "block": ["threads"]}
    assert doc["params"] == {"n": 1 << 20, "threads": 256}
    assert doc["arrays"] == {"x": {"length": "n"}}
    assert analyze(load_pattern(tmp_path / "k-scale.sectorviz.json")).totals.sectors == \
        (1 << 20) * 4 * 2 // 32  # a load and a store of 4 MiB, coalesced


def test_an_error_at_a_pattern_key_still_names_the_pattern(tmp_path, capsys):
    """Only places in the .cu name the .cu: a launch of 0 blocks is the pattern file's."""
    from sectorviz.cli import main
    _cu, pattern = broken_vector_add(tmp_path)
    (tmp_path / "vector-add.cu").write_text((EX / "vector-add.cu").read_text())
    doc = json.loads(pattern.read_text())
    doc["params"]["n"] = 0
    pattern.write_text(json.dumps(doc))
    assert main(["report", str(pattern)]) == 2
    assert capsys.readouterr().err.startswith(f"{pattern}: launch.grid[0]")
