// sectorviz: a stand-in for the CUDA samples' host helper header helper_string.h (command-line
// and path helpers): declarations of what host code calls (never defined: host code is
// compiled, never linked or run; each takes any arguments). A real one wins.
#pragma once
#include "sectorviz_api.h"
// what the real one brings with it (NVRTC: its stand-ins, nvrtc/)
#include <fstream>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#ifndef EXIT_WAIVED
#define EXIT_WAIVED 2
#endif
#define STRCASECMP strcasecmp
#define STRNCASECMP strncasecmp
#define STRCPY(dst, size, src) strcpy(dst, src)
#define FOPEN(fhandle, filename, mode) (fhandle = fopen(filename, mode))
#define FOPEN_FAIL(result) (result == NULL)
#define SSCANF sscanf
#define SPRINTF sprintf

template <class... A> SECTORVIZ_API bool checkCmdLineFlag(A &&...);
template <class... A> SECTORVIZ_API int getCmdLineArgumentInt(A &&...);
template <class... A> SECTORVIZ_API float getCmdLineArgumentFloat(A &&...);
template <class... A> SECTORVIZ_API bool getCmdLineArgumentString(A &&...);
template <class... A> SECTORVIZ_API bool getCmdLineArgumentValue(A &&...);
template <class... A> SECTORVIZ_API char *sdkFindFilePath(A &&...);
template <class... A> SECTORVIZ_API int stringRemoveDelimiter(A &&...);
template <class... A> SECTORVIZ_API int getFileExtension(A &&...);
