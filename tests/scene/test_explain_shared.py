"""Explanations of shared-memory requests: bank conflicts, padding, broadcasts and wide
accesses, each from a small pattern file (a `space: shared` array) or a small CUDA kernel with
a __shared__ tile; the cause and the numbers are asserted, and the numbers against the
lane-by-lane bank reference of test_banks."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import reference

from sectorviz.cli import main
from sectorviz.export.formats import diagram_svg
from sectorviz.gather.explain import explanations, shared_explanations
from sectorviz.gather.sheet import accounting_sheet
from sectorviz.model import load_pattern, pattern_from_dict, warp_detail
from sectorviz.model.analysis import kernel_for
from sectorviz.model.one_warp import shared_warp_detail
from sectorviz.paths import examples_dir
from sectorviz.scene.diagrams import DiagramSpec


def shared_pattern(at: dict, dtype: str = "float32", shape=None, length: int = 2048,
                   ld: str | None = None, guard: str | None = None, values: str | None = None,
                   op: str = "load"):
    """One warp: a global read, then one access to shared array s (`at`: index or at)."""
    s = {"space": "shared", "dtype": dtype}
    s |= {"shape": shape} if shape else {"length": length}
    if ld:
        s["ld"] = ld
    arrays = {"g": {"dtype": "float32", "length": 32}, "s": s}
    if values is not None:
        arrays["ix"] = {"dtype": "int32", "length": 32, "values": {"kind": "expr",
                                                                   "expr": values}}
    access = {"name": "shared", "op": op, "array": "s"} | at
    if guard:
        access["guard"] = guard
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "case", "launch": {"grid": [1], "block": [32]},
        "arrays": arrays, "accesses": [{"name": "load g", "op": "load", "array": "g",
                                        "index": "threadIdx.x"}, access]}, None)


def why(pattern, warp: int = 0) -> str:
    return shared_explanations(pattern, warp)[0]


def cuda(decl: str, read: str):
    return pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "k", "launch": {"grid": [1], "block": [32]},
        "arrays": {"a": {"dtype": "float32", "length": 32}},
        "kernel": {"function": "k", "code": f"""__global__ void k(float* a) {{
            __shared__ {decl};
            a[threadIdx.x] = {read};
        }}"""}}, None)


def test_column_of_an_unpadded_tile_is_a_32_way_conflict_that_padding_removes():
    words = why(shared_pattern({"at": ["threadIdx.x", "0"]}, shape=["32", "32"]))
    assert words == (
        "Lanes 0-31 read column 0 of a 32x32 float32 tile: the 32 words are 128 B apart, all "
        "in bank 0, so the request takes 32 wavefronts where 1 would do (32-way conflict). "
        "Padding each row by one element (stride 33 words) spreads them one per bank over all "
        "32 banks.")


def test_padded_tile_column_is_conflict_free():
    words = why(shared_pattern({"at": ["threadIdx.x", "3"]}, shape=["32", "32"], ld="33"))
    assert words == (
        "Lanes 0-31 read column 3 of a 32x32 float32 tile; each row is padded to 33 elements, "
        "so the column walk hits 32 different banks: 1 wavefront, conflict-free.")


@pytest.mark.parametrize("index, cause, cost", [
    ("threadIdx.x", "Lanes 0-31 read consecutive 4-byte elements, one per bank over all 32 "
                    "banks", ": 1 wavefront, conflict-free."),
    ("2 * threadIdx.x", "Lanes 0-31 are 8 B apart (2 words), in 16 banks, 2 words each",
     ", so the request takes 2 wavefronts where 1 would do (2-way conflict). A stride of 3 "
     "words (one element more) would spread them one per bank over all 32 banks."),
    ("4 * threadIdx.x", "Lanes 0-31 are 16 B apart (4 words), in 8 banks, 4 words each",
     ", so the request takes 4 wavefronts where 1 would do (4-way conflict). A stride of 5 "
     "words (one element more) would spread them one per bank over all 32 banks."),
    ("3 * threadIdx.x", "Lanes 0-31 are 12 B apart (3 words), one per bank over all 32 banks",
     ": 1 wavefront, conflict-free."),
])
def test_strides(index, cause, cost):
    assert why(shared_pattern({"index": index})) == cause + cost


def test_broadcast_and_a_store_to_one_word():
    assert why(shared_pattern({"index": "37"})) == (
        "Every active lane reads the same word (bank 5): 1 wavefront (a broadcast).")
    assert why(shared_pattern({"index": "37"}, op="store")) == (
        "Every active lane writes the same word (bank 5): 1 wavefront (a broadcast; one store "
        "wins).")
    assert why(shared_pattern({"index": "threadIdx.x / 2"})) == (
        "Lanes share words: 16 distinct words for 32 lanes (each served once, a broadcast), "
        "one per bank in 16 banks: 1 wavefront, conflict-free.")


def test_wide_accesses_take_a_wavefront_per_phase():
    assert why(shared_pattern({"index": "threadIdx.x"}, dtype="float2")) == (
        "Lanes 0-31 read consecutive 8-byte elements; 8-byte accesses are served in 2 phases "
        "of 16 lanes, and in each the words fall one per bank over all 32 banks: 2 wavefronts, "
        "conflict-free, the ideal for 8-byte accesses.")
    assert why(shared_pattern({"index": "threadIdx.x"}, dtype="float4")) == (
        "Lanes 0-31 read consecutive 16-byte elements; 16-byte accesses are served in 4 phases "
        "of 8 lanes, and in each the words fall one per bank over all 32 banks: 4 wavefronts, "
        "conflict-free, the ideal for 16-byte accesses.")
    assert why(shared_pattern({"index": "2 * threadIdx.x"}, dtype="float2")) == (
        "Lanes 0-31 are 16 B apart (4 words); 8-byte accesses are served in 2 phases of 16 "
        "lanes, and in each the words fall in 16 banks, 2 words each, so the request takes 4 "
        "wavefronts where 2 would do (2-way conflict). A stride of 6 words (one element more) "
        "would spread them one per bank over all 32 banks.")


def test_inactive_lanes_and_a_gather():
    assert why(shared_pattern({"index": "2 * threadIdx.x"}, guard="threadIdx.x < 16")) == (
        "Lanes 0-15 are 8 B apart (2 words), one per bank in 16 banks: 1 wavefront, "
        "conflict-free. Lanes 16-31 are inactive.")
    assert why(shared_pattern({"index": "ix[threadIdx.x]"}, values="(i % 4) * 32 + i / 4")) == (
        "The index array sends the 32 lanes to 32 distinct words, in 8 banks, 4 words each, so "
        "the request takes 4 wavefronts where 1 would do (4-way conflict).")


def test_loop_executions_that_differ_say_by_how_much():
    p = shared_pattern({"index": "s_ * threadIdx.x",
                        "loops": [{"var": "s_", "start": 1, "stop": 5}]})
    assert why(p).endswith("Over its 4 executions in this warp it takes 1 to 4 wavefronts.")
    assert shared_explanations(p, 0, 0, 1)[0].startswith("Lanes 0-31 are 8 B apart (2 words)")


def test_cuda_tiles_by_stride_and_padding():
    assert why(cuda("float s[32][32]", "s[threadIdx.x][0]")) == (
        "Lanes 0-31 are 128 B apart (32 words), all in bank 0, so the request takes 32 "
        "wavefronts where 1 would do (32-way conflict). A stride of 33 words (one element more) "
        "would spread them one per bank over all 32 banks.")
    assert why(cuda("float s[32][33]", "s[threadIdx.x][0]")) == (
        "Lanes 0-31 are 132 B apart (33 words), one per bank over all 32 banks: 1 wavefront, "
        "conflict-free.")
    assert why(cuda("double s[32][16]", "(float)s[threadIdx.x][0]")).endswith(
        "so the request takes 32 wavefronts where 2 would do (16-way conflict). A stride of "
        "34 words (one element more) would spread them one per bank over all 32 banks.")


@settings(max_examples=60, deadline=None)
@given(stride=st.integers(0, 40), offset=st.integers(0, 40), dtype=st.sampled_from(
    ["uint8", "float16", "float32", "float2", "float4"]), active=st.integers(1, 32))
def test_the_numbers_in_the_words_are_the_reference_counts(stride, offset, dtype, active):
    """Lanes at offset + stride * lane elements, the first `active` of them: the sentence
    names the wavefronts, ideal and n-way that test_banks' lane-by-lane reference counts."""
    p = shared_pattern({"index": f"{offset} + {stride} * threadIdx.x"}, dtype=dtype,
                       length=offset + 40 * 32 + 1, guard=f"threadIdx.x < {active}")
    width = kernel_for(p).shared_instructions[0].width
    first = shared_warp_detail(p, 0).executions[0][0]
    address = np.broadcast_to(first.address, (1, 32))[0].tolist()
    waves, ideal, ways = reference(address, width, [lane < active for lane in range(32)])
    words = why(p)
    assert f"{waves} wavefront{'s' * (waves != 1)}" in words
    if waves > ideal:
        assert f"where {ideal} would do ({ways}-way conflict)" in words
    else:
        assert ("conflict-free" in words or "broadcast" in words
                or words.startswith("One lane is active"))
    if active < 32:
        assert words.endswith(f"{active}-31 are inactive." if active < 31 else "31 is inactive.")


