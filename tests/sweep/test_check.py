"""`sectorviz check`: pass, a rise (the exact lines, was -> now), a fall that passes with a
hint, --update and its stable keys, bad expectations. The naive transpose (CUDA, m = 1024,
32 x 32 blocks, 32,768 warps) reads rows, 4 sectors a warp (131,072), and writes columns, 32
a warp (1,048,576): 1,179,648 sectors in all, where the tiled transpose needs 8 a warp,
262,144."""

import json
import shutil

import pytest

from sectorviz.cli import main
from sectorviz.paths import examples_dir

# As written (nvcc -G), line 16's two accesses are `ld.f32` and `st.f32` (generic
# addresses), both at `.loc 1 16 5`: each is named, and keyed, by its array's expression on
# that line and its PTX op.
STORE = "line 16: c[col * m + row], st.f32"  # the report's names, as older --update runs wrote
LOAD = "line 16: a[row * m + col], ld.f32"
STABLE_STORE = "transposeNaive: c[col * m + row], st.f32 c"  # what --update writes now
STABLE_LOAD = "transposeNaive: a[row * m + col], ld.f32 a"


@pytest.fixture
def naive(tmp_path):
    """A copy of the naive transpose example (and its .cu) -> a function writing its
    `expect` and returning the path."""
    for name in ("transpose-naive-cuda.sectorviz.json", "transpose.cu"):
        shutil.copy(examples_dir() / name, tmp_path / name)
    path = tmp_path / "transpose-naive-cuda.sectorviz.json"

    def with_expect(expect=None):
        doc = json.loads(path.read_text())
        if expect is not None:
            doc["expect"] = expect
        path.write_text(json.dumps(doc, indent=2) + "\n")
        return path
    return with_expect


def check(capsys, *argv):
    status = main(["check", *map(str, argv), "--jobs", "1", "--quiet"])
    out = capsys.readouterr()
    return status, out.out.splitlines(), out.err.splitlines()


def test_expectations_that_hold_exit_0(capsys, naive):
    path = naive({"totals": {"sectors": 1179648, "requests": 65536},
                  "instructions": {STORE: {"sectors": 1048576, "sectors_per_request": 32}}})
    assert check(capsys, path) == (0, [], [])


def test_each_rise_is_one_line_was_now_and_exit_1(capsys, naive):
    path = naive({"totals": {"sectors": 262144},
                  "instructions": {STORE: {"sectors": 131072}, LOAD: {"sectors": 131072}}})
    assert check(capsys, path) == (1, [
        f"{path}: totals: sectors 262,144 -> 1,179,648, up (4.5x more)",
        f"{path}: {STORE}: sectors 131,072 -> 1,048,576, up (8x more)"], [])


def test_a_fall_passes_with_a_hint_to_update(capsys, naive):
    path = naive({"totals": {"sectors": 1300000}})
    assert check(capsys, path) == (0, [
        f"{path}: totals: sectors 1,300,000 -> 1,179,648, down (1.1x less)",
        f"{path}: better than expected: `sectorviz check --update {path}` writes it down"], [])


def test_useful_fraction_is_better_when_it_rises(capsys, naive):
    path = naive({"totals": {"useful_fraction": 0.5}})
    assert check(capsys, path) == (1, [
        f"{path}: totals: useful_fraction 0.5 -> 0.222222, down (2.25x less)"], [])


def test_tolerance_is_a_fraction(capsys, naive):
    path = naive({"totals": {"sectors": 1100000}, "tolerance": 0.08})  # 1,179,648: 7.2% more
    assert check(capsys, path) == (0, [], [])
    naive({"totals": {"sectors": 1100000}, "tolerance": 0.07})
    assert check(capsys, path)[0] == 1


def test_shared_totals_carry_a_prefix(capsys, tmp_path):
    path = tmp_path / "tiled.sectorviz.json"
    doc = json.loads((examples_dir() / "transpose-tiled.sectorviz.json").read_text())
    doc["expect"] = {"totals": {"shared_wavefronts": 60000, "shared_bank_conflicts": 0}}
    path.write_text(json.dumps(doc))
    assert check(capsys, path)[:2] == (1, [f"{path}: totals: shared_wavefronts 60,000 -> "
                                           f"65,536, up (1.09x more)"])


