"""A Triton kernel counted in the SASS of Triton's own cubin (issue 33, item 3): the cubin its
bundled ptxas makes with `-lineinfo` inside the bounded compile, read with nvdisasm's
SASS-to-PTX line table and kept in the compile's cache entry; nvJitLink (as for Numba) where
the cubin carries no such table or is for another architecture, saying why."""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path

import pytest
from compiled_helpers import per_line

from sectorviz.engine.compiled import pykernel, sass
from sectorviz.engine.ptx.sass_reading import SassKernel
from sectorviz.model import load_pattern
from sectorviz.model.analysis import analyze
from sectorviz.model.frontend import kernel_for
from sectorviz.model.listing import listing_of
from sectorviz.model.memo import MEMO
from sectorviz.model.pattern import Pattern, with_kernel
from sectorviz.paths import examples_dir

pytest.importorskip("triton")
from triton.backends.nvidia.compiler import get_ptxas  # noqa: E402  (Triton's own rule)

TRITON = ("triton-vector-add", "triton-softmax", "triton-layer-norm", "triton-matmul")
MEMORY = re.compile(r"\b(ld|st|cp\.async|ldmatrix|red|atom)\.")  # a PTX memory instruction
NO_TABLE = ("The SASS is nvJitLink's, not Triton's own cubin: its cubin carries no "
            "SASS-to-PTX line table.")


@pytest.fixture(autouse=True)
def fresh_memo():
    """Each test compiles into its own PTX cache (conftest): no kernel held from another."""
    MEMO.clear()


def _example(name: str) -> Pattern:
    return load_pattern(examples_dir() / f"{name}.sectorviz.json")


def _tritons_ptxas(pattern: Pattern) -> str:
    """`Triton's ptxas 13.4 for sm_90`, its release as Triton's own get_ptxas reads it."""
    assert pattern.kernel is not None
    arch = pattern.kernel.get("arch", "sm_90")
    return f"Triton's ptxas {get_ptxas(int(arch[3:].rstrip('af'))).version} for {arch}"


def _entry(cache: Path) -> tuple[Path, dict]:
    """The one compile entry of a PTX cache folder: its file and its value."""
    path, = cache.glob("*.json")
    return path, json.loads(path.read_text())


@pytest.mark.parametrize("name", TRITON)
def test_a_triton_example_is_counted_in_the_sass_of_tritons_own_cubin(name, ptx_cache,
                                                                      monkeypatch):
    """Triton runs ptxas-blackwell (13.4 with Triton 3.9.0) from sm_90 and ptxas (12.9)
    below, the matmul's sm_80: the header and the first assumption name that ptxas with the
    release Triton reads from it; each SASS memory instruction names a PTX line holding a
    memory instruction; the cache entry holds the cubin (an ELF file) beside the PTX, and a
    second reading takes the SASS from it without reading the cubin again."""
    pattern = _example(name)
    words = _tritons_ptxas(pattern)
    kernel = kernel_for(pattern)
    assert isinstance(kernel, SassKernel)
    assert listing_of(pattern).reading.endswith(f", counted in SASS: {words}")
    assert kernel.assumptions[0].startswith(
        f"Counted in SASS: {words}, each memory instruction carried from the PTX Triton ")
    assert not any("nvJitLink" in a for a in kernel.assumptions)
    lines = kernel.compiled.ptx.splitlines()
    assert kernel.code.ops and all(MEMORY.search(lines[op.ptx_line - 1])
                                   for op in kernel.code.ops)
    _, entry = _entry(ptx_cache)
    assert base64.b64decode(entry["cubin"])[:4] == b"\x7fELF"
    assert entry["sass"]["assembler"] == words and entry["sass"]["note"] == ""
    monkeypatch.setattr(pykernel, "cubin_machine_code", None)  # a call would fail
    MEMO.clear()
    assert kernel_for(pattern).assumptions == kernel.assumptions


