"""PTX opcode -> the function that runs it on the machine."""

from __future__ import annotations

from .lanes_ops import activemask, barrier, call, match, mbarrier, redux, shfl, vote
from .matrix_ops import ldmatrix, mma, stmatrix, wmma
from .memory_ops import atom, cp_async, load, store
from .scalar_ops import (
                         arith,
                         bfe_bfi,
                         convert,
                         cvta,
                         funnel_shift,
                         isspacep,
                         lop3,
                         mov,
                         prmt,
                         selp,
                         setp,
                         testp,
                         unary_bits,
)

ARITHMETIC = ("add", "sub", "mul", "mul24", "mad", "mad24", "fma", "div", "rem", "min", "max",
              "shl", "shr", "and", "or", "xor", "not", "cnot", "neg", "abs", "sqrt", "rsqrt",
              "rcp", "sin", "cos", "lg2", "ex2", "tanh", "copysign", "sad")
HANDLERS = {op: arith for op in ARITHMETIC} | {
    "popc": unary_bits, "clz": unary_bits, "brev": unary_bits, "bfind": unary_bits,
    "bfe": bfe_bfi, "bfi": bfe_bfi, "prmt": prmt, "lop3": lop3, "setp": setp, "set": setp,
    "selp": selp, "slct": selp, "mov": mov, "cvt": convert, "cvta": cvta,
    "isspacep": isspacep, "ld": load, "ldu": load, "st": store, "atom": atom, "red": atom,
    "cp": cp_async, "shfl": shfl, "vote": vote, "match": match, "activemask": activemask,
    "redux": redux, "bar": barrier, "barrier": barrier, "call": call, "testp": testp,
    "shf": funnel_shift, "mbarrier": mbarrier, "ldmatrix": ldmatrix, "stmatrix": stmatrix,
    "mma": mma, "wmma": wmma}
