"""The compiled front end's compile step: a pattern's CUDA kernel -> the PTX nvcc emits for it
(compile.compile_kernel), bounded in time and memory, cached by content, reading nothing
outside the pattern's root. The PTX engine (sectorviz.engine.ptx) executes what this returns."""
