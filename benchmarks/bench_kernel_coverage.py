"""Kernel coverage: which CUDA kernels of a folder sectorviz opens unmodified, and why not.

    python benchmarks/bench_kernel_coverage.py FOLDER [--auto] [--timeout S] [--json OUT]
        [--sample N] [--include-dir DIR ...] [--exclude SUBFOLDER ...]

FOLDER holds `.cu` and `.cuh` files (kept outside the repository) and `*.sectorviz.json`
patterns that name them, one pattern per kernel. With `--auto`, every `__global__` function of
every `.cu` or `.cuh` file that no pattern names gets the pattern `sectorviz new` makes from the
host launch in its file, as `sectorviz KERNEL.cu` would (the first instantiation it lists;
sizes the program computes when it runs stand in), else a generated one (a small launch, every
pointer parameter an array of ARRAY_ELEMENTS elements, every scalar parameter SCALAR_VALUE):
it measures whether the kernel opens, not its numbers. A refusal whose sizes were guessed
counts as input, as does one for the launch's shape where `new` had to guess the launch or
sizes.
Each case runs `sectorviz report --json` in its own process under a time limit; the table
prints accepted / input (the pattern must give values or sizes) / refused per kernel and the
rest grouped by reason (names, numbers and places blanked).
Where sectorviz names the instantiation to take ("name one, e.g. ..."), or a generated
pattern's instantiation names a host function's constant, the case runs once more as a user
would, with the instantiation sectorviz suggests. Two outcomes are outside "what nvcc
compiles" and counted apart: `compile` (the compile step itself fails: nvcc's first error,
e.g. a header the collection does not hold or a syntax error in the file; each is listed, to
be read) and `no code` (a template kernel the file never instantiates: nvcc emits nothing for
it). The last line prints the open share, (accepted + input) / (all - compile - no code).
`--sample N` runs N cases evenly spread over all of them (a short run on a busy machine);
`--include-dir DIR` gives every case a folder of the collection's own headers (cuda-samples'
Common/), as its build does.

The public collections measured (issue 29), fetched outside the repository (never commit
them), e.g. into /tmp, with git or the session's `fetch` tool and then
`git --git-dir=MIRROR archive HEAD PATHS | tar -x -C /tmp/NAME` (sources and headers only:
`git ls-tree -r --name-only HEAD | grep -E '[.](cu|cuh|h|hpp|inl)$'`):
- github.com/xlite-dev/LeetCUDA, FOLDER kernels/ (PyTorch extension kernels, no torch needed:
  the compile's stand-in headers declare it), as its builds compile it: kernels/ with
  `--exclude flash-attn --exclude hgemm --exclude cutlass`; kernels/flash-attn with
  `--include-dir kernels/flash-attn/utils --include-dir kernels/flash-attn/mma`;
  kernels/hgemm with `--include-dir kernels/hgemm/utils --include-dir kernels/hgemm`
  (their setup scripts pass those -I folders; both hold a different utils.h);
- github.com/NVIDIA/cuda-samples, FOLDER Samples/, with --include-dir Common;
- github.com/karpathy/llm.c, FOLDER dev/cuda/.
e.g. `python benchmarks/bench_kernel_coverage.py /tmp/LeetCUDA/kernels --auto --sample 40
--timeout 90 --exclude flash-attn --exclude hgemm --exclude cutlass`.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import tree_sitter
import tree_sitter_cuda

from sectorviz.engine.compiled.compile import CompileFailed, compile_kernel
from sectorviz.model.errors import PatternError
from sectorviz.model.pattern import load_pattern

ARRAY_ELEMENTS = 1 << 22
SCALAR_VALUE = 64
AUTO_LAUNCH = {"grid": [2, 2], "block": [32, 8]}
# Refusals that a pattern answers (array values, the dynamic shared size, which instantiation,
# an array to count): the kernel's code is inside the subset; a generated pattern just lacks
# what the user gives. An error at `kernel.function` is in the instantiation a generated
# pattern took from a launch (`k<BM, BN><<<`, BM a host function's constant).
GENERATED = "auto."  # the file names of generated patterns begin so
# A launch or sizes `sectorviz new` could not read from the host code (a launch inside a
# macro, sizes given at run time: its notes say what stands in): a refusal for the launch's
# shape (an access past an array or the shared memory a block size declares, a warp-wide
# instruction in a partial warp) is the pattern's to fix.
GUESSED = re.compile(r"a 1-D launch of|stands? in")
SHAPE = re.compile(r"outside every array|bytes of shared memory the kernel declares|"
                   r"whose lanes are not all active")
SUGGESTED = re.compile(r'name one, e\.g\. "(?P<name>[^"]+)"')
HOST_CONSTANT = re.compile(r"^kernel\.function line \d+(, column \d+)?: "
                           r"identifier \S+ is undefined")
NO_CODE = re.compile(r"the compiled code has no __global__ function")
NEEDS_INPUT = re.compile(r"values in the pattern file|extern __shared__ memory needs its size|"
                         r"name the instantiation|name one, e\.g\.|^kernel\.function line |"
                         r"with at least one array|lengths were guessed")


def global_kernels(source: bytes) -> list[tuple[str, list[tuple[str, bool]], bool]]:
    """`.cu` text -> [(kernel name, [(parameter name, is pointer)], is a template)] for
    `__global__`s."""
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))
    found = []
    stack = [parser.parse(source).root_node]
    while stack:
        node = stack.pop()
        if node.type == "function_definition" and any(
                c.type == "__global__" for c in node.children):
            decl = node.child_by_field_name("declarator")
            while decl is not None and decl.type != "function_declarator":
                decl = decl.child_by_field_name("declarator")
            if decl is None:
                continue
            name = decl.child_by_field_name("declarator").text.decode(errors="replace")
            params = []
            for p in decl.child_by_field_name("parameters").named_children:
                d = p.child_by_field_name("declarator")
                pointer = False
                while d is not None and d.type not in ("identifier",):
                    pointer |= d.type in ("pointer_declarator", "reference_declarator")
                    d = d.child_by_field_name("declarator")
                if d is not None:
                    params.append((d.text.decode(errors="replace"), pointer))
            found.append((name, params, node.parent is not None
                          and node.parent.type == "template_declaration"))
        else:
            stack.extend(reversed(node.named_children))
    return found


def first_launch(source: bytes, kernel: str) -> str:
    """`kernel` -> the first instantiation the file launches (`name<args><<<`, its arguments'
    line breaks made spaces), else `kernel`: a template kernel launched with several
    instantiations opens as the first one."""
    found = re.search(rb"\b" + re.escape(kernel.encode()) + rb"\s*<([^<>;{}]*)>\s*<<<", source)
    if found is None:
        return kernel
    return f"{kernel}<{' '.join(found.group(1).decode(errors='replace').split())}>"


def auto_pattern(source: Path, kernel: str, params: list[tuple[str, bool]]) -> dict:
    """A pattern that opens `kernel` of `source` with a small launch and default sizes."""
    return {
        "format": "sectorviz.pattern/1",
        "name": f"{source.stem}: {kernel} (auto)",
        "params": {name: SCALAR_VALUE for name, pointer in params if not pointer},
        "launch": AUTO_LAUNCH,
        "arrays": {name: {"length": ARRAY_ELEMENTS} for name, pointer in params if pointer},
        "kernel": {"source": str(source.resolve()),
                   "function": first_launch(source.read_bytes(), kernel)},
    }


def reason_of(line: str) -> str:
    """One error line -> its reason: the file, place, user names and numbers blanked, the
    construct kept (the first quoted text of an "outside the subset" line, its template
    arguments dropped)."""
    text = re.sub(r" \[as [^\]]*\]$", "", line).split(": ", 1)[-1]
    text = re.sub(r"^((\S+ )?line \d+(, column \d+)?|kernel\.\w+|arrays\.\w+|params\.\w+): ",
                  "", text)
    kept = re.search(r"'([^']*)'", text) if "outside the subset" in text else None
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", text)
    if kept:
        construct = re.sub(r"<.*", "<…>", kept.group(1))[:40]
        text = text.replace("'…'", f"'{construct}'", 1)
    return re.sub(r"\d[\d,]*", "N", text)[:110]


def run_case(pattern: Path, timeout: float, folders: list[Path], template: bool
             ) -> tuple[str, str, float]:
    """-> ("accepted" | "input" | "refused" | "compile" | "no code" | "timeout" | "crashed",
    detail, seconds); "input": refused for what the pattern must give (NEEDS_INPUT), not for
    the code. A refusal that names the instantiation to take runs again with it (at most
    twice). `folders` (the kernels' folder first) are --include-dirs: a generated pattern lies
    in a temporary folder, outside the kernels' root. `template`: the kernel is a template."""
    start = time.perf_counter()
    if pattern.name.startswith(GENERATED):
        pattern = from_host_launch(pattern, timeout, folders)
    status, detail, _ = report(pattern, timeout, folders)
    took = time.perf_counter() - start
    for _ in range(2):
        doc = json.loads(pattern.read_text())
        name = suggested(detail, doc["kernel"]["function"]) \
            if status in ("input", "refused") else None
        if name is None:
            break
        doc["kernel"]["function"] = name
        pattern = pattern.with_name(f"retry.{pattern.name}")
        pattern.write_text(json.dumps(doc))
        status, detail, more = report(pattern, timeout, folders)
        detail, took = f"{detail} [as {name}]", took + more
    if status in ("input", "refused") and template and NO_CODE.search(detail):
        return "no code", detail, took
    if status == "refused":
        failed = compile_failure(pattern, folders)
        if failed is not None:
            return "compile", failed, took
        if GUESSED.search(json.loads(pattern.read_text()).get("notes", "")) \
                and SHAPE.search(detail):
            return "input", f"{detail} [the launch or sizes were guessed]", took
    return status, detail, took


def from_host_launch(generated: Path, timeout: float, folders: list[Path]) -> Path:
    """The pattern `sectorviz new` makes of a generated pattern's kernel from the host launch
    in its file, as a user's `sectorviz KERNEL.cu` would (the first instantiation it lists
    where there are several); the generated pattern where `new` makes none."""
    doc = json.loads(generated.read_text())
    kernel = doc["kernel"]["function"].split("<")[0]
    out = generated.with_name(f"new.{generated.name}")
    for _ in range(2):
        try:
            proc = subprocess.run([sys.executable, "-m", "sectorviz", "new",
                                   doc["kernel"]["source"], "--kernel", kernel, "-o", str(out),
                                   *include_args(folders)],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            break
        if proc.returncode == 0:
            return out
        listed = re.search(r"\d+ kernels \((.*)\); name one", proc.stderr)
        if listed is None:
            break
        kernel = first_listed(listed.group(1))
    return generated


def first_listed(names: str) -> str:
    """The first of a comma-separated list of kernel names whose template arguments hold
    commas too (`k<64, 32>, k<128, 32>` -> `k<64, 32>`)."""
    depth = 0
    for i, char in enumerate(names):
        depth += {"<": 1, ">": -1}.get(char, 0)
        if char == "," and depth == 0:
            return names[:i]
    return names


def include_args(folders: list[Path]) -> list[str]:
    return [arg for folder in folders for arg in ("--include-dir", str(folder.resolve()))]


def report(pattern: Path, timeout: float, folders: list[Path]) -> tuple[str, str, float]:
    """`sectorviz report --json` on `pattern` in its own process -> (status, detail, s)."""
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "sectorviz", "report", "--json", "--quiet",
                               *include_args(folders), str(pattern)],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", f"over {timeout:g} s", time.perf_counter() - start
    took = time.perf_counter() - start
    if proc.returncode == 0:
        doc = json.loads(proc.stdout)
        return "accepted", f"{len(doc['instructions'])} instructions", took
    lines = proc.stderr.strip().splitlines()
    if proc.returncode == 2 and len(lines) == 1:
        said = lines[0].split(": ", 1)[-1]  # after the pattern's path
        return "input" if NEEDS_INPUT.search(said) else "refused", lines[0], took
    return "crashed", (lines[-1] if lines else f"exit {proc.returncode}"), took


def suggested(detail: str, function: str) -> str | None:
    """The instantiation a refusal says to name, or the bare kernel name where a generated
    pattern's instantiation named a host function's constant (sectorviz then lists them)."""
    said = detail.split(": ", 1)[-1]
    found = SUGGESTED.search(said)
    if found:
        return found.group("name")
    bare = function.split("<")[0]
    return bare if HOST_CONSTANT.search(said) and bare != function else None


def compile_failure(pattern: Path, folders: list[Path]) -> str | None:
    """nvcc's (or NVRTC's) first error where the compile step itself fails for `pattern`,
    else None (the refusal is sectorviz's)."""
    try:
        compile_kernel(load_pattern(pattern, tuple(str(f.resolve()) for f in folders)))
    except CompileFailed as failed:
        return str(failed)
    except PatternError:
        return None
    return None


def cases(folder: Path, auto: bool, scratch: Path, exclude: list[str]
          ) -> list[tuple[str, Path, bool]]:
    """(label, pattern path, kernel is a template) for every pattern in `folder`, plus
    generated ones, none under the subfolders `exclude` names."""
    out, named = [], set()
    for pattern in sorted(p for p in folder.rglob("*.sectorviz.json")
                          if not any(p.is_relative_to(folder / part) for part in exclude)):
        doc = json.loads(pattern.read_text())
        kernel = doc.get("kernel", {})
        named.add(((pattern.parent / kernel.get("source", "")).resolve(),
                   kernel.get("function", "").split("<")[0]))
        out.append((f"{pattern.relative_to(folder)}", pattern, False))
    if auto:
        for cu in sorted(p for ext in ("*.cu", "*.cuh") for p in folder.rglob(ext)
                         if not any(p.is_relative_to(folder / part) for part in exclude)):
            for kernel, params, template in global_kernels(cu.read_bytes()):
                if (cu.resolve(), kernel) in named:
                    continue
                path = scratch / f"{GENERATED}{cu.stem}.{kernel}.sectorviz.json"
                path.write_text(json.dumps(auto_pattern(cu, kernel, params)))
                out.append((f"{cu.relative_to(folder)}: {kernel}", path, template))
    return out


def sampled(found: list[tuple[str, Path, bool]], count: int | None
            ) -> list[tuple[str, Path, bool]]:
    """`count` of the cases, evenly spread over their sorted order (all of them when None or
    when there are no more): a short run on a busy machine that still spans every folder."""
    if count is None or count >= len(found):
        return found
    return [found[i * len(found) // count] for i in range(count)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--auto", action="store_true", help="also open kernels no pattern names")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per kernel")
    ap.add_argument("--json", type=Path, help="write the results as JSON here")
    ap.add_argument("--sample", type=int, help="run only this many cases, evenly spread")
    ap.add_argument("--include-dir", type=Path, action="append", default=[],
                    help="a folder of the collection's headers (repeatable)")
    ap.add_argument("--exclude", action="append", default=[],
                    help="leave out files under this subfolder of FOLDER (repeatable; a part "
                         "whose build gives other include folders, run on its own)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = [(label, *run_case(p, args.timeout, [args.folder, *args.include_dir],
                                     template))
                   for label, p, template in sampled(cases(args.folder, args.auto, Path(tmp),
                                                           args.exclude),
                                           args.sample)]
    width = max([len(r[0]) for r in results] + [6])
    for label, status, detail, took in results:
        print(f"{label:<{width}}  {status:<8}  {took:6.1f} s  {detail[:100]}")
    counts = collections.Counter(r[1] for r in results)
    print(f"\n{len(results)} kernels: " + ", ".join(f"{n} {s}" for s, n in counts.most_common()))
    reasons = collections.Counter(reason_of(r[2]) for r in results if r[1] != "accepted")
    if reasons:
        print("\nnot accepted, by reason:")
        for reason, n in reasons.most_common():
            print(f"  {n:3d}  {reason}")
    outside = counts["compile"] + counts["no code"]
    if len(results) > outside:
        print(f"\nopen (accepted + input) of what nvcc compiles: "
              f"{counts['accepted'] + counts['input']} of {len(results) - outside} "
              f"({(counts['accepted'] + counts['input']) / (len(results) - outside):.0%})")
    if args.json:
        args.json.write_text(json.dumps([dict(zip(("kernel", "status", "detail", "seconds"), r))
                                         for r in results], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
