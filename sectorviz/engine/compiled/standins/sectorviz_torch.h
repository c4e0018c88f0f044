// sectorviz: the body of the stand-ins for PyTorch's and pybind11's headers (torch/extension.h,
// torch/types.h, ATen/..., c10/..., pybind11/...), for PyTorch extension files compiled where
// PyTorch is not installed. Declarations only: sectorviz compiles device code to PTX and never
// links or runs host code, so host code needs only to compile. A catch-all torch::Tensor takes
// the usual methods, TORCH_CHECK and the AT_DISPATCH_* macros read as the real ones do (each
// dispatch instantiates its body for the types it names), PYBIND11_MODULE defines a function
// that is never called. As PyTorch does, it brings cuda_fp16.h and cuda_bf16.h, and c10::Half
// and c10::BFloat16 are CUDA's __half and __nv_bfloat16. Functions are declared as
// sectorviz_api.h says, so NVRTC reads them too.
// A real header (in the pattern's root or an --include-dir) wins: this folder is searched last.
#pragma once
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cstdint>

#define TORCH_EXTENSION_NAME sectorviz_extension
#define TORCH_CHECK(cond, ...) ((void)(cond))
#define TORCH_CHECK_EQ(a, b) ((void)((a) == (b)))
#define TORCH_CHECK_NE(a, b) ((void)((a) != (b)))
#define TORCH_INTERNAL_ASSERT(cond, ...) ((void)(cond))
#define AT_ASSERT(cond, ...) ((void)(cond))
#define AT_ASSERTM(cond, ...) ((void)(cond))
#define AT_CUDA_CHECK(call) ((void)(call))
#define C10_CUDA_CHECK(call) ((void)(call))
#define C10_CUDA_KERNEL_LAUNCH_CHECK() ((void)0)
#define C10_HOST_DEVICE __host__ __device__
#define C10_DEVICE __device__
#define C10_HOST __host__
#define C10_UNUSED __attribute__((__unused__))
#define C10_LIKELY(x) (x)
#define C10_UNLIKELY(x) (x)
#define __ubsan_ignore_float_divide_by_zero__

// a dispatch runs its body (a lambda) once per type it names, with scalar_t that type
#define SECTORVIZ_DISPATCH_CASE(T, ...) [&] { using scalar_t = T; return __VA_ARGS__(); }();
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
    [&] { SECTORVIZ_DISPATCH_CASE(double, __VA_ARGS__) \
          return [&] { using scalar_t = float; return __VA_ARGS__(); }(); }()
#define AT_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) \
    [&] { SECTORVIZ_DISPATCH_CASE(double, __VA_ARGS__) \
          SECTORVIZ_DISPATCH_CASE(c10::Half, __VA_ARGS__) \
          return [&] { using scalar_t = float; return __VA_ARGS__(); }(); }()
#define AT_DISPATCH_REDUCED_FLOATING_TYPES(TYPE, NAME, ...) \
    [&] { SECTORVIZ_DISPATCH_CASE(c10::BFloat16, __VA_ARGS__) \
          return [&] { using scalar_t = c10::Half; return __VA_ARGS__(); }(); }()
#define AT_DISPATCH_FLOATING_TYPES_AND(T1, TYPE, NAME, ...) \
    AT_DISPATCH_FLOATING_TYPES_AND2(T1, T1, TYPE, NAME, __VA_ARGS__)
#define AT_DISPATCH_FLOATING_TYPES_AND2(T1, T2, TYPE, NAME, ...) \
    [&] { SECTORVIZ_DISPATCH_CASE(double, __VA_ARGS__) \
          SECTORVIZ_DISPATCH_CASE(c10::Half, __VA_ARGS__) \
          SECTORVIZ_DISPATCH_CASE(c10::BFloat16, __VA_ARGS__) \
          return [&] { using scalar_t = float; return __VA_ARGS__(); }(); }()
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
    [&] { SECTORVIZ_DISPATCH_CASE(double, __VA_ARGS__) \
          SECTORVIZ_DISPATCH_CASE(int, __VA_ARGS__) \
          SECTORVIZ_DISPATCH_CASE(int64_t, __VA_ARGS__) \
          return [&] { using scalar_t = float; return __VA_ARGS__(); }(); }()
