"""The nvcc route of a compile: includes.py's checks first, then `nvcc -M -H` lists every
file the preprocessor opens (each must lie in the pattern's root, where it gets the same
checks, or among the compiler's own headers) before any of its messages is shown, then
`nvcc -ptx` compiles.

nvcc hands parts of its command line to a shell, so nothing there comes from the pattern
as text: the compiled unit, the macros' header and the output lie in the private folder,
include folders are shell-safe real paths (flags.py), and a folder of sectorviz's own or the
source's whose path is not shell-safe is reached through a link in the private folder.

The compiled unit is a small file of sectorviz's own, in the private folder, that includes
the kernel's source and, when the pattern names an instantiation (`matmulTiled<16, float>`),
takes that instantiation's address so that nvcc emits it, then the compile's appendix. The
stand-in header of removed runtime calls (hostcode.REMOVED_APIS) is included before it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...model.files import lies_in, read_text
from .bounded import Finished, run_bounded, shell_safe
from .compile import FUNCTION, MAX_PTX_BYTES, UNIT_NAME, Compile, CompileFailed
from .compiler import search_list, toolkit_folders
from .diagnostics import compile_error, outside_root
from .hostcode import REMOVED_APIS, STANDINS
from .includes import IncludePolicy

_OPENED = re.compile(r"^\.+ (.+)$", re.M)  # a header the preprocessor opened (-H)
_NOT_FOUND = re.compile(r"^(?P<file>.+?):\d+:\d+: fatal error: (?P<name>.+): "
                        r"No such file or directory$", re.M)


class NvccCompile(Compile):
    """One compile with nvcc."""

    def route(self, text: str) -> dict:
        """Compile `text`, the main source -> the cache entry."""
        self.header_folders = (*toolkit_folders(self.toolchain.path), str(STANDINS))
        search = self.search_folders()
        policy = self.include_policy(text, search, macro_includes=True)
        unit = self._unit(text)
        folders = [self._reachable(f, f"folder{i}") for i, f in enumerate([*search, STANDINS])]
        header = self.flags_header()
        flags = [*self.flags.options, *(f"-I{f}" for f in folders),
                 "-include", f"{folders[-1]}/{REMOVED_APIS.name}",
                 *(["-include", str(header)] if header else [])]
        done = self._nvcc(["-M", "-Xcompiler", "-v", "-Xcompiler", "-H", *flags, str(unit)])
        self._check_opened(done, policy)
        self._raise_failure(done)
        out = self.tmp / "kernel.ptx"
        self._raise_failure(self._nvcc(["-ptx", *flags, str(unit), "-o", str(out)]))
        return self.entry(read_text(out, "kernel", limit=MAX_PTX_BYTES), text, policy.scan,
                          left_out=False)

    def _reachable(self, folder: Path, name: str) -> str:
        """`folder` as nvcc's command line may name it: itself when shell-safe, else a link
        to it in the private folder."""
        if shell_safe(str(folder)):
            return str(folder)
        link = self.tmp / name
        link.symlink_to(folder, target_is_directory=True)
        return str(link)

    def _unit(self, text: str) -> Path:
        """The compiled file: an #include of the main source (or, for inline code, of its
        text written here, named as the PTX should name it), then the named instantiation's
        address."""
        main = self.source.path
        if main is None:
            main = self.tmp / "main.cu"
            main.write_text(f"#line 1 \"{Path(self.source.name).as_posix()}\"\n{text}",
                            encoding="utf-8")
        lines = [f"#include \"{main.as_posix()}\""]
        found = FUNCTION.fullmatch(self.function)
        if found.group("args") is not None:
            lines.append(f"static void *const __sectorviz_instance __attribute__((unused)) = "
                         f"(void *)&{found.group('name')}<{found.group('args')}>;")
        unit = self.tmp / UNIT_NAME
        unit.write_text("\n".join(lines) + "\n" + self.appendix, encoding="utf-8")
        return unit

    def _nvcc(self, args: list[str]) -> Finished:
        done = run_bounded([self.toolchain.path, *args], "kernel", "the compile", self.tmp)
        if "-M" in args:
            self.header_folders = (*search_list(done.stderr), *self.header_folders)
        return done

    def _raise_failure(self, done: Finished) -> None:
        """CompileFailed with the compiler's first error, when it failed."""
        if done.returncode != 0:
            err = compile_error(done.stderr, done.returncode, self.place_of, self.line_text)
            raise CompileFailed(err.place, err.message, err.column)

    def _check_opened(self, done: Finished, policy: IncludePolicy) -> None:
        """Every file the preprocessor opened (`-M`'s list, `-H`'s lines: those opened before
        an error too) must be the compile's own, a compiler header or a file of the root
        (checked by the policy); a file it did not find is looked up by the policy, so that
        a name outside the root is refused whether or not it exists."""
        for name in [*_dependencies(done.stdout), *_OPENED.findall(done.stderr)]:
            real = os.path.realpath(self.tmp / name)
            if lies_in(real, self.tmp) or self.compiler_header(real):
                continue
            if not self.roots.allows(real):
                raise outside_root(name)
            policy.check_file(real)
        for missing in _NOT_FOUND.finditer(done.stderr):
            includer = os.path.realpath(self.tmp / missing.group("file"))
            policy.look_up(missing.group("name"), True, Path(includer).parent,
                           f"{self.place_of(missing.group('file')) or 'kernel'}")


def _dependencies(depends: str) -> list[str]:
    """Make-style `target : dep dep \\` lines -> the dependency paths (escaped spaces kept)."""
    body = depends.replace("\\\n", " ")
    _, _, deps = body.partition(": ")
    words = re.findall(r"(?:\\ |[^\s])+", deps)
    return [w.replace("\\ ", " ") for w in words]
