// sectorviz: a stand-in for the CUDA samples' host helper header helper_cuda.h (Common/ of
// NVIDIA's cuda-samples), for sample files compiled without it: declarations of what host code
// calls (never defined: host code is compiled, never linked or run). A real one wins.
#pragma once
#include <cuda_runtime.h>
#include "helper_string.h"
// what the real one brings with it (NVRTC: its stand-ins, nvrtc/)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define checkCudaErrors(val) check((val), #val, __FILE__, __LINE__)
#define getLastCudaError(msg) __getLastCudaError(msg, __FILE__, __LINE__)
#define printLastCudaError(msg) __printLastCudaError(msg, __FILE__, __LINE__)
#ifndef MAX
#define MAX(a, b) (a > b ? a : b)
#endif
#ifndef MIN
#define MIN(a, b) (a < b ? a : b)
#endif

template <class T> SECTORVIZ_API void check(T result, const char *func, const char *file, int line);
SECTORVIZ_API void __getLastCudaError(const char *message, const char *file, int line);
SECTORVIZ_API void __printLastCudaError(const char *message, const char *file, int line);
template <class T> SECTORVIZ_API const char *_cudaGetErrorEnum(T error);
template <class... A> SECTORVIZ_API int findCudaDevice(A &&...);
template <class... A> SECTORVIZ_API int findIntegratedGPU(A &&...);
SECTORVIZ_API int gpuDeviceInit(int device);
SECTORVIZ_API int gpuGetMaxGflopsDeviceId();
SECTORVIZ_API int _ConvertSMVer2Cores(int major, int minor);
SECTORVIZ_API const char *_ConvertSMVer2ArchName(int major, int minor);
SECTORVIZ_API bool checkCudaCapabilities(int major, int minor);
inline SECTORVIZ_API int ftoi(float value) { return (int)value; }