#define AT_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
    [&] { SECTORVIZ_DISPATCH_CASE(int64_t, __VA_ARGS__) \
          return [&] { using scalar_t = int; return __VA_ARGS__(); }(); }()

namespace c10 {
using Half = __half;
using BFloat16 = __nv_bfloat16;
enum class ScalarType : signed char {
    Byte, Char, Short, Int, Long, Half, Float, Double, ComplexHalf, ComplexFloat,
    ComplexDouble, Bool, QInt8, QUInt8, QInt32, BFloat16, Float8_e5m2 = 23,
    Float8_e4m3fn = 24, Undefined = 100
};
enum class DeviceType : signed char { CPU = 0, CUDA = 1 };
enum class Layout : signed char { Strided = 0, Sparse = 1 };
enum class MemoryFormat : signed char { Contiguous, Preserve, ChannelsLast };
}  // namespace c10

#include "sectorviz_api.h"

#ifndef __CUDACC_RTC__  // what PyTorch's headers bring with them (NVRTC has no such headers)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>
#endif

namespace c10 {
struct Device {
    SECTORVIZ_API Device(DeviceType type = DeviceType::CUDA, int index = -1);
    template <class... A> SECTORVIZ_API Device(A &&...);
    SECTORVIZ_API DeviceType type() const;
    SECTORVIZ_API int index() const;
    SECTORVIZ_API bool is_cuda() const;
    SECTORVIZ_API bool is_cpu() const;
};
struct IntArrayRef {
    SECTORVIZ_API IntArrayRef();
#ifndef __CUDACC_RTC__
    SECTORVIZ_API IntArrayRef(std::initializer_list<int64_t> values);
    SECTORVIZ_API IntArrayRef(const std::vector<int64_t> &values);
    SECTORVIZ_API std::vector<int64_t> vec() const;
#endif
    SECTORVIZ_API IntArrayRef(int64_t value);
    SECTORVIZ_API int64_t operator[](size_t i) const;
    SECTORVIZ_API size_t size() const;
    SECTORVIZ_API const int64_t *begin() const;
    SECTORVIZ_API const int64_t *end() const;
    SECTORVIZ_API const int64_t *data() const;
};
using ArrayRef = IntArrayRef;
struct Scalar {
    template <class T> SECTORVIZ_API Scalar(T value);
    template <class T> SECTORVIZ_API T to() const;
};
struct TypeMeta {
    SECTORVIZ_API TypeMeta(ScalarType type = ScalarType::Float);
    SECTORVIZ_API ScalarType toScalarType() const;
    SECTORVIZ_API operator ScalarType() const;
    SECTORVIZ_API size_t itemsize() const;
};
struct TensorOptions {
    SECTORVIZ_API TensorOptions();
    template <class T> SECTORVIZ_API TensorOptions(T &&);
    template <class T> SECTORVIZ_API TensorOptions dtype(T &&) const;
    template <class T = float> SECTORVIZ_API TypeMeta dtype() const;
    template <class... A> SECTORVIZ_API TensorOptions device(A &&...) const;
    SECTORVIZ_API Device device() const;
    template <class T> SECTORVIZ_API TensorOptions layout(T &&) const;
    SECTORVIZ_API TensorOptions requires_grad(bool = true) const;
    SECTORVIZ_API TensorOptions pinned_memory(bool = true) const;
    SECTORVIZ_API TensorOptions memory_format(MemoryFormat) const;
};
template <class T, size_t N> struct TensorAccessor {
    SECTORVIZ_API T *data();
    SECTORVIZ_API int64_t size(int64_t) const;
    SECTORVIZ_API T &operator[](int64_t i) const;
};
namespace cuda {
struct CUDAStream {
    SECTORVIZ_API operator cudaStream_t() const;
    SECTORVIZ_API cudaStream_t stream() const;
    SECTORVIZ_API int device_index() const;
    SECTORVIZ_API void synchronize() const;
};
SECTORVIZ_API CUDAStream getCurrentCUDAStream(int device = -1);
SECTORVIZ_API CUDAStream getDefaultCUDAStream(int device = -1);
SECTORVIZ_API CUDAStream getStreamFromPool(bool high_priority = false, int device = -1);
SECTORVIZ_API void setCurrentCUDAStream(CUDAStream stream);
struct CUDAGuard {
    template <class... A> SECTORVIZ_API explicit CUDAGuard(A &&...);
};
using OptionalCUDAGuard = CUDAGuard;
struct CUDAStreamGuard {
    template <class... A> SECTORVIZ_API explicit CUDAStreamGuard(A &&...);
};
}  // namespace cuda
}  // namespace c10

