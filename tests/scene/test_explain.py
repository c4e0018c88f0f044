"""Explanations in words: the cause and the numbers of the canonical cases of
/work/shared/domain-notes.md, each from a small pattern (32 lanes, one warp)."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sectorviz.cli import main
from sectorviz.gather.explain import explanations
from sectorviz.model import pattern_from_dict, warp_detail
from sectorviz.scene.explain import percent


def one_warp(index: str, dtype: str = "float32", length: int = 2048, guard: str | None = None,
             block: int = 32, values: str | None = None, name: str = "load x") -> list[str]:
    arrays = {"x": {"dtype": dtype, "length": length}}
    if values is not None:
        arrays["ix"] = {"dtype": "int32", "length": 32,
                        "values": {"kind": "expr", "expr": values}}
    doc = {"format": "sectorviz.pattern/1", "name": "case",
           "launch": {"grid": [1], "block": [block]}, "arrays": arrays,
           "accesses": [{"name": name, "op": "load", "array": "x", "index": index}]}
    if guard:
        doc["guard"] = guard
    p = pattern_from_dict(doc, None)
    return explanations(p, warp_detail(p, 0))[0]


@pytest.mark.parametrize("index, kw, words", [
    ("threadIdx.x", {},
     "Lanes access consecutive 4-byte elements, aligned: 4 sectors for 128 B, the ideal."),
    ("threadIdx.x + 1", {},
     "Lanes access consecutive 4-byte elements, but the first starts 4 B into a sector, so the "
     "128 bytes span 5 sectors instead of 4."),
    ("2 * threadIdx.x", {},
     "Lanes are 8 B apart (a stride of 2 4-byte elements), so 8 sectors hold 128 useful bytes "
     "(50%); consecutive elements would need 4."),
    ("8 * threadIdx.x", {},
     "Lanes are 32 B apart, so every lane touches its own sector: 32 sectors for 128 useful "
     "bytes (12.5%). Consecutive lanes accessing consecutive elements would need 4."),
    ("31 - threadIdx.x", {},
     "Lanes access consecutive 4-byte elements, aligned: 4 sectors for 128 B, the ideal."),
    ("(threadIdx.x * 7) % 32", {},
     "Lanes access consecutive 4-byte elements in another lane order (the order does not "
     "matter), aligned: 4 sectors for 128 B, the ideal."),
    ("5", {},
     "Every active lane reads the same 4-byte word: 1 sector (broadcast), 4 of its 32 bytes "
     "used."),
    ("threadIdx.x", {"guard": "threadIdx.x < 16"},
     "Lanes access consecutive 4-byte elements, aligned: 2 sectors for 64 B, the ideal. "
     "Lanes 16-31 are inactive."),
    ("threadIdx.x", {"block": 16},
     "Lanes access consecutive 4-byte elements, aligned: 2 sectors for 64 B, the ideal. "
     "Lanes 16-31 have no thread (a partial warp)."),
    ("threadIdx.x", {"dtype": "float64"},
     "Lanes access consecutive 8-byte elements (a vector access), aligned: 8 sectors for 256 B, "
     "the ideal."),
    ("threadIdx.x", {"dtype": {"bytes": 16}},
     "Lanes access consecutive 16-byte elements (a vector access), aligned: 16 sectors for "
     "512 B, the ideal."),
    ("threadIdx.x / 2", {},
     "Lanes share words: 16 distinct addresses for 32 lanes, 2 sectors for 64 useful bytes "
     "(100%), ideal 2."),
    ("ix[threadIdx.x]", {"values": "i * 8"},
     "The index array sends the 32 lanes to 32 sectors (data-dependent): 32 sectors for 128 "
     "useful bytes (12.5%), ideal 4."),
    ("threadIdx.x * threadIdx.x", {},
     "Adjacent lanes are 4 to 244 B apart: 30 sectors for 128 useful bytes (13.3%), "
     "ideal 4."),
])
def test_canonical_cases(index, kw, words):
    assert one_warp(index, **kw) == words


def test_twelve_byte_elements_cross_sectors():
    assert one_warp("threadIdx.x", dtype={"bytes": 12}) == (
        "Lanes access consecutive 12-byte elements, aligned; 8 of 32 elements cross a sector "
        "boundary, yet together they fill whole sectors: 12 sectors for 384 B, the ideal.")
    assert one_warp("threadIdx.x + 1", dtype={"bytes": 12}) == (
        "Lanes access consecutive 12-byte elements, but 8 of 32 cross a sector boundary: the "
        "384 bytes span 13 sectors instead of 12.")


def test_one_lane_and_percent():
    assert one_warp("threadIdx.x", guard="threadIdx.x == 3") == (
        "One lane is active: 1 sector for 4 useful bytes. Lanes 0-2, 4-31 are inactive.")
    assert [percent(x) for x in (1.0, 0.5, 0.125, 2 / 9)] == ["100%", "50%", "12.5%", "22.2%"]


def test_report_json_and_sheet_carry_the_explanation(capsys):
    naive = str(Path(__file__).parents[2] / "resources/examples/transpose-naive.sectorviz.json")
    assert main(["report", naive, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [i["explanation"] for i in doc["instructions"]] == [
        "Lanes access consecutive 4-byte elements, aligned: 4 sectors for 128 B, the ideal.",
        "Lanes walk down a column, 4,096 B apart, so every lane touches its own sector: 32 "
        "sectors for 128 useful bytes (12.5%). Consecutive lanes accessing consecutive elements "
        "would need 4."]
    assert main(["report", naive]) == 0
    assert "Lanes walk down a column, 4,096 B apart" in capsys.readouterr().out


def test_report_explain_ends_with_each_instructions_why_in_the_chosen_warp(capsys):
    gather = str(Path(__file__).parents[2] / "resources/examples/gather-distinct.sectorviz.json")
    assert main(["report", gather, "--explain", "--warp", "3"]) == 0
    out = capsys.readouterr().out
    assert out.endswith(
        "Why (warp 3)\n"
        "  load index[i]\n"
        "      Lanes access consecutive 4-byte elements, aligned: 4 sectors for 128 B, the ideal.\n"
        "  load data[index[i]]\n"
        "      The index array sends the 32 lanes to 32 sectors (data-dependent): 32 sectors for "
        "128 useful\n"
        "      bytes (12.5%), ideal 4.\n"  # wrapped at 100 columns under its indentation
        "  store out[i]\n"
        "      Lanes access consecutive 4-byte elements, aligned: 4 sectors for 128 B, "
        "the ideal.\n")
    assert main(["report", gather]) == 0
    assert "Why (warp" not in capsys.readouterr().out


@settings(max_examples=60, deadline=None)
@given(stride=st.integers(0, 40), offset=st.integers(0, 40), width=st.sampled_from([4, 8, 12, 16]),
       active=st.integers(1, 32))
def test_the_numbers_in_the_words_are_the_brute_force_counts(stride, offset, width, active):
    """Lanes at offset + stride * lane elements, the first `active` of them: the sentence names
    the sectors and useful bytes counted directly from the byte ranges, and the cause."""
    words = one_warp(f"{offset} + {stride} * threadIdx.x", dtype={"bytes": width},
                     length=offset + 40 * 32 + 1, guard=f"threadIdx.x < {active}")
    spans = [(width * (offset + stride * lane), width * (offset + stride * lane + 1))
             for lane in range(active)]
    sectors = {s for lo, hi in spans for s in range(lo // 32, (hi - 1) // 32 + 1)}
    used = len({b for lo, hi in spans for b in range(lo, hi)})
    n = len(sectors)
    assert f"{n} sector{'s' * (n != 1)}" in words
    assert f"{used:,} " in words or n == 1
    if active == 1:
        assert words.startswith("One lane is active")
    elif stride == 0:
        assert words.startswith("Every active lane reads the same")
    elif stride == 1:
        assert words.startswith("Lanes access consecutive")
    else:
        assert words.startswith(("Lanes are", "Lanes walk"))
    if active < 32:
        assert words.endswith(f"{active}-31 are inactive." if active < 31 else "31 is inactive.")


def test_runs_of_a_two_dimensional_block():
    """Lanes 0-15 on one row, 16-31 on the next (a 16-wide block): two 64-byte runs."""
    assert one_warp("(threadIdx.x / 16) * 64 + threadIdx.x % 16") == (
        "Lanes access 2 runs of consecutive 4-byte elements: 4 sectors for 128 useful bytes "
        "(100%), the ideal.")
    assert one_warp("(threadIdx.x / 16) * 64 + threadIdx.x % 16 + 1") == (
        "Lanes access 2 runs of consecutive 4-byte elements: 6 sectors for 128 useful bytes "
        "(66.7%), ideal 4.")


def test_no_two_active_lanes_adjacent():
    """Even lanes only, 4 B each at their thread's element: 8 B between consecutive active
    lanes, 4 sectors for 64 useful bytes."""
    words = one_warp("threadIdx.x", guard="threadIdx.x % 2 == 0")
    assert words.startswith("Consecutive active lanes are 8 B apart: 4 sectors for 64 useful "
                            "bytes (50%), ideal 2.")
