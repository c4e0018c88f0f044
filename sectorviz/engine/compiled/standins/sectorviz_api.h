// sectorviz: SECTORVIZ_API, how the stand-ins declare host functions. NVRTC takes no function
// without __host__ or __device__, even one only declared: there they are __host__ __device__
// (declared, never defined, never called: what NVRTC names a host function in the kernel's
// file is left out). nvcc compiles host code and takes them as they are.
#pragma once
#ifdef __CUDACC_RTC__
#define SECTORVIZ_API __host__ __device__
#else
#define SECTORVIZ_API
#endif
