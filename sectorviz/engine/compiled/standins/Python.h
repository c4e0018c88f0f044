// sectorviz: a stand-in for Python.h (Python's C API not installed here), for PyTorch extension
// files that include it; their bindings use pybind11 (sectorviz_torch.h). A real one wins.
#pragma once
#include "sectorviz_torch.h"