def test_update_writes_the_numbers_it_names_and_keeps_the_rest(capsys, naive):
    path = naive({"totals": {"sectors": 1, "ideal_sectors": 2},
                  "instructions": {STORE: {"requests": 3}, "line 99: gone": {"sectors": 4}},
                  "tolerance": 0.5})
    before = json.loads(path.read_text())
    assert check(capsys, path, "--update") == (
        0, [f"{path}: expect.instructions.line 99: gone: no longer in the kernel, left out"], [])
    after = json.loads(path.read_text())
    assert after.pop("expect") == {"totals": {"sectors": 1179648, "ideal_sectors": 262144},
                                   "instructions": {STABLE_STORE: {"requests": 32768}},
                                   "tolerance": 0.5}
    assert list(after) == [k for k in before if k != "expect"]
    assert after == {k: v for k, v in before.items() if k != "expect"}
    assert path.read_text().endswith("}\n")
    assert check(capsys, path) == (0, [], [])


def test_a_key_the_interpreter_wrote_still_names_its_instruction(capsys, naive):
    """Before the as-written reading was a debug compile, --update wrote its op in words."""
    path = naive({"instructions": {"transposeNaive: c[col * m + row], store c": {
        "sectors": 131072}}})
    assert check(capsys, path) == (1, [
        f"{path}: transposeNaive: c[col * m + row], store c: sectors 131,072 -> 1,048,576, "
        f"up (8x more)"], [])
    assert check(capsys, path, "--update")[0] == 0
    assert list(json.loads(path.read_text())["expect"]["instructions"]) == [STABLE_STORE]


def test_update_without_expect_writes_the_defaults(capsys, naive):
    path = naive()
    assert check(capsys, path, "--update")[0] == 0
    assert json.loads(path.read_text())["expect"] == {
        "totals": {"sectors": 1179648, "requests": 65536},
        "instructions": {STABLE_LOAD: {"sectors": 131072}, STABLE_STORE: {"sectors": 1048576}},
        "tolerance": 0}


def test_a_file_without_expect_passes_with_a_note(capsys, naive):
    path = naive()
    assert check(capsys, path) == (0, [], [f"{path}: no 'expect' key, nothing to check"])


@pytest.mark.parametrize("expect, words", [
    ({"totals": {"sector": 1}}, "expect.totals.sector: unknown figure 'sector'"),
    ({"totals": {"sectors": -1}}, "expect.totals.sectors: expected a whole number from 0 to "
                                  "2^63 - 1, got -1"),
    ({"totals": {"sectors": True}}, "expect.totals.sectors: expected a whole number from 0 to "
                                    "2^63 - 1, got True"),
    ({"totals": {"sectors": 1.5}}, "expect.totals.sectors: expected a whole number"),
    ({"totals": {"sectors": 2**63}}, "expect.totals.sectors: expected a whole number"),
    ({"totals": {"useful_fraction": -0.5}}, "expect.totals.useful_fraction: expected a number "
                                            "from 0 to 2^63 - 1"),
    ({"tolerance": 1.5}, "expect.tolerance: expected a number from 0 to 1, got 1.5"),
    ({"tolerance": "5%"}, "expect.tolerance: expected a number"),
    ({"instruction": {}}, "expect.instruction: unknown key 'instruction'"),
    ({"instructions": []}, "expect.instructions: expected an object"),
    ([], "expect: expected an object"),
])
def test_a_bad_expect_is_refused_when_the_pattern_loads(capsys, naive, expect, words):
    path = naive(expect)
    status, out, err = check(capsys, path)
    assert (status, out, len(err)) == (2, [], 1)
    assert err[0].startswith(f"{path}: {words}")