namespace at {
using namespace c10;
// the catch-all tensor: the usual methods, each taking any arguments
class Tensor {
public:
    SECTORVIZ_API Tensor();
    SECTORVIZ_API int64_t size(int64_t dim) const;
    SECTORVIZ_API IntArrayRef sizes() const;
    SECTORVIZ_API IntArrayRef shape() const;
    SECTORVIZ_API int64_t stride(int64_t dim) const;
    SECTORVIZ_API IntArrayRef strides() const;
    SECTORVIZ_API int64_t dim() const;
    SECTORVIZ_API int64_t ndimension() const;
    SECTORVIZ_API int64_t numel() const;
    SECTORVIZ_API size_t nbytes() const;
    SECTORVIZ_API int64_t element_size() const;
    SECTORVIZ_API int64_t storage_offset() const;
    template <class T = void> SECTORVIZ_API T *data_ptr() const;
    template <class T = void> SECTORVIZ_API T *mutable_data_ptr() const;
    template <class T = void> SECTORVIZ_API const T *const_data_ptr() const;
    template <class T = Scalar> SECTORVIZ_API T item() const;
    SECTORVIZ_API ScalarType scalar_type() const;
    SECTORVIZ_API TypeMeta dtype() const;
    SECTORVIZ_API TensorOptions options() const;
    SECTORVIZ_API Device device() const;
    SECTORVIZ_API int get_device() const;
    SECTORVIZ_API bool is_cuda() const;
    SECTORVIZ_API bool is_cpu() const;
    SECTORVIZ_API bool defined() const;
    SECTORVIZ_API bool is_contiguous(MemoryFormat = MemoryFormat::Contiguous) const;
    SECTORVIZ_API bool requires_grad() const;
    template <class T, size_t N, class... A> SECTORVIZ_API TensorAccessor<T, N> accessor() const;
    template <class T, size_t N, class... A> SECTORVIZ_API TensorAccessor<T, N> packed_accessor32() const;
    template <class T, size_t N, class... A> SECTORVIZ_API TensorAccessor<T, N> packed_accessor64() const;
#define SECTORVIZ_TENSOR_METHOD(name) template <class... A> SECTORVIZ_API Tensor name(A &&...) const;
    SECTORVIZ_TENSOR_METHOD(contiguous) SECTORVIZ_TENSOR_METHOD(to)
    SECTORVIZ_TENSOR_METHOD(view) SECTORVIZ_TENSOR_METHOD(reshape)
    SECTORVIZ_TENSOR_METHOD(transpose) SECTORVIZ_TENSOR_METHOD(permute)
    SECTORVIZ_TENSOR_METHOD(t) SECTORVIZ_TENSOR_METHOD(flatten)
    SECTORVIZ_TENSOR_METHOD(squeeze) SECTORVIZ_TENSOR_METHOD(unsqueeze)
    SECTORVIZ_TENSOR_METHOD(expand) SECTORVIZ_TENSOR_METHOD(repeat)
    SECTORVIZ_TENSOR_METHOD(slice) SECTORVIZ_TENSOR_METHOD(narrow)
    SECTORVIZ_TENSOR_METHOD(select) SECTORVIZ_TENSOR_METHOD(index)
    SECTORVIZ_TENSOR_METHOD(index_select) SECTORVIZ_TENSOR_METHOD(index_put_)
    SECTORVIZ_TENSOR_METHOD(clone) SECTORVIZ_TENSOR_METHOD(detach)
    SECTORVIZ_TENSOR_METHOD(copy_) SECTORVIZ_TENSOR_METHOD(zero_)
    SECTORVIZ_TENSOR_METHOD(fill_) SECTORVIZ_TENSOR_METHOD(cpu)
    SECTORVIZ_TENSOR_METHOD(cuda) SECTORVIZ_TENSOR_METHOD(float_)
    SECTORVIZ_TENSOR_METHOD(half) SECTORVIZ_TENSOR_METHOD(bfloat16)
    SECTORVIZ_TENSOR_METHOD(sum) SECTORVIZ_TENSOR_METHOD(mean)
    SECTORVIZ_TENSOR_METHOD(max) SECTORVIZ_TENSOR_METHOD(min)
    SECTORVIZ_TENSOR_METHOD(abs) SECTORVIZ_TENSOR_METHOD(sqrt)
    SECTORVIZ_TENSOR_METHOD(exp) SECTORVIZ_TENSOR_METHOD(sort)
    SECTORVIZ_TENSOR_METHOD(argmax) SECTORVIZ_TENSOR_METHOD(topk)
    SECTORVIZ_TENSOR_METHOD(add) SECTORVIZ_TENSOR_METHOD(sub)
    SECTORVIZ_TENSOR_METHOD(mul) SECTORVIZ_TENSOR_METHOD(div)
    SECTORVIZ_TENSOR_METHOD(matmul) SECTORVIZ_TENSOR_METHOD(type_as)
    SECTORVIZ_TENSOR_METHOD(masked_fill) SECTORVIZ_TENSOR_METHOD(masked_fill_)
    SECTORVIZ_TENSOR_METHOD(resize_) SECTORVIZ_TENSOR_METHOD(set_requires_grad)
#undef SECTORVIZ_TENSOR_METHOD
    template <class T> SECTORVIZ_API Tensor operator[](T &&) const;
    template <class T> SECTORVIZ_API Tensor &operator=(T &&);
#ifndef __CUDACC_RTC__
    template <class... T> operator std::tuple<T...>() const;  // what torch::max(x, 0) gives
#endif
    template <class T> SECTORVIZ_API Tensor &operator+=(T &&);
    template <class T> SECTORVIZ_API Tensor &operator-=(T &&);
    template <class T> SECTORVIZ_API Tensor &operator*=(T &&);
    template <class T> SECTORVIZ_API Tensor &operator/=(T &&);
};
template <class T> SECTORVIZ_API Tensor operator+(const Tensor &, T &&);
template <class T> SECTORVIZ_API Tensor operator-(const Tensor &, T &&);
template <class T> SECTORVIZ_API Tensor operator*(const Tensor &, T &&);
template <class T> SECTORVIZ_API Tensor operator/(const Tensor &, T &&);
SECTORVIZ_API Tensor operator-(const Tensor &);

#define SECTORVIZ_FACTORY(name) \
    SECTORVIZ_API Tensor name(IntArrayRef sizes, TensorOptions options = {}); \
    template <class... A> SECTORVIZ_API Tensor name(IntArrayRef sizes, A &&...);
SECTORVIZ_FACTORY(empty) SECTORVIZ_FACTORY(zeros) SECTORVIZ_FACTORY(ones)
SECTORVIZ_FACTORY(rand) SECTORVIZ_FACTORY(randn) SECTORVIZ_FACTORY(full)
SECTORVIZ_FACTORY(empty_strided)
#undef SECTORVIZ_FACTORY
#define SECTORVIZ_FUNCTION(name) template <class... A> SECTORVIZ_API Tensor name(A &&...);
SECTORVIZ_FUNCTION(empty_like) SECTORVIZ_FUNCTION(zeros_like) SECTORVIZ_FUNCTION(ones_like)
SECTORVIZ_FUNCTION(full_like) SECTORVIZ_FUNCTION(rand_like) SECTORVIZ_FUNCTION(randn_like)
SECTORVIZ_FUNCTION(randint) SECTORVIZ_FUNCTION(arange) SECTORVIZ_FUNCTION(tensor)
SECTORVIZ_FUNCTION(from_blob) SECTORVIZ_FUNCTION(cat) SECTORVIZ_FUNCTION(stack)
SECTORVIZ_FUNCTION(matmul) SECTORVIZ_FUNCTION(mm) SECTORVIZ_FUNCTION(bmm)
SECTORVIZ_FUNCTION(max) SECTORVIZ_FUNCTION(min) SECTORVIZ_FUNCTION(sum)
SECTORVIZ_FUNCTION(allclose) SECTORVIZ_FUNCTION(softmax) SECTORVIZ_FUNCTION(exp)
#undef SECTORVIZ_FUNCTION
template <class T> SECTORVIZ_API TensorOptions dtype(T &&);
template <class... A> SECTORVIZ_API TensorOptions device(A &&...);
SECTORVIZ_API Device device_of(const Tensor &);
namespace cuda {
using namespace c10::cuda;
SECTORVIZ_API cudaDeviceProp *getCurrentDeviceProperties();
SECTORVIZ_API cudaDeviceProp *getDeviceProperties(int device);
SECTORVIZ_API int current_device();
struct CUDAEvent;
}  // namespace cuda
}  // namespace at

