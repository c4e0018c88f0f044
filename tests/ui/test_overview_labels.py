"""Overview row labels keep what tells rows apart (line, op, copy number, "(shared)") and
elide only the statement text; a row never executed says so."""

from types import SimpleNamespace

from sectorviz.ui.overview import NOT_EXECUTED, not_executed, row_parts

LONG = "line 26: sum += As[ty][k] * Bs[k][tx];, ld.shared.f32 (3 of 32) (shared)"


def test_row_parts():
    assert row_parts("7: " + LONG) == ("7: line 26: ", "sum += As[ty][k] * Bs[k][tx];",
                                       ", ld.shared.f32 (3 of 32) (shared)")
    assert row_parts("0: load x[stride*i]") == ("0: ", "load x[stride*i]", "")
    assert row_parts("2: store y (shared)") == ("2: ", "store y", " (shared)")


def test_not_executed_only_of_a_complete_run():
    stats = [SimpleNamespace(requests=r) for r in (4, 0)]
    done = SimpleNamespace(warps_done=None, instructions=stats,
                           shared=[SimpleNamespace(requests=0)])
    assert not_executed(done) == (False, True, True)
    assert not_executed(SimpleNamespace(warps_done=3, instructions=stats, shared=())) == ()
    assert not_executed(None) == ()


def test_labels_keep_op_and_copy(open_window):
    overview = open_window().overview
    overview._names = [f"{k}: {LONG.replace('3 of', f'{k + 1} of')}" for k in range(3)]
    overview._names += ["3: line 32: c[y * m + x] = tile[threadIdx.x][threadIdx.y];, "
                        "st.global.f32", "atypical warps"]
    overview._idle = (False, False, False, True)
    labels = overview._label_rows() and overview.row_labels()
    assert len(set(labels)) == len(labels)
    assert labels[1].endswith(", ld.shared.f32 (2 of 32) (shared)")
    assert labels[1].startswith("1: line 26: ") and "…" in labels[1]
    assert labels[3].endswith(f"st.global.f32 {NOT_EXECUTED}")
    assert NOT_EXECUTED in overview.row_tip(3) and overview.row_tip(3).startswith("3: line 32")
    assert labels[4] == "atypical warps"
