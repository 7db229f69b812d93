//===- NormPoolKernels.cpp ---------------------------------------------------===//
// (placeholder: this family's emitters are being written)

#include "codegen/kernels/KernelSource.h"

namespace kiln::codegen {

std::string_view normPoolPrelude() { return ""; }

void registerNormPoolKernels(KernelEmitterTable &) {}

} // namespace kiln::codegen
