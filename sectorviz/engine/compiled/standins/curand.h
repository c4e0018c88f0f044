// sectorviz: a stand-in for cuRAND's host API header curand.h, for files that include it where the
// library is not installed (declarations only: host code is never linked or run; the names are
// those of the cuRAND host API, the values stand-ins). The device API (curand_kernel.h) is device
// code and has no stand-in. A real curand.h wins: this folder is searched last.
#pragma once
#include "sectorviz_api.h"
#include <cuda_runtime.h>

typedef enum {
    CURAND_STATUS_SUCCESS = 0, CURAND_STATUS_VERSION_MISMATCH = 100,
    CURAND_STATUS_NOT_INITIALIZED = 101, CURAND_STATUS_ALLOCATION_FAILED = 102,
    CURAND_STATUS_TYPE_ERROR = 103, CURAND_STATUS_OUT_OF_RANGE = 104,
    CURAND_STATUS_LENGTH_NOT_MULTIPLE = 105, CURAND_STATUS_LAUNCH_FAILURE = 201,
    CURAND_STATUS_INTERNAL_ERROR = 999
} curandStatus_t;
typedef enum {
    CURAND_RNG_PSEUDO_DEFAULT = 100, CURAND_RNG_PSEUDO_XORWOW = 101,
    CURAND_RNG_PSEUDO_MRG32K3A = 121, CURAND_RNG_PSEUDO_MTGP32 = 141,
    CURAND_RNG_PSEUDO_MT19937 = 142, CURAND_RNG_PSEUDO_PHILOX4_32_10 = 161,
    CURAND_RNG_QUASI_DEFAULT = 200, CURAND_RNG_QUASI_SOBOL32 = 201
} curandRngType_t;
struct curandGenerator_st;
typedef struct curandGenerator_st *curandGenerator_t;

SECTORVIZ_API curandStatus_t curandCreateGenerator(curandGenerator_t *generator, curandRngType_t rng_type);
SECTORVIZ_API curandStatus_t curandCreateGeneratorHost(curandGenerator_t *generator,
                                         curandRngType_t rng_type);
SECTORVIZ_API curandStatus_t curandDestroyGenerator(curandGenerator_t generator);
SECTORVIZ_API curandStatus_t curandSetStream(curandGenerator_t generator, cudaStream_t stream);
SECTORVIZ_API curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator,
                                                  unsigned long long seed);
SECTORVIZ_API curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t generator,
                                                       unsigned int num_dimensions);
SECTORVIZ_API curandStatus_t curandGenerate(curandGenerator_t generator, unsigned int *output, size_t n);
SECTORVIZ_API curandStatus_t curandGenerateUniform(curandGenerator_t generator, float *output, size_t n);
SECTORVIZ_API curandStatus_t curandGenerateUniformDouble(curandGenerator_t generator, double *output,
                                           size_t n);
SECTORVIZ_API curandStatus_t curandGenerateNormal(curandGenerator_t generator, float *output, size_t n,
                                    float mean, float stddev);
