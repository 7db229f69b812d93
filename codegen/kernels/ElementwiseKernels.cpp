//===- ElementwiseKernels.cpp ---------------------------------------------------===//
// (placeholder: this family's emitters are being written)

#include "codegen/kernels/KernelSource.h"

namespace kiln::codegen {

std::string_view elementwisePrelude() { return ""; }

void registerElementwiseKernels(KernelEmitterTable &) {}

} // namespace kiln::codegen
