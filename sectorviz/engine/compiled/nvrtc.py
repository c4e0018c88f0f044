"""The NVRTC route of a compile: NVIDIA's runtime compiler from its wheels, where no nvcc is
installed, run in a child process (nvrtc_child.py) bounded like nvcc.

NVRTC cannot list the files it reads, so includes.py's checks, which run before every
compile, are all it gets: an include whose file a macro names is refused. It has no C++
standard library headers: the folder NVRTC_STANDINS gives it `<cstdint>` and `<climits>`
from libcu++ and empty stand-ins for host-only ones (`<cstdio>`, `<vector>`, ...), searched
after every other folder. It compiles no host function or variable: the items of the main
source where it names one are left out and the file compiled again (hostcode.py), at most
HOST_ROUNDS times. So no host code launches a template, and a template kernel is named by its
instantiation (`matmulTiled<16, float>`), which is handed to NVRTC as a name expression.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .bounded import run_bounded
from .compile import FUNCTION, Compile, CompileFailed
from .diagnostics import compile_error
from .hostcode import STANDINS, host_item_lines, host_items_left_out

NVRTC_STANDINS = STANDINS / "nvrtc"
CHILD = Path(__file__).resolve().with_name("nvrtc_child.py")
HOST_ROUNDS = 4  # compiles that may each leave out more host items
CHILD_ARG = "--nvrtc-child"  # the packaged app's executable runs the child when given this
NO_LAUNCHES = ("; NVRTC compiles no host launch, so a template kernel is named by its "
               "instantiation, e.g. \"kernel<16, float>\"")


def child_command() -> list[str]:
    """The command that runs nvrtc_child: Python, isolated (-I: nothing of the folder it runs
    in, the pattern's, is imported), or in the packaged app its own executable."""
    if getattr(sys, "frozen", False):
        return [sys.executable, CHILD_ARG]
    return [sys.executable, "-I", str(CHILD)]


class HostItems(CompileFailed):
    """NVRTC failed; `lines` of the main source hold host functions or variables it
    named."""

    def __init__(self, failed: CompileFailed, lines: set[int]):
        super().__init__(failed.place, failed.message, failed.column)
        self.lines = lines


class NvrtcCompile(Compile):
    """One compile with NVRTC."""

    def route(self, text: str) -> dict:
        """Compile `text`, the main source, leaving out the host items NVRTC names ->
        the cache entry."""
        left_out: set[int] = set()
        for _ in range(HOST_ROUNDS):
            try:
                return self._compile(text, bool(left_out))
            except HostItems as failed:
                if failed.lines <= left_out:
                    raise
                left_out |= failed.lines
                text = host_items_left_out(self.source.text, left_out)
        return self._compile(text, True)

    def _compile(self, text: str, left_out: bool) -> dict:
        """Compile `text` standing for the main source -> the cache entry."""
        folder = self.source.folder or self.base_dir
        search = self.search_folders()
        system = [*self.toolchain.include_dirs, str(NVRTC_STANDINS), str(STANDINS)]
        self.header_folders = tuple(system)
        policy = self.include_policy(text, search, macro_includes=False)
        header = self.flags_header()
        # NVRTC optimizes as nvcc's -O3 does, and takes no -O flag
        options = [f for f in self.flags.options if not f.startswith("-O")] + \
            [f"-I{d}" for d in [*search, *system]] + \
            ([f"--pre-include={header}"] if header else [])
        found = FUNCTION.fullmatch(self.function)
        names = [] if found.group("args") is None else \
            [f"{found.group('name')}<{found.group('args')}>"]
        result = self._nvrtc(text + self.appendix, options, names, str(folder))
        lowered = result["lowered"].get(names[0]) if names else None
        return self.entry(result["ptx"], text, policy.scan, left_out, lowered, hint=NO_LAUNCHES)

    def _nvrtc(self, text: str, options: list[str], names: list[str], cwd: str) -> dict:
        """Run the child compile -> its result; CompileFailed with NVRTC's first error."""
        request = {"library": self.toolchain.path, "source": text, "name": self.source.name,
                   "options": options, "names": names}
        done = run_bounded(child_command(), "kernel", "the compile", self.tmp, cwd=cwd,
                           stdin=json.dumps(request).encode("utf-8"))
        try:
            result = json.loads(done.stdout)
        except ValueError:
            result = {"ok": False, "log": done.stderr}
        if done.returncode != 0 or not result["ok"]:
            err = compile_error(result["log"], done.returncode or 1, self.place_of,
                                self.line_text)
            failed = CompileFailed(err.place, err.message, err.column)
            raise HostItems(failed, host_item_lines(result["log"], self.source.name))
        return result
