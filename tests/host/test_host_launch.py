"""A bare .cu read as the compiler sees its host launch (sectorviz/host): `sectorviz new`
writes a starting pattern per launched kernel and instantiation, `sectorviz report
KERNEL.cu` reports one straight away, saying on stderr what it guessed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sectorviz.cli import main
from sectorviz.engine.compiled.compiler import find_compiler

HERE = Path(__file__).resolve().parent
TRANSPOSE = HERE / "transpose_rows.cu"  # the CUDA blog transpose's host launch
STRIDED = HERE / "strided_access.cu"  # a template kernel, two instantiations, n * 33 elements
RUNNER = HERE / "strided_runner.cu"  # the same kernels launched from a host template
FOUND = find_compiler()
KERNELS = [(TRANSPOSE, k) for k in ("copyRows", "transposeNaive", "transposeShared")] + [
    (STRIDED, f"{k}<{t}>") for k in ("offset", "stride") for t in ("float", "double")]
ENGINES = ["source", pytest.param("compiled", marks=pytest.mark.skipif(
    FOUND is None or FOUND.kind != "nvcc", reason="no nvcc on this machine"))]


def made(tmp_path: Path, cu: Path, capsys, *flags: str) -> dict[str, dict]:
    """`sectorviz new` on a copy of `cu` -> the patterns written, by their function."""
    copy = tmp_path / cu.name
    shutil.copy(cu, copy)
    assert main(["new", str(copy), *flags]) == 0
    paths = capsys.readouterr().out.split()
    docs = [json.loads(Path(p).read_text()) for p in paths]
    return {d["kernel"]["function"]: d for d in docs}


def test_the_transpose_launch_is_read_from_dim3_and_constants(tmp_path, capsys):
    docs = made(tmp_path, TRANSPOSE, capsys)
    assert list(docs) == ["copyRows", "transposeNaive", "transposeShared"]
    for doc in docs.values():
        assert doc["launch"] == {"grid": ["cols / TILE", "rows / TILE"],
                                 "block": ["TILE", "ROWS"]}
        # cudaMalloc(&d_in, bytes), const int bytes = cols * rows * sizeof(float)
        assert doc["arrays"] == {"out": {"length": "cols * rows"},
                                 "in": {"length": "cols * rows"}}
        assert doc["params"] == {"cols": 1024, "TILE": 32, "rows": 1024, "ROWS": 8}
        assert "not known" not in doc["notes"]
    assert (tmp_path / "transpose_rows-transposeNaive.sectorviz.json").exists()


def test_each_launched_instantiation_is_a_pattern(tmp_path, capsys):
    docs = made(tmp_path, STRIDED, capsys)
    assert list(docs) == ["offset<float>", "offset<double>", "stride<float>",
                          "stride<double>"]
    for function, doc in docs.items():
        assert doc["launch"] == {"grid": ["n / BLOCK"], "block": ["BLOCK"]}
        assert doc["arrays"] == {"a": {"length": "n * 33"}}  # bytes over sizeof(T)
        scalar = {"shift": 1} if function.startswith("offset") else {"step": 32}
        assert doc["params"] == {"n": 1 << 20, "BLOCK": 256, **scalar}
    assert (tmp_path / "strided_access-stride-double.sectorviz.json").exists()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("cu, kernel", KERNELS, ids=[k for _, k in KERNELS])
def test_report_reaches_a_number_for_every_kernel(cu, kernel, engine, capsys, monkeypatch):
    monkeypatch.setenv("SECTORVIZ_ENGINE", engine)
    assert main(["report", str(cu), "--kernel", kernel, "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "sector demand" in out
    assert err.count("\n") == 1 and err.startswith(f"{cu}: {kernel}: the host launch: grid (")


def test_several_kernels_without_kernel_is_one_line(capsys):
    assert main(["report", str(STRIDED)]) == 2
    assert capsys.readouterr().err == (
        f"{STRIDED}: 4 kernels (offset<float>, offset<double>, stride<float>, "
        "stride<double>); name one with --kernel NAME\n")
    assert main(["report", str(STRIDED), "--kernel", "nope"]) == 2
    assert "no kernel 'nope'; the file has: offset<float>" in capsys.readouterr().err


def test_the_transpose_kernel_counts_its_own_width(capsys):
    """width = gridDim.x * TILE: the launch read makes the naive store 32 sectors a request
    inside the array, where the fallback 1-D launch left it."""
    assert main(["report", str(TRANSPOSE), "--kernel", "transposeNaive", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["totals"]["sectors"] == 1024 * 1024 // 8 + 1024 * 1024
    assert doc["totals"]["ideal_sectors"] == 2 * 1024 * 1024 // 8


RUNTIME = """\
#include <cstdlib>
__global__ void scale(float *x, int n, int k) { int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i * k] *= 2; }
int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    float *x;
    cudaMalloc(&x, 4096 * sizeof(float));
    for (int k = 1; k < 4; k++)
        scale<<<(n + 255) / 256, 256>>>(x, n, k);
}
"""


def test_what_cannot_be_known_is_named_in_the_notes(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "runtime.cu").write_text(RUNTIME)
    doc = made(tmp_path, tmp_path / "src" / "runtime.cu", capsys, "-o",
               str(tmp_path / "out.sectorviz.json"))["scale"]
    assert doc["kernel"]["source"] == "runtime.cu"  # relative to the -o file
    assert doc["arrays"] == {"x": {"length": "4096"}}
    # n, computed when the program runs, is a param that stands in: the launch reads it
    assert doc["launch"] == {"grid": ["(n + 255) / 256"], "block": ["256"]}
    assert doc["params"] == {"n": 1 << 20, "k": 1}
    assert "n: 'atoi(argv[1])' is computed when the program runs, 1048576 stands in" \
        in doc["notes"]
    assert "k: 'k' changes before the launch (line 9), 1 stands in" in doc["notes"]
    assert "the 1-D default" not in doc["notes"]


TORCH_STYLE = """\
#include <torch/extension.h>
template <const int BM = 32, const int BN = 32, const int BK = 8>
__global__ void tiled(float *a, float *b, float *c, int M, int N, int K) {
  int row = blockIdx.y * BM + threadIdx.y, col = blockIdx.x * BN + threadIdx.x;
  float acc = 0;
  for (int k = 0; k < K; k += BK)
    for (int kk = 0; kk < BK; kk++) acc += a[row * K + k + kk] * b[(k + kk) * N + col];
  c[row * N + col] = acc;
}
#define CHECK(T) if (!(T).is_cuda()) { throw std::runtime_error("not on the GPU"); }
void tiled_mm(torch::Tensor a, torch::Tensor b, torch::Tensor c) {
  CHECK(a)
  const int M = a.size(0);
  const int K = a.size(1);
  const int N = b.size(1);
  constexpr int BM = 16;
  constexpr int BN = 32;
  dim3 block(BN, BM);
  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  tiled<BM, BN><<<grid, block>>>(reinterpret_cast<float *>(a.data_ptr()),
      reinterpret_cast<float *>(b.data_ptr()), reinterpret_cast<float *>(c.data_ptr()), M, N, K);
}
"""


def test_sizes_a_pytorch_extension_computes_when_it_runs_stand_in_as_params(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    cu = tmp_path / "src" / "tiled_mm.cu"
    cu.write_text(TORCH_STYLE)
    doc = made(tmp_path, cu, capsys)["tiled<16, 32>"]  # BM, BN: the host's constexprs
    # three sizes computed when it runs: each 1024, a 1024 x 1024 matrix of 2^20 floats
    assert doc["params"] == {"M": 1024, "N": 1024, "K": 1024, "BN": 32, "BM": 16}
    assert doc["launch"] == {"grid": ["(N + BN - 1) / BN", "(M + BM - 1) / BM"],
                             "block": ["BN", "BM"]}
    assert doc["arrays"] == {name: {"length": str(1 << 20)} for name in "abc"}
    assert "M: 'a.size(0)' is computed when the program runs, 1024 stands in" in doc["notes"]


def test_new_never_overwrites_and_o_takes_one_kernel(tmp_path, capsys):
    made(tmp_path, TRANSPOSE, capsys, "--kernel", "copyRows")
    cu = tmp_path / TRANSPOSE.name
    assert main(["new", str(cu), "--kernel", "copyRows"]) == 2
    assert capsys.readouterr().err == (
        f"{tmp_path / 'transpose_rows-copyRows.sectorviz.json'}: exists; sectorviz new does "
        "not overwrite a pattern (remove it, or give -o FILE)\n")
    assert main(["new", str(cu), "-o", str(tmp_path / "one.json")]) == 2
    assert "3 kernels (copyRows, transposeNaive, transposeShared)" in capsys.readouterr().err
    assert main(["new", str(cu), "--kernel", "copyRows", "-o", str(cu)]) == 2
    assert "a file this run read" in capsys.readouterr().err


def test_a_launch_in_a_host_template_is_read_per_call_of_it(tmp_path, capsys):
    """`offset<<<...>>>(buffer, k)` inside `template <typename T> void run(int mib)`:
    T is deduced from `T *buffer`, once per explicit call (run<float>, run<double>), and
    mib comes from the call in main (int mib = 2), as the blog's coalescing sample launches
    its kernels. n = 2 MiB / sizeof(T): 524,288 floats, 262,144 doubles."""
    docs = made(tmp_path, RUNNER, capsys)
    assert list(docs) == ["offset<float>", "offset<double>", "stride<float>",
                          "stride<double>"]
    for function, doc in docs.items():
        size = 8 if "double" in function else 4
        assert doc["launch"] == {"grid": [f"(mib * 1024 * 1024 / {size}) / block"],
                                 "block": ["block"]}
        assert doc["arrays"] == {"a": {"length": f"(mib * 1024 * 1024 / {size}) * 33"}}
        scalar = {"shift": 0} if function.startswith("offset") else {"step": 2}
        assert doc["params"] == {"mib": 2, "block": 128, **scalar}
        assert "not known" not in doc["notes"]
    assert main(["report", str(tmp_path / RUNNER.name), "--kernel", "stride<double>",
                 "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    # 262,144 doubles, 8,192 warps: lanes 16 B apart, each warp's 512 B span 16 sectors per
    # load and per store, 8 of each used half
    assert report["totals"]["sectors"] == 2 * 8192 * 16


def test_an_error_from_a_guessed_launch_says_what_to_change(tmp_path, capsys):
    """No launch in the file: the 1-D default (2^20 elements, 256 threads) reaches past the
    array the kernel strides through 4,096 floats per block; the error line ends with the
    likely cause and where to change it."""
    cu = tmp_path / "bare.cu"
    cu.write_text("__global__ void k(float *a) { a[blockIdx.x * 4096 + threadIdx.x] = 1; }\n")
    assert main(["report", str(cu), "--quiet"]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    # the first byte past the array: a[1048576] (2^20 floats x 4 B = 4194304), written first
    # by block 256 (256 x 4096 = 1048576), thread 0: warp 256 x 8 = 2048, lane 0
    assert "reaches byte 4194304, outside every array the pattern places, at warp 2048 " \
        "lane 0" in err
    assert err.endswith("(the launch or array lengths were guessed, as the line above says: "
                        "`sectorviz new bare.cu --kernel k` writes them to a pattern file; set "
                        "launch.grid, launch.block or the arrays' length there)")
