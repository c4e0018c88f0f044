// sectorviz: an empty stand-in for the host-only header <stdlib.h>, which NVRTC does not have (only
// device code is compiled; what device code uses of it is built into NVRTC).
#pragma once