namespace torch {
using namespace at;
using at::Tensor;
namespace indexing {
struct Slice { template <class... A> SECTORVIZ_API Slice(A &&...); };
constexpr int None = 0;
}  // namespace indexing
}  // namespace torch

namespace c10 {
constexpr ScalarType kByte = ScalarType::Byte, kUInt8 = ScalarType::Byte,
    kChar = ScalarType::Char, kInt8 = ScalarType::Char, kShort = ScalarType::Short,
    kInt16 = ScalarType::Short, kInt = ScalarType::Int, kInt32 = ScalarType::Int,
    kLong = ScalarType::Long, kInt64 = ScalarType::Long, kHalf = ScalarType::Half,
    kFloat16 = ScalarType::Half, kFloat = ScalarType::Float, kFloat32 = ScalarType::Float,
    kDouble = ScalarType::Double, kFloat64 = ScalarType::Double, kBool = ScalarType::Bool,
    kBFloat16 = ScalarType::BFloat16, kFloat8_e4m3fn = ScalarType::Float8_e4m3fn,
    kFloat8_e5m2 = ScalarType::Float8_e5m2;
constexpr DeviceType kCPU = DeviceType::CPU, kCUDA = DeviceType::CUDA;
constexpr Layout kStrided = Layout::Strided;
SECTORVIZ_API const char *toString(ScalarType);
SECTORVIZ_API size_t elementSize(ScalarType);
}  // namespace c10

