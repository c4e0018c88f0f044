"""validation/source_page.py: Nsight Compute's source page (our own CSVs in its documented
format) read per SASS instruction, and paired by offset with hand-written `report --json`
instructions counted in SASS and in PTX."""

import csv
import sys
from pathlib import Path

import pytest

KIT = Path(__file__).resolve().parents[2] / "validation"
sys.path.insert(0, str(KIT))
from source_page import (  # noqa: E402
    SourcePageError,
    instruction_lines,
    read_source_page,
    sass_opcode,
)

PAGE = Path(__file__).parents[1] / "measured" / "vector-add.source.csv"
HEADER = ["Address", "Source", "Instructions Executed", "Instructions Executed",
          "L2 Theoretical Sectors Global", "L1 Wavefronts Shared", "L2 Theoretical Sectors Local"]


def write_page(path, kernels, header=HEADER):
    """kernels: (Kernel Name, [(offset, SASS text, counts after Source...)]) -> a source page
    CSV as `ncu --csv --page source --print-source sass` writes it, based at 0x7f0000000000
    plus 0x1000 per kernel (a kernel's first row is its offset 0, as on a real page)."""
    with path.open("w", newline="") as f:
        out = csv.writer(f, quoting=csv.QUOTE_ALL)
        for k, (name, rows) in enumerate(kernels):
            out.writerow(["Kernel Name", name, ""])
            out.writerow(header)
            for offset, text, *counts in rows:
                out.writerow([f"{0x7f0000000000 + 0x1000 * k + offset:#x}", f"      {text} ",
                              *counts])
    return path


def ins(space_figure, offset, requests, amount, sass=None, source="a[i]", ptx="ld.global.f32"):
    """One `report --json` instruction of line 21 (`space_figure`: "sectors" or
    "wavefronts")."""
    return {"name": f"line 21: {source}", "op": "load", "array": source[0], "line": 21,
            "column": 9, "source": source, "ptx": ptx, "file": None, "sass": sass,
            "sass_offset": offset, "requests": requests, space_figure: amount}


def test_sass_opcode_drops_predicate_and_operands():
    assert sass_opcode("@!P0 LDG.E.CONSTANT R3, desc[UR4][R2.64] ") == "LDG.E.CONSTANT"
    assert sass_opcode("  EXIT ;") == "EXIT"


def test_the_vector_add_page_reads_each_sass_instruction_at_its_offset():
    rows = read_source_page(PAGE, "vectorAdd", {"global sectors"})
    assert len(rows) == 21 and [r.offset for r in rows[:2]] == [0x0, 0x10]
    # 0x0070 is `@P0 EXIT`: the predicate is not the opcode
    assert rows[7].opcode == "EXIT"
    load = rows[13]
    # 2^20 threads = 32,768 warps, each executing the load once: 4 sectors per warp
    assert (load.offset, load.opcode) == (0xd0, "LDG.E.CONSTANT")
    assert load.counts == {"executed": 32768, "global sectors": 131072, "shared wavefronts": 0,
                           "local sectors": 0}


def test_a_needed_column_missing_is_one_line_naming_it(tmp_path):
    page = write_page(tmp_path / "p.csv", [("vectorAdd(int)", [(0, "EXIT", 1, 1, 0)])],
                      header=["Address", "Source", "Instructions Executed",
                              "Instructions Executed", "L2 Theoretical Sectors Global"])
    assert read_source_page(page, "vectorAdd", {"global sectors"})[0].counts == {
        "executed": 1, "global sectors": 0}
    with pytest.raises(SourcePageError, match=r"^p\.csv: no column 'L1 Wavefronts Shared' \(nor "
                       r"memory_l1_wavefronts_shared, memory_l1_sectors_shared\) in the source "
                       r"page's header; it needs the SourceCounters section"):
        read_source_page(page, "vectorAdd", {"shared wavefronts"})


def test_the_named_kernel_is_chosen_and_metric_names_and_commas_read(tmp_path):
    header = ["Address", "Source", "Instructions Executed", "memory_l2_theoretical_sectors_global"]
    page = write_page(tmp_path / "p.csv", [
        ("void other(int)", [(0, "LDG.E R2, desc[UR4][R2.64]", 1, 4)]),
        ("void matmulTiled<16, float>(const float *, int)",
         [(0, "NOP", 1, 0), (0x20, "LDG.E R2, desc[UR4][R2.64]", "1,024", "4,096")])],
        header=header)
    rows = read_source_page(page, "matmulTiled", {"global sectors"})
    # offsets from the chosen kernel's own first address (0x7f0000001000)
    assert [(r.offset, r.counts["global sectors"]) for r in rows] == [(0, 0), (0x20, 4096)]
    assert rows[1].counts["executed"] == 1024
    with pytest.raises(SourcePageError, match=r"no kernel 'vectorAdd' in the page \(it has "
                                              r"'void other\(int\)', "):
        read_source_page(page, "vectorAdd", set())