# ---------------------------------------------------------------- where the words appear

TILE = str(examples_dir() / "shared-tile-column.sectorviz.json")


def example(name: str):
    return load_pattern(examples_dir() / f"{name}.sectorviz.json")
COLUMN = ("Lanes 0-31 read column 0 of a 32x32 float32 tile: the 32 words are 128 B apart, all "
          "in bank 0, so the request takes 32 wavefronts where 1 would do (32-way conflict).")


def test_report_json_explain_and_sheet(capsys):
    assert main(["report", TILE, "--json", "--quiet", "--warp", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    warp1 = COLUMN.replace("column 0", "column 1").replace("bank 0", "bank 1")  # ty = 1
    assert [s["explanation"].startswith(warp1) for s in doc["shared"]] == [
        False, True, False, False]
    assert main(["report", TILE, "--explain", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"load tile[tx][ty] (shared) {COLUMN}" in " ".join(out.split())  # lines wrapped
    rows = {r.label: r for s in accounting_sheet(example("shared-tile-column"), None, 0, 3).steps
            for r in s.rows}
    row = rows["load tile[tx][ty], this warp"]
    assert row.value == "32 wavefronts, ideal 1, 32-way" and row.note.startswith(COLUMN)
    assert row.instruction == 2  # the app's index: the one global instruction, then shared 1


def test_export_banks_and_grid_with_explain(tmp_path):
    out = tmp_path / "b.svg"
    assert main(["export", TILE, "-o", str(out), "--kind", "banks", "--instruction", "1",
                 "--explain"]) == 0
    svg = out.read_text()
    assert svg == diagram_svg(example("shared-tile-column"),
                              DiagramSpec(kind="banks", instruction=1, explain=True))
    assert 'class="explanation"' in svg and "(32-way conflict)" in svg
    plain = diagram_svg(example("shared-tile-column"), DiagramSpec(kind="banks", instruction=1))
    assert 'class="explanation"' not in plain
    grid = diagram_svg(example("transpose-naive"), DiagramSpec(instruction=1, explain=True))
    assert "Lanes walk down a column, 4,096 B apart" in grid
    assert main(["export", TILE, "-o", str(out), "--kind", "overview", "--explain"]) == 2


def test_a_gather_after_a_shared_access_is_found_by_its_global_index():
    """Accesses: load g (global 0), store s (shared 0), load g[ix[i]] (global 1)."""
    p = pattern_from_dict({
        "format": "sectorviz.pattern/1", "name": "case", "launch": {"grid": [1], "block": [32]},
        "arrays": {"g": {"dtype": "float32", "length": 1024},
                   "ix": {"dtype": "int32", "length": 32,
                          "values": {"kind": "expr", "expr": "i * 8"}},
                   "s": {"space": "shared", "dtype": "float32", "length": 32}},
        "accesses": [{"name": "load g", "op": "load", "array": "g", "index": "threadIdx.x"},
                     {"name": "store s", "op": "store", "array": "s", "index": "threadIdx.x"},
                     {"name": "gather", "op": "load", "array": "g",
                      "index": "ix[threadIdx.x]"}]}, None)
    assert explanations(p, warp_detail(p, 0))[1].startswith(
        "The index array sends the 32 lanes to 32 sectors (data-dependent)")


def test_too_little_padding_one_lane_a_wide_broadcast_and_a_permutation():
    assert why(shared_pattern({"at": ["threadIdx.x", "0"]}, shape=["32", "32"], ld="34")) == (
        "Lanes 0-31 read column 0 of a 32x32 float32 tile: the 32 words are 136 B apart, in 16 "
        "banks, 2 words each, so the request takes 2 wavefronts where 1 would do (2-way "
        "conflict). Padding each row by one more element (stride 35 words) spreads them one "
        "per bank over all 32 banks.")
    assert why(shared_pattern({"index": "threadIdx.x"}, guard="threadIdx.x == 3")) == (
        "One lane is active: one word (bank 3), 1 wavefront. Lanes 0-2, 4-31 are inactive.")
    assert why(shared_pattern({"index": "5"}, dtype="float2")) == (
        "Every active lane reads the same 8-byte element (banks 10, 11): 2 wavefronts (a "
        "broadcast in each of its 2 phases).")
    assert why(shared_pattern({"index": "(threadIdx.x * 7) % 32"})) == (
        "Lanes 0-31 read consecutive 4-byte elements in another lane order, one per bank over "
        "all 32 banks: 1 wavefront, conflict-free.")


def test_no_two_active_lanes_adjacent():
    """reduce0's first step: the even lanes read words 8 B apart (no two active lanes are
    neighbours, so the spacing is between consecutive active lanes)."""
    assert why(shared_pattern({"index": "threadIdx.x"}, guard="threadIdx.x % 2 == 0")) == (
        "Consecutive active lanes are 8 B apart, one per bank in 16 banks: 1 wavefront, "
        "conflict-free. Lanes 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31 are "
        "inactive.")


def test_a_row_walk_of_a_padded_tile_asks_for_one_element_more_once():
    """Lanes 16 B apart along a row of a tile whose rows are padded: the padding of the rows
    is not the cure here, so the advice is a stride, said once ("one element more")."""
    p = shared_pattern({"at": ["0", "4 * threadIdx.x"]}, shape=["32", "128"], ld="130")
    assert why(p) == (
        "Lanes 0-31 are 16 B apart (4 words), in 8 banks, 4 words each, so the request takes "
        "4 wavefronts where 1 would do (4-way conflict). A stride of 5 words (one element more) "
        "would spread them one per bank over all 32 banks.")
