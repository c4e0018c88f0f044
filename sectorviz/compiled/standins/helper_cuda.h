// sectorviz: an empty stand-in for the CUDA samples' host helper header helper_cuda.h (host code is
// left out of the device view, so nothing of it is needed); a real one in the pattern's root wins.
#pragma once
