//===- DataMovementKernels.cpp ---------------------------------------------------===//
// (placeholder: this family's emitters are being written)

#include "codegen/kernels/KernelSource.h"

namespace kiln::codegen {

std::string_view dataMovementPrelude() { return ""; }

void registerDataMovementKernels(KernelEmitterTable &) {}

} // namespace kiln::codegen
