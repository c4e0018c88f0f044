// sectorviz: a stand-in for cuBLAS's host header cublas_v2.h, for files that include it where the
// library is not installed: host code that keeps a handle, checks a status or calls the common
// entry points still compiles (declarations only: sectorviz compiles device code to PTX and never
// links or runs host code; the names are those of the cuBLAS API, the values stand-ins). A real
// cublas_v2.h (the toolkit's, or one in the pattern's root) wins: this folder is searched last.
#pragma once
#include "sectorviz_api.h"
#include <cuda_runtime.h>
#include <library_types.h>
// as the real cublas_api.h: code that includes only cuBLAS gets half and bfloat16 too
#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef enum {
    CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_MAPPING_ERROR = 11, CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14, CUBLAS_STATUS_NOT_SUPPORTED = 15,
    CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;
typedef enum { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1 } cublasFillMode_t;
typedef enum { CUBLAS_DIAG_NON_UNIT = 0, CUBLAS_DIAG_UNIT = 1 } cublasDiagType_t;
typedef enum { CUBLAS_SIDE_LEFT = 0, CUBLAS_SIDE_RIGHT = 1 } cublasSideMode_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;
typedef enum {
    CUBLAS_DEFAULT_MATH = 0, CUBLAS_TENSOR_OP_MATH = 1, CUBLAS_PEDANTIC_MATH = 2,
    CUBLAS_TF32_TENSOR_OP_MATH = 3
} cublasMath_t;
typedef enum {
    CUBLAS_COMPUTE_16F = 64, CUBLAS_COMPUTE_16F_PEDANTIC = 65, CUBLAS_COMPUTE_32F = 68,
    CUBLAS_COMPUTE_32F_PEDANTIC = 69, CUBLAS_COMPUTE_32F_FAST_16F = 74,
    CUBLAS_COMPUTE_32F_FAST_16BF = 75, CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    CUBLAS_COMPUTE_64F = 70, CUBLAS_COMPUTE_64F_PEDANTIC = 71, CUBLAS_COMPUTE_32I = 72,
    CUBLAS_COMPUTE_32I_PEDANTIC = 73
} cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1, CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99 } cublasGemmAlgo_t;

struct cublasContext;
typedef struct cublasContext *cublasHandle_t;

SECTORVIZ_API cublasStatus_t cublasCreate(cublasHandle_t *handle);
SECTORVIZ_API cublasStatus_t cublasDestroy(cublasHandle_t handle);
SECTORVIZ_API cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
SECTORVIZ_API cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
SECTORVIZ_API cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode);
SECTORVIZ_API cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void *workspace, size_t bytes);
SECTORVIZ_API const char *cublasGetStatusName(cublasStatus_t status);
SECTORVIZ_API const char *cublasGetStatusString(cublasStatus_t status);
SECTORVIZ_API cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const float *alpha,
                           const float *A, int lda, const float *B, int ldb, const float *beta,
                           float *C, int ldc);
SECTORVIZ_API cublasStatus_t cublasDgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const double *alpha,
                           const double *A, int lda, const double *B, int ldb,
                           const double *beta, double *C, int ldc);
SECTORVIZ_API cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float *alpha, const float *A, int lda,
                                         long long strideA, const float *B, int ldb,
                                         long long strideB, const float *beta, float *C, int ldc,
                                         long long strideC, int batchCount);
SECTORVIZ_API cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void *alpha,
                            const void *A, cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta, void *C,
                            cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                            cublasGemmAlgo_t algo);
SECTORVIZ_API cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void *alpha, const void *A, cudaDataType Atype,
                                          int lda, long long strideA, const void *B,
                                          cudaDataType Btype, int ldb, long long strideB,
                                          const void *beta, void *C, cudaDataType Ctype, int ldc,
                                          long long strideC, int batchCount,
                                          cublasComputeType_t computeType,
                                          cublasGemmAlgo_t algo);
SECTORVIZ_API cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const __half *alpha,
                           const __half *A, int lda, const __half *B, int ldb,
                           const __half *beta, __half *C, int ldc);
SECTORVIZ_API cublasStatus_t cublasHgemmStridedBatched(cublasHandle_t handle,
                           cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                           int k, const __half *alpha, const __half *A, int lda,
                           long long int strideA, const __half *B, int ldb,
                           long long int strideB, const __half *beta, __half *C, int ldc,
                           long long int strideC, int batchCount);
SECTORVIZ_API cublasStatus_t cublasSgemv(cublasHandle_t handle, cublasOperation_t trans, int m,
                           int n, const float *alpha, const float *A, int lda, const float *x,
                           int incx, const float *beta, float *y, int incy);
SECTORVIZ_API cublasStatus_t cublasDgemv(cublasHandle_t handle, cublasOperation_t trans, int m,
                           int n, const double *alpha, const double *A, int lda,
                           const double *x, int incx, const double *beta, double *y, int incy);
SECTORVIZ_API cublasStatus_t cublasSaxpy(cublasHandle_t handle, int n, const float *alpha, const float *x,
                           int incx, float *y, int incy);
SECTORVIZ_API cublasStatus_t cublasSdot(cublasHandle_t handle, int n, const float *x, int incx,
                          const float *y, int incy, float *result);
SECTORVIZ_API cublasStatus_t cublasSnrm2(cublasHandle_t handle, int n, const float *x, int incx,
                           float *result);
SECTORVIZ_API cublasStatus_t cublasSscal(cublasHandle_t handle, int n, const float *alpha, float *x, int incx);
