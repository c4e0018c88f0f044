"""Host code, decided by the compiler: a .cu file is compiled whole, host code included.

nvcc compiles host code, so what it cannot find here is declared by the stand-ins of the folder
STANDINS, searched after every other folder (a real header wins): PyTorch's and pybind11's
headers (`torch/extension.h`, `ATen/...`, `c10/...`, `pybind11/...`: sectorviz_torch.h),
cuBLAS, cuBLASLt and cuRAND (`cublas_v2.h`, ...), the CUDA samples' helper headers
(`helper_cuda.h`, ...); REMOVED_APIS, included first, declares the runtime calls CUDA 13
removed (`cudaThreadSynchronize`), so that host code written for an older toolkit does not
stop a kernel.

NVRTC compiles no host function and no host variable ("... are not allowed in JIT mode"), and
names each it meets. `host_items_left_out` blanks, in the main source, the file-level item at
each line it names (a function, a template, a variable, a macro call that writes one,
`PYBIND11_MODULE(...) {...}`),
keeping every line and column, and the file is compiled again: the compiler says what is host
code, tree-sitter only finds where the item it names begins and ends.
"""

from __future__ import annotations

import re
from pathlib import Path

import tree_sitter
import tree_sitter_cuda
from tree_sitter import Node

STANDINS = Path(__file__).resolve().parent / "standins"
REMOVED_APIS = STANDINS / "sectorviz_removed_apis.h"
_HOST_ITEM = re.compile(r"^(?P<file>.+?)\((?P<line>\d+)\): error: A (function without execution "
                        r"space|namespace scope variable without memory space) annotations",
                        re.M)
_CONTAINERS = {"translation_unit", "declaration_list", "preproc_if", "preproc_ifdef",
               "preproc_else", "preproc_elif", "preproc_elifdef"}
_BODIED = {"namespace_definition", "linkage_specification"}  # containers through their body
_ITEMS = {"function_definition", "template_declaration", "linkage_specification", "declaration"}


def host_item_lines(log: str, name: str) -> set[int]:
    """The lines of the file NVRTC calls `name` where its `log` says a host function or a
    host variable is."""
    return {int(m.group("line")) for m in _HOST_ITEM.finditer(log)
            if m.group("file") == name}


def host_items_left_out(text: str, lines: set[int]) -> str:
    """`text` with the file-level item at each of `lines` (1-based) blanked, every other
    character and every line break kept."""
    data = text.encode("utf-8")
    root = tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language())).parse(data)
    out = bytearray(data)
    for line in lines:
        span = _item_at(root.root_node, line - 1)
        if span is not None:
            out[span[0]:span[1]] = re.sub(rb"[^\n]", b" ", data[span[0]:span[1]])
    return out.decode("utf-8")


def _item_at(node: Node, row: int) -> tuple[int, int] | None:
    """(start, end byte) of the innermost file-level item (under namespaces, `extern "C"
    {...}` and `#if`s) whose lines hold the 0-based `row`: a whole function or declaration,
    or, where tree-sitter reads a macro call as pieces (`BIND(f32, float)`, `MODULE(m) {
    BIND(f) }`), the pieces from the first one on that row until their brackets close."""
    children = node.children
    for i, child in enumerate(children):
        end_row, end_column = child.end_point
        if not child.start_point[0] <= row <= end_row - (end_column == 0):  # `#include`s end
            continue  # at the next line's start
        body = child.child_by_field_name("body") if child.type in _BODIED else None
        if body is not None and body.type == "declaration_list":
            return _item_at(body, row)
        if child.type in _CONTAINERS:
            return _item_at(child, row)
        if child.type in _ITEMS and not child.has_error:
            return child.start_byte, child.end_byte
        depth, last = 0, child
        for piece in children[i:]:
            if piece.start_point[0] > row and depth <= 0:
                break
            depth, last = depth + _brackets(piece), piece
        return child.start_byte, last.end_byte
    return None


def _brackets(node: Node) -> int:
    """Brackets a node opens less those it closes."""
    if node.child_count == 0:
        return (node.type in ("(", "{", "[")) - (node.type in (")", "}", "]"))
    return sum(_brackets(child) for child in node.children)
