// sectorviz: <limits.h> for NVRTC: see <climits>.
#pragma once
#include <climits>
