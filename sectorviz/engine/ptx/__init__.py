"""The PTX engine: the PTX a compiler emitted for a kernel (`parse`), run SIMT-style over
chunks of whole blocks (`execute`, with the instruction modules `scalar_ops`, `lanes_ops`,
`memory_ops`, `matrix_ops`), behind the front-end kernel of a compiled pattern
(`kernel.CompiledKernel`); its local events are counted by model.local_stats. Closed forms
(`closed`, with `closed_ops`, `closed_memory`, `symbolic`, `loops`, `compress`) count
whole loop runs and classes of warps at once where registers are affine in the lane, warp,
block and loop counters.

What it runs: integer arithmetic with C wrap-around (add, sub, mul.lo / .hi / .wide, mad,
mul24, mad24, sad, div and rem truncating as C does, min, max, abs, neg, .sat), shifts and
funnel shifts, bit operations (and, or, xor, not, cnot, lop3, popc, clz, brev, bfind, bfe,
bfi, prmt), setp / set with every comparison and and / or / xor combine (f16x2 / bf16x2 half
by half), selp, slct; f32 computed in float32, f64, f16, bf16 and packed f16x2 / bf16x2
(add, sub, mul, fma, min, max, neg, abs), div, rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh,
copysign, testp; cvt between every integer and float type with its rounding and saturation,
cvt.pack of two f32 into f16x2 / bf16x2; mov of registers, literals, variables' addresses,
special registers (%tid, %ntid, %ctaid, %nctaid, %laneid, %warpid, %nwarpid, %lanemask_*,
%dynamic_smem_size, and the %cluster_* ones of a kernel that declares its cluster shape; the
others, which the GPU or the launch sets, are unknown values), WARP_SZ and vector packing;
ld / ldu / st in every state space (global, shared, local, const, param, generic through
cvta windows) and width (.v2, .v4, .nc, cache hints), atom / red (add, min, max, and, or,
xor, exch, cas, inc, dec; an atom whose result no instruction reads counts as "red"),
cp.async (its global read, of the lanes whose src-size is above 0, and its shared write)
with its commits and waits, ldmatrix / stmatrix .m8n8 .b16, mma.sync (no access; its results
are data, unknown values), wmma.load / wmma.store (counted as the tile they move, 16 bytes a
lane line after line: NVIDIA leaves the lane mapping unspecified) and wmma.mma, mbarrier,
shfl.sync, vote.sync, match.sync, activemask, redux.sync, bar / barrier (sync, arrive,
red.popc / and / or), fences and prefetches (no-ops), local stack frames (%SP, %SPL,
__local_depot), calls of the module's `.func`
bodies (inlined where they are made, `calls`: `__noinline__` functions, a -G compile's), and
calls to vprintf and __assertfail (no-ops).

What it refuses, in one line naming the source line and the PTX text: textures and surfaces,
wmma shapes and types it does not lay out, wgmma, bulk copies (TMA), tensor memory, indirect
branches, calls of functions the PTX does not define or through pointers, calls nested
deeper than calls.MAX_CALL_DEPTH (recursion), carry arithmetic (.cc), and any other instruction.
"""
