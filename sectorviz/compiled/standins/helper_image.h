// sectorviz: a stand-in for the CUDA samples' host helper header helper_image.h (image files and
// comparisons): declarations of what host code calls (never defined: host code is compiled,
// never linked or run; each takes any arguments). A real one wins.
#pragma once
#include "helper_string.h"

template <class... A> SECTORVIZ_API bool sdkLoadPGM(A &&...);
template <class... A> SECTORVIZ_API bool sdkSavePGM(A &&...);
template <class... A> SECTORVIZ_API bool sdkLoadPPM4ub(A &&...);
template <class... A> SECTORVIZ_API bool sdkSavePPM4ub(A &&...);
template <class... A> SECTORVIZ_API bool sdkComparePGM(A &&...);
template <class... A> SECTORVIZ_API bool sdkComparePPM(A &&...);
template <class... A> SECTORVIZ_API bool sdkCompareL2fe(A &&...);
template <class... A> SECTORVIZ_API bool sdkCompareBin2BinFloat(A &&...);
template <class... A> SECTORVIZ_API bool sdkCompareBin2BinUint(A &&...);
template <class... A> SECTORVIZ_API bool sdkDumpBin2(A &&...);
template <class... A> SECTORVIZ_API bool sdkReadFile(A &&...);
template <class... A> SECTORVIZ_API bool sdkWriteFile(A &&...);
template <class... A> SECTORVIZ_API bool compareData(A &&...);
template <class... A> SECTORVIZ_API bool compareDataAsFloatThreshold(A &&...);
