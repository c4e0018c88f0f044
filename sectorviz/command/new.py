"""`sectorviz new KERNEL.cu [--kernel NAME] [-o FILE]`: the starting pattern of each launched
kernel of a .cu (each template instantiation: host/starter.py), written beside it as
KERNEL-FUNCTION.sectorviz.json (or to FILE, for one kernel, naming the .cu relative to
FILE's folder); prints the paths written. A
pattern already beside the .cu is left alone: exit 2 naming it, nothing written."""

from __future__ import annotations

import argparse
import errno
import os
from pathlib import Path

from ..atomic import RefusedOutput, write_atomic
from ..exits import fail
from ..host.starter import chosen, pattern_path, pattern_text
from ..model import PatternError
from .flags import OneLineParser, add_include_flag, pattern_error_line


def new_parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="sectorviz new",
                      description="Write starting patterns for the kernels a .cu launches.")
    p.add_argument("file", help="a .cu file")
    p.add_argument("--kernel", metavar="NAME",
                   help="only this kernel (its name, or an instantiation: 'offset<float>')")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the one kernel's pattern here (default: beside the .cu)")
    add_include_flag(p)
    return p


def run_new(argv: list[str]) -> int:
    args = new_parser().parse_args(argv)
    cu, include_dirs = Path(args.file), tuple(args.include_dir)
    try:
        starters = chosen(cu, include_dirs, args.kernel, one=args.output is not None)
    except PatternError as err:
        return fail(pattern_error_line(args.file, err))
    targets = [Path(args.output) if args.output else pattern_path(cu, s.function)
               for s in starters]
    for path in targets:
        if args.output is None and path.exists():
            raise RefusedOutput(errno.EEXIST, "exists; sectorviz new does not overwrite a "
                                              "pattern (remove it, or give -o FILE)", str(path))
    for path, starter in zip(targets, starters):
        try:
            doc = starter.document(cu, include_dirs)
        except PatternError as err:
            return fail(pattern_error_line(args.file, err))
        source = os.path.relpath(cu.resolve(), path.resolve().parent)
        write_atomic(path, pattern_text({**doc, "kernel": {**doc["kernel"], "source": source}}))
        print(path)
    return 0
