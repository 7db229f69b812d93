//===- CudnnFrontend.h - the cuDNN frontend, for graph files only -*- C++ -*-===//
//
// Included by the files that build cuDNN frontend graphs (CudnnGraph.cpp and the graph specs),
// which CMake compiles with KILN_HAVE_CUDNN_FRONTEND=1 where it found the pinned headers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_CUDNNFRONTEND_H
#define KILN_RUNTIME_ENGINE_CUDNNFRONTEND_H

#include "runtime/Status.h"

#include <string>

#ifndef KILN_HAVE_CUDNN_FRONTEND
#define KILN_HAVE_CUDNN_FRONTEND 0 // CMake defines it to 1 where it found the headers
#endif

#if KILN_HAVE_CUDNN_FRONTEND
#include <cudnn_frontend.h>

static_assert(CUDNN_FRONTEND_MAJOR_VERSION == 1 && CUDNN_FRONTEND_MINOR_VERSION == 32,
              "the runtime is written and tested against cuDNN frontend 1.32 "
              "(scripts/cudnn-frontend-requirements.txt); update kCudnnFrontendVersion and recheck the graph "
              "files when upgrading");

namespace kiln::runtime {

namespace fe = cudnn_frontend;

inline constexpr const char *kCudnnFrontendVersion = "1.32"; // checked against the headers above

/// The frontend's verdict as a Status naming the step and what was being done.
inline Status feStatus(fe::error_t error, const std::string &label, const std::string &what) {
  if (error.is_good())
    return Status::ok();
  return Status(StatusCode::kDeviceError, label + ": " + what + ": " + error.get_message());
}

} // namespace kiln::runtime

#endif // KILN_HAVE_CUDNN_FRONTEND
#endif // KILN_RUNTIME_ENGINE_CUDNNFRONTEND_H
