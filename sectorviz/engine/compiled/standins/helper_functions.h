// sectorviz: a stand-in for the CUDA samples' host helper header helper_functions.h, which
// gathers the string, timer and image helpers (see those stand-ins). A real one wins.
#pragma once
#include "helper_string.h"
#include "helper_timer.h"
#include "helper_image.h"
