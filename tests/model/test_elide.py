"""An instruction's name elided to one short line: its place (`line N: `) and marks (a
copy's role, its number, its array) kept whole, the expression giving way first, then the
op, each keeping its start; other text elided in its middle."""

from sectorviz.model.elide import NAME_WIDTH, elided

MATMUL_COPY = ("line 22: tl.load(a_tile, mask=ks[None, :] < K - k0, other=0.0), "
               "cp.async.cg.shared.global (global read) (10 of 12)")


def test_a_short_name_is_kept():
    assert elided("line 26: As[ty][k], ld.shared.f32 (3 of 16)") == \
        "line 26: As[ty][k], ld.shared.f32 (3 of 16)"


def test_a_long_expression_gives_way_and_the_op_and_copy_stay_whole():
    """50 columns: 'line 18: ' (9) and ' (13 of 14)' (11) whole, ', LDG.E.128' (11), so
    the expression keeps 19 characters: 18 of its start and '…'."""
    name = "line 18: tl.load(x_ptr + cols, mask=cols < n_cols, other=0.0), LDG.E.128 (13 of 14)"
    assert elided(name) == "line 18: tl.load(x_ptr + co…, LDG.E.128 (13 of 14)"
    assert len(elided(name)) == NAME_WIDTH


def test_a_long_op_keeps_its_start_its_role_and_the_copy_mark():
    """'line 22: ' (9), ' (global read) (10 of 12)' (25) whole: room 16 for expression
    and op; the op takes at most 2/3 of it less ', ' (8: 'cp.asyn' and '…'), the
    expression the other 6 ('tl.lo' and '…')."""
    assert elided(MATMUL_COPY) == "line 22: tl.lo…, cp.asyn… (global read) (10 of 12)"


def test_an_included_files_place_and_an_array_mark_are_kept():
    """Room 50 - 18 - 5 = 27: ', ld.shared.f32' (15) whole, the expression 12."""
    name = "common.h line 12: acc += As[ty][k] * Bs[k][tx] + c[i], ld.shared.f32 [As]"
    assert elided(name) == "common.h line 12: acc += As[t…, ld.shared.f32 [As]"


def test_other_text_is_elided_in_its_middle():
    text = "0: load in[row][tx] " + "with a very long explanation " * 3
    # 49 characters and '…': the first 24 and the last 25
    assert elided(text) == "0: load in[row][tx] with… a very long explanation "
