//===- ReductionKernels.cpp ---------------------------------------------------===//
// (placeholder: this family's emitters are being written)

#include "codegen/kernels/KernelSource.h"

namespace kiln::codegen {

std::string_view reductionPrelude() { return ""; }

void registerReductionKernels(KernelEmitterTable &) {}

} // namespace kiln::codegen