@pytest.mark.parametrize("name", TRITON)
def test_tritons_own_sass_counts_as_its_ptx_line_by_line(name):
    """Triton's PTX already holds the widths ptxas keeps (ld.global.v4.b32 -> LDG.E.128,
    ld.shared.v4 -> LDS.128, cp.async of 16 bytes -> LDGSTS...128): per Python line, space
    and op the SASS reading gives the PTX reading's requests, sectors and wavefronts, where
    ptxas unrolled a loop too (the layer norm's), and so the same totals."""
    pattern = _example(name)
    sass_run, ptx_run = (analyze(with_kernel(pattern, "test", level=level))
                         for level in ("sass", "ptx"))
    assert all(s.sass for s in (*sass_run.instructions, *sass_run.shared))
    assert per_line(sass_run) == per_line(ptx_run)
    assert sass_run.totals == ptx_run.totals


def test_a_cubin_without_a_ptx_line_table_is_replaced_by_nvjitlinks_and_said(ptx_cache):
    """Triton's own ptxas run on the entry's PTX as Triton runs it where line information is
    off (TRITON_DISABLE_LINE_INFO: `-lineinfo -suppress-debug-info`) makes a cubin nvdisasm
    finds no SASS-to-PTX line table in; put in the cache entry in place of Triton's, the
    SASS is nvJitLink's (of the PTX's .target, sm_90a), the header names nvJitLink, an
    assumption says why, and the counts are the same (6 x 4,096 requests of 16 sectors)."""
    if sass.find_jitlink() is None:
        pytest.skip("no nvJitLink wheel")
    pattern = _example("triton-vector-add")
    before = analyze(pattern).totals
    path, entry = _entry(ptx_cache)
    source, cubin = ptx_cache / "k.ptx", ptx_cache / "k.cubin"
    source.write_text(entry["ptx"])
    subprocess.run([get_ptxas(90).path, "-lineinfo", "-suppress-debug-info",
                    "--gpu-name=sm_90a", str(source), "-o", str(cubin)], check=True, timeout=120)
    path.write_text(json.dumps({**entry, "cubin": base64.b64encode(cubin.read_bytes())
                                .decode("ascii"), "sass": None}))
    source.unlink()
    cubin.unlink()
    MEMO.clear()
    kernel = kernel_for(pattern)
    release = sass.find_jitlink()[1]  # type: ignore[index]
    assert kernel.assumptions[0].startswith(f"Counted in SASS: nvJitLink {release} for "
                                            "sm_90a, each memory instruction carried ")
    assert NO_TABLE in kernel.assumptions
    assert listing_of(pattern).reading.endswith(
        f", counted in SASS: nvJitLink {release} for sm_90a")
    after = analyze(pattern)
    assert after.totals == before and (after.totals.requests, after.totals.sectors) == \
        (24576, 393216)
    assert _entry(ptx_cache)[1]["sass"]["note"] + "." == NO_TABLE


def test_a_cubin_changed_in_the_cache_is_replaced_by_nvjitlinks_and_said(ptx_cache):
    """A cache entry whose cubin is no longer base64 (changed by hand) is read as one without
    a cubin: nvJitLink's SASS, the reason in the assumptions, the same counts."""
    if sass.find_jitlink() is None:
        pytest.skip("no nvJitLink wheel")
    pattern = _example("triton-vector-add")
    before = analyze(pattern).totals
    path, entry = _entry(ptx_cache)
    path.write_text(json.dumps({**entry, "cubin": "not base64!", "sass": None}))
    MEMO.clear()
    assert ("The SASS is nvJitLink's, not Triton's own cubin: its cubin in the PTX cache is "
            "not base64.") in kernel_for(pattern).assumptions
    assert analyze(pattern).totals == before


def test_a_cubin_for_another_architecture_is_not_read(ptx_cache):
    """The vector add's cubin is for sm_90a (nvdisasm's `.target`): read for that PTX
    target it gives its 4 LDG.E.128 and 2 STG.E.128; asked for sm_100a, it is refused with
    the reason."""
    kernel_for(_example("triton-vector-add"))
    _, entry = _entry(ptx_cache)
    cubin = base64.b64decode(entry["cubin"])
    code, why = sass.cubin_machine_code(cubin, entry["entry"], "sm_90a", "Triton's ptxas")
    assert why == "" and code is not None
    assert [op.opcode for op in code.ops] == ["LDG.E.128"] * 4 + ["STG.E.128"] * 2
    assert sass.cubin_machine_code(cubin, entry["entry"], "sm_100a", "Triton's ptxas") == \
        (None, "its cubin is for sm_90a, not the PTX's sm_100a")
