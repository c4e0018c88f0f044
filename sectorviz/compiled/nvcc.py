"""The nvcc route of a compile: `nvcc -M` lists the files the compile would read (each must
lie in the pattern's root or among the compiler's own headers), then `nvcc -ptx` compiles.

The compiled unit is a small file of sectorviz's own, in the temporary folder, that includes
the kernel's source and, when the pattern names an instantiation (`matmulTiled<16, float>`),
takes that instantiation's address so that nvcc emits it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..model.files import lies_in, read_text
from .bounded import COMPILE_MEMORY_BYTES, Finished, run_bounded
from .compile import FUNCTION, MAX_PTX_BYTES, UNIT_NAME, Compile, CompileFailed
from .compiler import search_list, toolkit_folders
from .diagnostics import compile_error, outside_root
from .hostcode import STANDINS


class NvccCompile(Compile):
    """One compile with nvcc."""

    def route(self, text: str, left_out: bool) -> dict:
        """Compile `text` standing for the main source -> the cache entry."""
        unit = self._unit(text, left_out)
        includes = [f"-I{folder}" for folder in (self.source.folder or self.base_dir,)
                    if left_out or self.source.path is None] + [f"-I{STANDINS}"]
        flags = [*self.flags, *includes]
        done = self._nvcc(["-M", "-Xcompiler", "-v", *flags, str(unit)])
        files = self._root_files(done.stdout)
        if self.source.path is not None and str(self.source.path) not in files:
            files.insert(0, str(self.source.path))
        self.check_has_include(files)
        out = self.tmp / "kernel.ptx"
        self._nvcc(["-ptx", *flags, str(unit), "-o", str(out)])
        return self.entry(read_text(out, "kernel", limit=MAX_PTX_BYTES), text, files,
                          left_out)

    def _unit(self, text: str, left_out: bool) -> Path:
        """The compiled file: an #include of the main source (or of its text written here,
        named as the PTX should name it), then the named instantiation's address."""
        main = self.source.path
        if left_out or main is None:
            main = self.tmp / "main.cu"
            main.write_text(f"#line 1 \"{Path(self.source.name).as_posix()}\"\n{text}",
                            encoding="utf-8")
        lines = [f"#include \"{main.as_posix()}\""]
        found = FUNCTION.fullmatch(self.function)
        if found.group("args") is not None:
            lines.append(f"static void *const __sectorviz_instance __attribute__((unused)) = "
                         f"(void *)&{found.group('name')}<{found.group('args')}>;")
        unit = self.tmp / UNIT_NAME
        unit.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return unit

    def _nvcc(self, args: list[str]) -> Finished:
        done = run_bounded([self.toolchain.path, *args], "kernel", "the compile",
                           cwd=str(self.tmp))
        if "-M" in args:
            self.header_folders = (*search_list(done.stderr),
                                   *toolkit_folders(self.toolchain.path), str(STANDINS))
        if done.returncode != 0:
            err = compile_error(done.stderr, done.returncode, self.place_of,
                                self.line_text, COMPILE_MEMORY_BYTES)
            raise CompileFailed(err.place, err.message, err.column)
        return done

    def _root_files(self, depends: str) -> list[str]:
        """`nvcc -M` output -> the real paths of the files of the root it lists (the main
        source first); PatternError naming the first file outside the root and the
        compiler's headers."""
        files = []
        for dep in _dependencies(depends):
            real = os.path.realpath(self.tmp / dep)
            if lies_in(real, self.tmp):  # the unit, the device view or the inline code
                continue
            if self.roots.allows(real):
                if real not in files:
                    files.append(real)
            elif not self.compiler_header(real):
                raise outside_root(dep)
        return files


def _dependencies(depends: str) -> list[str]:
    """Make-style `target : dep dep \\` lines -> the dependency paths (escaped spaces kept)."""
    body = depends.replace("\\\n", " ")
    _, _, deps = body.partition(": ")
    words = re.findall(r"(?:\\ |[^\s])+", deps)
    return [w.replace("\\ ", " ") for w in words]
