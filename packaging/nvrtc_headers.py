"""Which of the CUDA wheels' headers NVRTC opens: the measurement behind trim.py's keep-list.

    strace -f -qq -e trace=open,openat -o TRACE python packaging/nvrtc_headers.py run DIR
    python packaging/nvrtc_headers.py opened TRACE > packaging/nvrtc_headers.txt

`run` compiles, with the NVRTC route (SECTORVIZ_COMPILER=nvrtc) and an empty PTX cache in
DIR, every `*-cuda` example (less NVCC_ONLY) and a probe kernel that includes what public
kernels do (PROBE_INCLUDES: half and bfloat16 types, cooperative groups, pipelines and
barriers, libcu++ and CUB basics), each through `sectorviz report --engine compiled`; with
`--app EXE` through that executable, as .ci/bundle.sh checks the bundle's NVRTC on the same
compiles. `opened` prints trim.py's keep-list (packaging/nvrtc_headers.txt): a comment
saying how it was made, then one a line and sorted, each file under an `include/` folder of
the `nvidia` wheels that the traced processes opened (the child compiles included: `strace
-f`). Needs strace (apt-get install strace) and the wheels (pip install -e .).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "resources" / "examples"

# What kernels in the wild include beyond <cuda_runtime.h>, each compiled in the probe. Not
# <mma.h>: the wheels lack the crt/mma.h it includes, so NVRTC cannot compile it from them.
PROBE_INCLUDES = (
    "cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "cooperative_groups.h",
    "cooperative_groups/reduce.h", "cooperative_groups/memcpy_async.h", "cuda_pipeline.h",
    "cuda_awbarrier.h", "math_constants.h", "cuda/pipeline", "cuda/barrier",
    "cuda/atomic", "cuda/std/cstdint", "cuda/std/limits", "cuda/std/type_traits",
    "cuda/std/utility", "cuda/std/array", "cuda/std/tuple", "cuda/std/functional",
    "cub/warp/warp_reduce.cuh", "cub/block/block_reduce.cuh", "cub/block/block_load.cuh",
    "cub/block/block_store.cuh", "cub/block/block_scan.cuh", "cstdint", "climits",
)
PROBE_KERNEL = """
namespace cg = cooperative_groups;

__global__ void probe(const float* in, float* out, int n)
{
    using Reduce = cub::BlockReduce<float, 128>;
    __shared__ typename Reduce::TempStorage scratch;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    __half h = __float2half(v);
    __nv_bfloat16 b = __float2bfloat16(v);
    cg::thread_block block = cg::this_thread_block();
    auto warp = cg::tiled_partition<32>(block);
    float w = cg::reduce(warp, v, cg::plus<float>());
    cuda::std::array<float, 2> pair{__half2float(h), __bfloat162float(b)};
    float total = Reduce(scratch).Sum(v + w + pair[0] + pair[1]);
    if (threadIdx.x == 0 && i < n)
        out[blockIdx.x] = total + cuda::std::numeric_limits<float>::epsilon();
}
"""
PROBE_PATTERN = {
    "format": "sectorviz.pattern/1",
    "name": "NVRTC header probe",
    "params": {"n": 4096, "threads": 128},
    "launch": {"grid": ["(n + threads - 1) / threads"], "block": ["threads"]},
    "arrays": {"in": {"dtype": "float32", "length": "n"},
               "out": {"dtype": "float32", "length": "n / threads"}},
    "kernel": {"source": "probe.cu", "function": "probe"},
}
# Examples NVRTC cannot compile, left out of `run`.
NVCC_ONLY = ("matmul-tiled-cuda.sectorviz.json",)  # its template kernel is named by a launch
_OPENED = re.compile(r'open(?:at)?\((?:AT_FDCWD, )?"(?P<path>[^"]+)", [^)]*\)\s+=\s+\d+')


def write_probe(folder: Path) -> Path:
    """The probe kernel and its pattern in `folder` -> the pattern's path."""
    includes = "".join(f"#include <{name}>\n" for name in PROBE_INCLUDES)
    (folder / "probe.cu").write_text(includes + PROBE_KERNEL, encoding="utf-8")
    pattern = folder / "probe-cuda.sectorviz.json"
    pattern.write_text(json.dumps(PROBE_PATTERN, indent=2), encoding="utf-8")
    return pattern


def run(folder: Path, app: list[str]) -> int:
    """Compile every `*-cuda` example (less NVCC_ONLY) and the probe with NVRTC, running
    `app`; 1 when one fails."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "SECTORVIZ_COMPILER": "nvrtc",
           "SECTORVIZ_CACHE_DIR": str(folder.resolve() / "ptx-cache")}
    failed = 0
    examples = [p for p in sorted(EXAMPLES.glob("*-cuda.sectorviz.json"))
                if p.name not in NVCC_ONLY]
    for pattern in [*examples, write_probe(folder.resolve())]:
        done = subprocess.run([*app, "report", "--engine", "compiled", str(pattern), "--json"],
                              env=env, cwd=ROOT, capture_output=True, text=True)
        ok = done.returncode == 0 and json.loads(done.stdout).get("engine") == "compiled"
        print(f"{'ok  ' if ok else 'FAIL'} {pattern.name}", file=sys.stderr)
        if not ok:
            print(done.stderr.strip(), file=sys.stderr)
            failed = 1
    return failed


def opened(trace: Path) -> list[str]:
    """The wheels' headers a strace log shows opened, as paths under their `include/`."""
    found = set()
    for line in trace.read_text(encoding="utf-8", errors="replace").splitlines():
        hit = _OPENED.search(line)
        if hit:
            parts = Path(os.path.normpath(hit["path"])).parts
            if "nvidia" in parts and "include" in parts:
                found.add("/".join(parts[parts.index("include") + 1:]))
    return sorted(found)


def main(argv: list[str]) -> int:
    if len(argv) in (2, 4) and argv[0] == "run" and argv[2:3] in ([], ["--app"]):
        app = [str(Path(argv[3]).resolve())] if argv[2:] else [sys.executable, "-m", "sectorviz"]
        return run(Path(argv[1]), app)
    if len(argv) == 2 and argv[0] == "opened":
        print("# The CUDA wheels' headers NVRTC opened (under include/): trim.py keeps these.\n"
              "# Made by packaging/nvrtc_headers.py (see there); rerun it for new wheels.")
        print("\n".join(opened(Path(argv[1]))))
        return 0
    print("usage: nvrtc_headers.py run DIR [--app EXE] | opened TRACE", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
