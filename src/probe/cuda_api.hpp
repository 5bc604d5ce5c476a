#pragma once
// The CUDA runtime and cuDNN entry points stackpin calls, declared here from NVIDIA's public C
// ABI (cuda_runtime_api.h, cudnn_graph.h, cudnn_ops.h, cudnn_cnn.h) so that stackpin needs no
// CUDA headers to build and no CUDA library to link: everything is resolved with dlsym at run
// time from the library the loader really found.
#include <cstddef>
#include <cstdint>
#include <string>

namespace probe::detail {

using cudaError = int;
using cudnnStatus = int;
using Handle = void*;

// cudaMemcpyKind
constexpr int k_memcpy_h2d = 1, k_memcpy_d2h = 2;
// cudaDeviceAttr
constexpr int k_attr_cc_major = 75, k_attr_cc_minor = 76;
// cudaError_t values stackpin explains
constexpr int k_cuda_success = 0, k_cuda_insufficient_driver = 35, k_cuda_no_device = 100;
// cudnnDataType_t, cudnnTensorFormat_t, cudnnConvolutionMode_t, cudnnMathType_t
constexpr int k_float = 0, k_half = 2, k_nchw = 0, k_cross_correlation = 1, k_default_math = 0, k_tensor_op_math = 1;

// cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t share this layout in cuDNN 8 and 9.
struct AlgoPerf {
  int algo;
  int status;
  float time;
  std::size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

struct CudaRuntime {
  cudaError (*GetDeviceCount)(int*) = nullptr;
  cudaError (*SetDevice)(int) = nullptr;
  cudaError (*RuntimeGetVersion)(int*) = nullptr;
  cudaError (*DriverGetVersion)(int*) = nullptr;
  cudaError (*DeviceGetAttribute)(int*, int, int) = nullptr;
  cudaError (*GetDeviceProperties)(void*, int) = nullptr;
  cudaError (*Malloc)(void**, std::size_t) = nullptr;
  cudaError (*Free)(void*) = nullptr;
  cudaError (*Memcpy)(void*, const void*, std::size_t, int) = nullptr;
  cudaError (*Memset)(void*, int, std::size_t) = nullptr;
  cudaError (*DeviceSynchronize)() = nullptr;
  const char* (*GetErrorString)(cudaError) = nullptr;
};

struct Cudnn {
  std::size_t (*GetVersion)() = nullptr;
  std::size_t (*GetCudartVersion)() = nullptr;
  const char* (*GetErrorString)(cudnnStatus) = nullptr;
  cudnnStatus (*Create)(Handle*) = nullptr;
  cudnnStatus (*Destroy)(Handle) = nullptr;
  cudnnStatus (*CreateTensorDescriptor)(void**) = nullptr;
  cudnnStatus (*SetTensor4dDescriptor)(void*, int, int, int, int, int, int) = nullptr;
  cudnnStatus (*DestroyTensorDescriptor)(void*) = nullptr;
  cudnnStatus (*CreateFilterDescriptor)(void**) = nullptr;
  cudnnStatus (*SetFilter4dDescriptor)(void*, int, int, int, int, int, int) = nullptr;
  cudnnStatus (*DestroyFilterDescriptor)(void*) = nullptr;
  cudnnStatus (*CreateConvolutionDescriptor)(void**) = nullptr;
  cudnnStatus (*SetConvolution2dDescriptor)(void*, int, int, int, int, int, int, int, int) = nullptr;
  cudnnStatus (*SetConvolutionMathType)(void*, int) = nullptr;
  cudnnStatus (*DestroyConvolutionDescriptor)(void*) = nullptr;
  cudnnStatus (*GetConvolution2dForwardOutputDim)(void*, void*, void*, int*, int*, int*, int*) = nullptr;
  cudnnStatus (*GetFwdMaxCount)(Handle, int*) = nullptr;
  cudnnStatus (*GetBwdDataMaxCount)(Handle, int*) = nullptr;
  cudnnStatus (*GetBwdFilterMaxCount)(Handle, int*) = nullptr;
  cudnnStatus (*FindFwd)(Handle, void*, void*, void*, void*, int, int*, AlgoPerf*) = nullptr;
  cudnnStatus (*FindBwdData)(Handle, void*, void*, void*, void*, int, int*, AlgoPerf*) = nullptr;
  cudnnStatus (*FindBwdFilter)(Handle, void*, void*, void*, void*, int, int*, AlgoPerf*) = nullptr;
  cudnnStatus (*FwdWorkspace)(Handle, void*, void*, void*, void*, int, std::size_t*) = nullptr;
  cudnnStatus (*BwdDataWorkspace)(Handle, void*, void*, void*, void*, int, std::size_t*) = nullptr;
  cudnnStatus (*BwdFilterWorkspace)(Handle, void*, void*, void*, void*, int, std::size_t*) = nullptr;
  cudnnStatus (*Forward)(Handle, const void*, void*, const void*, void*, const void*, void*, int, void*, std::size_t, const void*, void*,
                         void*) = nullptr;
  cudnnStatus (*BackwardData)(Handle, const void*, void*, const void*, void*, const void*, void*, int, void*, std::size_t, const void*,
                              void*, void*) = nullptr;
  cudnnStatus (*BackwardFilter)(Handle, const void*, void*, const void*, void*, const void*, void*, int, void*, std::size_t, const void*,
                                void*, void*) = nullptr;
};

std::string cuda_error_name(const CudaRuntime& rt, cudaError e);
std::string cudnn_status_name(const Cudnn& dnn, cudnnStatus s);

}  // namespace probe::detail
