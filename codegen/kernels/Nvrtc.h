//===- Nvrtc.h - compile generated CUDA with NVRTC -------------*- C++ -*-===//
//
// Compilation needs no GPU: NVRTC turns the generated source into a cubin for the target
// architecture and into PTX (for JIT on newer GPUs).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_KERNELS_NVRTC_H
#define KILN_CODEGEN_KERNELS_NVRTC_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::codegen {

struct CompiledProgram {
  std::vector<uint8_t> cubin;
  std::string ptx;
};

struct NvrtcOptions {
  uint32_t smVersion = 90; // compute capability major*10+minor
  bool emitPtx = true;     // also compile to PTX (a second NVRTC run)
};

/// Compiles `source` (named `name` in messages). Errors carry NVRTC's log (the first lines)
/// and the directory NVRTC looked for CUDA headers in.
runtime::StatusOr<CompiledProgram> compileWithNvrtc(const std::string &source, const std::string &name,
                                                    const NvrtcOptions &options = {});

/// NVRTC's version as major*1000 + minor*10 (e.g. 13000), the way CUDA numbers versions.
uint32_t nvrtcToolkitVersion();

} // namespace kiln::codegen

#endif // KILN_CODEGEN_KERNELS_NVRTC_H
