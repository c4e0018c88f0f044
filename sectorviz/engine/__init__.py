"""The one CUDA machine: the compile step (compiled/: nvcc, NVRTC, Triton, Numba, a .ptx
file; the PTX cache; the SASS), the PTX engine with its closed forms (ptx/,
closed_forms.py) and the readings of a kernel pattern (readings.py: "compiled" at -O3,
"source" as written at -G), registered with the model's kernel_for."""
