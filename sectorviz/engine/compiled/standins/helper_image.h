// sectorviz: a stand-in for the CUDA samples' host helper header helper_image.h (image files and
// comparisons): declarations of what host code calls (never defined: host code is compiled,
// never linked or run; each takes any arguments, after up to two template arguments, as in
// `sdkWriteFile<float, float>(...)`). A real one wins.
#pragma once
#include "helper_string.h"
// what the real one brings with it (NVRTC: its stand-ins, nvrtc/)
#include <algorithm>
#include <assert.h>
#include <fstream>
#include <iostream>
#include <math.h>
#include <stdint.h>
#include <string>
#include <vector>

template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkLoadPGM(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkSavePGM(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkLoadPPM4ub(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkSavePPM4ub(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkComparePGM(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkComparePPM(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkCompareL2fe(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkCompareBin2BinFloat(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkCompareBin2BinUint(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkDumpBin2(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkReadFile(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool sdkWriteFile(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool compareData(A &&...);
template <class T = void, class S = void, class... A> SECTORVIZ_API bool compareDataAsFloatThreshold(A &&...);