def test_each_sass_instruction_against_its_measurement_and_its_ptx_twin(tmp_path):
    # vector add's two loads, one SASS instruction per PTX one; the page measures 135,168
    # sectors for b[i] (4,096 more than the 131,072 predicted: ratio 1.03125), a[i] as predicted
    page = write_page(tmp_path / "p.csv", [("vectorAdd(int)", [
        (0, "LDC R1, c[0x0][0x28]", 32768, 32768, 0, 0, 0),
        (0xd0, "LDG.E.CONSTANT R3, desc[UR4][R2.64]", 32768, 32768, "131,072", 0, 0),
        (0xf0, "LDG.E.CONSTANT R4, desc[UR4][R4.64]", 32768, 32768, "135,168", 0, 0)])])
    sass = {"level": "sass", "instructions": [
        ins("sectors", 0xf0, 32768, 131072, "LDG.E", "b[i]"),
        ins("sectors", 0xd0, 32768, 131072, "LDG.E", "a[i]")]}
    ptx = {"level": "ptx", "instructions": [ins("sectors", None, 32768, 131072, None, "b[i]"),
                                            ins("sectors", None, 32768, 131072, None, "a[i]")]}
    lines = instruction_lines(sass, ptx, read_source_page(page, "vectorAdd", {"global sectors"}))
    assert lines[1:] == [
        "  0x00d0  LDG.E        requests         32,768       32,768  1.000         32,768  1.000"
        "  line 21: a[i]",
        "                       sectors         131,072      131,072  1.000        131,072  1.000",
        "  0x00f0  LDG.E        requests         32,768       32,768  1.000         32,768  1.000"
        "  line 21: b[i]",
        "                       sectors         131,072      135,168  1.031        131,072  1.031"]


def test_a_merged_load_is_compared_as_its_access_totals_against_the_ptx(tmp_path):
    # ptxas merged four ld.shared.f32 of As[ty][k] (1,024 executions, 1 wavefront each) into one
    # LDS.128 (1,024 executions, 4 wavefronts: 4,096); a spill LDL nothing predicted is listed
    page = write_page(tmp_path / "p.csv", [("k(int)", [
        (0, "LDC R1, c[0x0][0x28]", 1024, 1024, 0, 0, 0),
        (0x100, "LDS.128 R4, [R2]", 1024, 1024, 0, 4096, 0),
        (0x120, "LDL R8, [R1+0x10]", 256, 256, 0, 0, 1024)])])
    source, op = "As[ty][k]", "ld.shared.f32"
    sass = {"level": "sass", "shared": [ins("wavefronts", 0x100, 1024, 4096, "LDS.128", source,
                                            op)]}
    ptx = {"level": "ptx", "shared": [ins("wavefronts", None, 1024, 1024, None, source, op)] * 4}
    lines = instruction_lines(sass, ptx, read_source_page(page, "k", {"shared wavefronts"}))
    assert lines[1:] == [
        "  0x0100  LDS.128      requests          1,024        1,024  1.000              -      -"
        "  line 21: As[ty][k]",
        "                       wavefronts        4,096        4,096  1.000              -      -",
        "  line 21: As[ty][k] (ld.shared.f32): 1 SASS instructions, 4 PTX",
        "    requests: SASS 1,024, PTX 4,096, measured 1,024: ratio 1.000 (SASS), 0.250 (PTX)",
        "    wavefronts: SASS 4,096, PTX 4,096, measured 4,096: ratio 1.000 (SASS), 1.000 (PTX)",
        "  0x0120  LDL: predicted nowhere; measured 256 executed, 1,024 local sectors"]


def test_another_build_at_the_offset_or_no_sass_reading_says_so(tmp_path):
    page = write_page(tmp_path / "p.csv", [("vectorAdd(int)", [
        (0, "LDC R1, c[0x0][0x28]", 32768, 32768, 0, 0, 0),
        (0xd0, "LDG.E.64.CONSTANT R2, desc[UR4][R2.64]", 32768, 32768, "262,144", 0, 0)])])
    rows = read_source_page(page, "vectorAdd", {"global sectors"})
    sass = {"level": "sass", "instructions": [ins("sectors", 0xd0, 32768, 131072, "LDG.E"),
                                              ins("sectors", 0xf0, 32768, 131072, "LDG.E")]}
    ptx = {"level": "ptx", "instructions": []}
    lines = instruction_lines(sass, ptx, rows)
    assert ("          the page has LDG.E.64.CONSTANT at 0x00d0: the profiled build is not the "
            "one predicted (arch, nvcc version)") in lines
    assert "          not in the source page: no instruction at 0x00f0" in lines
    assert instruction_lines({"level": "ptx", "compiler": "nvcc 13.0 for sm_90 at -O3"}, ptx,
                             rows) == ["  counted in PTX only (nvcc 13.0 for sm_90 at -O3): no "
                                       "SASS offsets to pair with the source page"]


def test_a_cell_that_is_no_address_or_no_count_is_one_line(tmp_path):
    header = ["Address", "Source", "Instructions Executed"]
    for cells, message in ((["0x7f00zz", "EXIT", "1"], r"'0x7f00zz' is no instruction address"),
                           (["0x7f00", "EXIT", "many"], r"'many' at offset 0x0000 is no count")):
        page = tmp_path / "p.csv"
        page.write_text('"Kernel Name","k(int)"\n' + ",".join(f'"{c}"' for c in header) + "\n"
                        + ",".join(f'"{c}"' for c in cells) + "\n")
        with pytest.raises(SourcePageError, match=rf"^p\.csv: {message}$"):
            read_source_page(page, "k", set())
