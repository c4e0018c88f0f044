// sectorviz: declarations of CUDA runtime calls that CUDA 13 removed, included before every file
// nvcc compiles, so that host code written for an older toolkit (`cudaThreadSynchronize()` in a
// host macro) does not stop its kernels from compiling. Declarations only: sectorviz never
// links or runs host code. The signatures are those of CUDA 12's cuda_runtime_api.h.
#pragma once
#include <cuda_runtime_api.h>
#if defined(CUDART_VERSION) && CUDART_VERSION >= 13000
extern __host__ cudaError_t CUDARTAPI cudaThreadSynchronize(void);
extern __host__ cudaError_t CUDARTAPI cudaThreadExit(void);
extern __host__ cudaError_t CUDARTAPI cudaThreadSetLimit(enum cudaLimit limit, size_t value);
extern __host__ cudaError_t CUDARTAPI cudaThreadGetLimit(size_t *pValue, enum cudaLimit limit);
extern __host__ cudaError_t CUDARTAPI cudaThreadGetCacheConfig(enum cudaFuncCache *pCacheConfig);
extern __host__ cudaError_t CUDARTAPI cudaThreadSetCacheConfig(enum cudaFuncCache cacheConfig);
#endif
