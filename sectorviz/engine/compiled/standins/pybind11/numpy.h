// sectorviz: a stand-in for pybind11/numpy.h (PyTorch or pybind11 not installed here); its body is
// sectorviz_torch.h. A real one (in the pattern's root or an --include-dir) wins.
#pragma once
#include "../sectorviz_torch.h"
