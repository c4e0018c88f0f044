"""`python -m sectorviz.engine.compiled.nvrtc_child`: one NVRTC compile, or one nvJitLink assembly
of PTX into a cubin (where there is no ptxas), in a process of its own (so that it is bounded
like nvcc: bounded.run_bounded).

Standard input: JSON {"library": path of libnvrtc, "source": text, "name": the program's
file name, "options": [...], "names": [name expressions, e.g. "matmulTiled<16, float>"]}.
Standard output: JSON {"ok": bool, "log": the compiler's log, "ptx": text or "", "lowered":
{name expression: mangled entry name}}.
An assembly: {"assemble": true, "library": path of libnvJitLink, "ptx": text, "options":
[...], "cubin": the file to write} -> {"ok": bool, "log": nvJitLink's error log}.
"""

from __future__ import annotations

import ctypes
import json
import sys


def _text(nvrtc, prog, size_fn: str, get_fn: str) -> str:
    """A program's log or PTX through NVRTC's size / get pair."""
    size = ctypes.c_size_t()
    getattr(nvrtc, size_fn)(prog, ctypes.byref(size))
    out = ctypes.create_string_buffer(size.value)
    getattr(nvrtc, get_fn)(prog, out)
    return out.value.decode("utf-8", "replace")


def compile_request(request: dict) -> dict:
    """A compile request -> its result (see the module notes)."""
    nvrtc = ctypes.CDLL(request["library"])
    prog = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(prog), request["source"].encode("utf-8"),
                                request["name"].encode("utf-8"), 0, None, None) != 0:
        return {"ok": False, "log": "NVRTC could not create the program", "ptx": "",
                "lowered": {}}
    names = [n.encode("utf-8") for n in request["names"]]
    for name in names:
        nvrtc.nvrtcAddNameExpression(prog, name)
    options = [o.encode("utf-8") for o in request["options"]]
    status = nvrtc.nvrtcCompileProgram(prog, len(options),
                                       (ctypes.c_char_p * len(options))(*options))
    result = {"ok": status == 0, "log": _text(nvrtc, prog, "nvrtcGetProgramLogSize",
                                              "nvrtcGetProgramLog"), "ptx": "", "lowered": {}}
    if status == 0:
        result["ptx"] = _text(nvrtc, prog, "nvrtcGetPTXSize", "nvrtcGetPTX")
        for name in names:
            lowered = ctypes.c_char_p()
            if nvrtc.nvrtcGetLoweredName(prog, name, ctypes.byref(lowered)) == 0:
                result["lowered"][name.decode("utf-8")] = lowered.value.decode("utf-8")
    nvrtc.nvrtcDestroyProgram(ctypes.byref(prog))
    return result


JITLINK_INPUT_PTX = 2  # nvJitLinkInputType's NVJITLINK_INPUT_PTX


def assemble_request(request: dict) -> dict:
    """An assembly request -> its result (see the module notes); the cubin is written."""
    jitlink = ctypes.CDLL(request["library"])
    major, minor = ctypes.c_uint(), ctypes.c_uint()
    jitlink.nvJitLinkVersion(ctypes.byref(major), ctypes.byref(minor))

    def call(name: str, *args: object) -> int:  # the versioned entry points of this release
        return int(getattr(jitlink, f"__nvJitLink{name}_{major.value}_0")(*args))

    handle = ctypes.c_void_p()
    options = [o.encode("utf-8") for o in request["options"]]
    if call("Create", ctypes.byref(handle), len(options),
            (ctypes.c_char_p * len(options))(*options)) != 0:
        return {"ok": False, "log": "nvJitLink could not start"}
    ptx = request["ptx"].encode("utf-8")
    ok = call("AddData", handle, JITLINK_INPUT_PTX, ptx, len(ptx), b"kernel.ptx") == 0 and \
        call("Complete", handle) == 0
    size = ctypes.c_size_t()
    if ok and call("GetLinkedCubinSize", handle, ctypes.byref(size)) == 0:
        cubin = ctypes.create_string_buffer(size.value)
        ok = call("GetLinkedCubin", handle, cubin) == 0
        if ok:
            with open(request["cubin"], "wb") as out:
                out.write(cubin.raw)
    log_size = ctypes.c_size_t()
    call("GetErrorLogSize", handle, ctypes.byref(log_size))
    log = ctypes.create_string_buffer(log_size.value + 1)
    call("GetErrorLog", handle, log)
    call("Destroy", ctypes.byref(handle))
    return {"ok": ok, "log": log.value.decode("utf-8", "replace")}


def main() -> None:
    """One request on standard input -> its result on standard output."""
    request = json.load(sys.stdin)
    json.dump(assemble_request(request) if request.get("assemble")
              else compile_request(request), sys.stdout)


if __name__ == "__main__":
    main()