@pytest.mark.parametrize("expect, place", [
    ({"totals": {"sectors": "HUGE"}}, "expect.totals.sectors"),
    ({"totals": {"sectors": "-HUGE"}}, "expect.totals.sectors"),
    ({"instructions": {STORE: {"sectors_per_request": "HUGE"}}},
     f"expect.instructions.{STORE}.sectors_per_request"),
    ({"totals": {"sectors": 1179648}, "tolerance": "HUGE"}, "expect.tolerance"),
])
def test_an_infinite_expectation_is_refused_not_passed(capsys, naive, expect, place):
    path = naive(expect)
    path.write_text(path.read_text().replace('"HUGE"', "1e400"))  # JSON reads it as infinity
    status, out, err = check(capsys, path)
    assert (status, out, len(err)) == (2, [], 1)
    assert err[0].startswith(f"{path}: {place}: expected a") and "got" in err[0]


def test_an_instruction_the_kernel_has_not_is_bad_input(capsys, naive):
    path = naive({"instructions": {"line 99: gone": {"sectors": 1}}})
    status, out, err = check(capsys, path)
    assert (status, out) == (2, [])
    assert err == [f"{path}: expect.instructions.line 99: gone: the kernel has no such "
                   f"instruction (it has 2; `sectorviz check --update` names them)"]


def test_a_figure_of_the_other_kind_is_bad_input(capsys, naive):
    path = naive({"instructions": {STORE: {"wavefronts": 1}}})
    status, _, err = check(capsys, path)
    assert status == 2 and err[0].endswith(f"{STORE} has no figure 'wavefronts'")


def test_a_file_that_cannot_be_read_is_exit_2_and_the_others_still_checked(capsys, naive,
                                                                          tmp_path):
    path = naive({"totals": {"sectors": 262144}})
    status, out, err = check(capsys, tmp_path / "missing.json", path)
    assert status == 2
    assert out == [f"{path}: totals: sectors 262,144 -> 1,179,648, up (4.5x more)"]
    assert err[0].startswith(f"{tmp_path / 'missing.json'}: cannot read")


def edit_kernel(path, old, new):
    cu = path.parent / "transpose.cu"
    assert old in cu.read_text()
    cu.write_text(cu.read_text().replace(old, new, 1))


def test_updated_keys_survive_a_line_added_above_the_kernel(capsys, naive):
    path = naive()
    assert check(capsys, path, "--update")[0] == 0
    edit_kernel(path, "__global__ void transposeNaive", "// one more line\n"
                                                        "__global__ void transposeNaive")
    assert check(capsys, path) == (0, [], [])


def test_the_coalescing_fix_passes_as_sectors_going_down(capsys, naive):
    path = naive()
    assert check(capsys, path, "--update")[0] == 0
    edit_kernel(path, "c[col * m + row] = a", "c[row * m + col] = a")  # its key's source edited
    assert check(capsys, path) == (0, [
        f"{path}: totals: sectors 1,179,648 -> 262,144, down (4.5x less)",
        f"{path}: {STABLE_STORE}: sectors 1,048,576 -> 131,072, down (8x less)",
        f"{path}: better than expected: `sectorviz check --update {path}` writes it down"], [])
    assert check(capsys, path, "--update")[0] == 0
    assert list(json.loads(path.read_text())["expect"]["instructions"]) == [
        STABLE_LOAD, "transposeNaive: c[row * m + col], st.f32 c"]
    assert check(capsys, path) == (0, [], [])


def test_an_old_key_the_edit_moved_is_one_short_line(capsys, naive):
    long_name = "line 17: " + "c[col * m + row] + " * 40
    path = naive({"instructions": {long_name: {"sectors": 1}}})
    status, out, err = check(capsys, path)
    assert (status, out, len(err)) == (2, [], 1)
    assert len(err[0]) - len(str(path)) < 170 and "…" in err[0]  # not 1,200 characters


def test_equal_keys_are_told_apart_by_their_order(capsys, naive):
    line = "    c[col * m + row] = a[row * m + col];\n"
    edit_kernel(path := naive(), line, line * 2)
    assert check(capsys, path, "--update")[0] == 0
    assert list(json.loads(path.read_text())["expect"]["instructions"]) == [
        STABLE_LOAD, STABLE_STORE, f"{STABLE_LOAD} #2", f"{STABLE_STORE} #2"]
    assert check(capsys, path) == (0, [], [])
