//===- CudaCheck.h - CUDA/cuDNN/cuBLASLt errors as Status values -*- C++ -*-===//
//
// Every library call in the runtime goes through one of these, so a failure becomes a
// kDeviceError (kResourceExhausted for out-of-memory) whose message says what was being done
// (`what`: "step 'conv1' (kiln.conv): cudnnConvolutionForward") and the library's own words.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_CUDACHECK_H
#define KILN_RUNTIME_ENGINE_CUDACHECK_H

#include "runtime/Status.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

namespace kiln::runtime {

inline Status cudaStatus(cudaError_t err, const std::string &what) {
  if (err == cudaSuccess)
    return Status::ok();
  StatusCode code = err == cudaErrorMemoryAllocation ? StatusCode::kResourceExhausted : StatusCode::kDeviceError;
  return Status(code, what + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

inline Status cudnnStatus(cudnnStatus_t err, const std::string &what) {
  if (err == CUDNN_STATUS_SUCCESS)
    return Status::ok();
  StatusCode code = err == CUDNN_STATUS_ALLOC_FAILED ? StatusCode::kResourceExhausted : StatusCode::kDeviceError;
  return Status(code, what + ": cuDNN " + cudnnGetErrorString(err));
}

inline Status cublasStatus(cublasStatus_t err, const std::string &what) {
  if (err == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  StatusCode code = err == CUBLAS_STATUS_ALLOC_FAILED ? StatusCode::kResourceExhausted : StatusCode::kDeviceError;
  return Status(code, what + ": cuBLASLt " + cublasLtGetStatusString(err));
}

} // namespace kiln::runtime

/// Returns from the enclosing function (which returns Status or StatusOr) when `expr` fails.
#define KILN_RETURN_IF_ERROR(expr)                                                                 \
  do {                                                                                             \
    ::kiln::runtime::Status kilnStatus_ = (expr);                                                  \
    if (!kilnStatus_.isOk())                                                                       \
      return kilnStatus_;                                                                          \
  } while (0)

#endif // KILN_RUNTIME_ENGINE_CUDACHECK_H