#ifndef __CUDACC_RTC__
namespace c10 {
std::ostream &operator<<(std::ostream &, ScalarType);
std::ostream &operator<<(std::ostream &, const TensorOptions &);
std::ostream &operator<<(std::ostream &, const TypeMeta &);
std::ostream &operator<<(std::ostream &, const Device &);
std::ostream &operator<<(std::ostream &, IntArrayRef);
}  // namespace c10
namespace at { std::ostream &operator<<(std::ostream &, const Tensor &); }
#endif

namespace pybind11 {
struct object {
    template <class... A> SECTORVIZ_API object(A &&...);
    template <class... A> SECTORVIZ_API object attr(A &&...) const;
    template <class T> SECTORVIZ_API T cast() const;
};
struct arg {
    SECTORVIZ_API explicit arg(const char *name);
    template <class T> SECTORVIZ_API arg &operator=(T &&);
    SECTORVIZ_API arg &noconvert(bool = true);
};
using arg_v = arg;
struct module_ : object {
    template <class... A> SECTORVIZ_API module_ &def(A &&...);
    SECTORVIZ_API module_ def_submodule(const char *name, const char *doc = nullptr);
    SECTORVIZ_API object &doc();
};
using module = module_;
template <class T, class... O> struct class_ : object {
    template <class... A> SECTORVIZ_API class_(A &&...);
    template <class... A> SECTORVIZ_API class_ &def(A &&...);
    template <class... A> SECTORVIZ_API class_ &def_readwrite(A &&...);
    template <class... A> SECTORVIZ_API class_ &def_readonly(A &&...);
    template <class... A> SECTORVIZ_API class_ &def_property(A &&...);
    template <class... A> SECTORVIZ_API class_ &def_static(A &&...);
};
template <class... A> struct init {};
struct gil_scoped_release { SECTORVIZ_API gil_scoped_release(); };
struct gil_scoped_acquire { SECTORVIZ_API gil_scoped_acquire(); };
template <class T, class... A> SECTORVIZ_API object cast(T &&, A &&...);
namespace literals {}
}  // namespace pybind11

// a module: a function that is never called
#define PYBIND11_MODULE(name, variable, ...) \
    static void sectorviz_pybind11_module_##name(::pybind11::module_ &variable)
#define TORCH_LIBRARY(ns, m) static void sectorviz_torch_library_##ns(::pybind11::module_ &m)
#define TORCH_LIBRARY_IMPL(ns, k, m) \
    static void sectorviz_torch_library_impl_##ns##_##k(::pybind11::module_ &m)
