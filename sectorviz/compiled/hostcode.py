"""Host code left out: a .cu file's device view, for files whose host code does not compile
here (a PyTorch extension without torch installed, a `helper_cuda.h` that is not there).

The view keeps every line where it was (line numbers and columns of the device code are
unchanged) and blanks, in the main file only: host functions (a definition without
`__global__` or `__device__`, `main`, `PYBIND11_MODULE(...) {...}` and the like; `constexpr`
functions stay, device code may use them), `#include`s of host-only libraries (torch, ATen,
c10, pybind11, Python.h), and namespace aliases and using-directives naming them. The folder
STANDINS holds empty stand-ins for the CUDA samples' host helper headers (`helper_cuda.h`)
and stand-ins declaring the host API of cuBLAS, cuBLASLt and cuRAND (`cublas_v2.h`,
`cublasLt.h`, `curand.h`: types, status values, the common calls; host code that keeps a
handle or checks a status compiles, even in an included header, which the view does not
blank), searched after every other folder, so a real one wins.
"""

from __future__ import annotations

import re
from pathlib import Path

from tree_sitter import Node

STANDINS = Path(__file__).resolve().parent / "standins"
HOST_LIBRARIES = re.compile(r"(torch|ATen|c10|pybind11|caffe2)/|Python\.h$|pybind11\.h$")
HOST_NAMESPACES = re.compile(r"\b(torch|at|c10|py|pybind11)\b")
_DEVICE = re.compile(rb"\b(__global__|__device__|constexpr)\b")
_CONTAINERS = {"namespace_definition", "linkage_specification", "declaration_list",
               "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "translation_unit"}


def device_view(text: str) -> str:
    """The device view of a .cu file's text (see the module notes); the text itself when it
    has no host code to leave out."""
    from ..cuda.source import parser
    data = text.encode("utf-8")
    spans = list(_host_spans(parser().parse(data).root_node))
    if not spans:
        return text
    out = bytearray(data)
    for start, end in spans:
        out[start:end] = re.sub(rb"[^\n]", b" ", data[start:end])
    return out.decode("utf-8")


def _host_spans(node: Node):
    """(start byte, end byte) of each host-only part directly under a file-level container."""
    for child in node.named_children:
        if _is_host_function(_linked(child)):  # `extern "C" void f() {...}` goes whole
            yield child.start_byte, child.end_byte
        elif child.type in _CONTAINERS:
            yield from _host_spans(child)
        elif _is_host_function(child) or _is_host_include(child) or _names_host_library(child):
            yield child.start_byte, child.end_byte


def _linked(node: Node) -> Node:
    """The function an `extern "C"` linkage specification declares alone, else the node."""
    body = node.child_by_field_name("body") if node.type == "linkage_specification" else None
    return body if body is not None and _function(body) is not None else node


def _function(node: Node) -> Node | None:
    """A function definition, or the one a template declaration declares."""
    if node.type == "template_declaration":
        return next((c for c in node.named_children if c.type == "function_definition"), None)
    return node if node.type == "function_definition" else None


def _is_host_function(node: Node) -> bool:
    """A function definition whose specifiers say neither __global__, __device__ nor
    constexpr (so the device code can neither launch nor call it)."""
    fn = _function(node)
    if fn is None or fn.has_error:
        return False
    body = fn.child_by_field_name("body")
    head = fn.text[:body.start_byte - fn.start_byte] if body is not None else fn.text
    return not _DEVICE.search(head)


def _is_host_include(node: Node) -> bool:
    if node.type != "preproc_include":
        return False
    path = node.child_by_field_name("path")
    return path is not None and bool(HOST_LIBRARIES.search(path.text.decode("utf-8",
                                                                          "replace")[1:-1]))


def _names_host_library(node: Node) -> bool:
    """`namespace py = pybind11;`, `using namespace torch;`, `using torch::Tensor;`."""
    if node.type not in ("namespace_alias_definition", "using_declaration"):
        return False
    return bool(HOST_NAMESPACES.search(node.text.decode("utf-8", "replace")))
