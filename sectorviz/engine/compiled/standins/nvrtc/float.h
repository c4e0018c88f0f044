// sectorviz: <float.h> for NVRTC: see <cfloat>.
#pragma once
#include <cfloat>
