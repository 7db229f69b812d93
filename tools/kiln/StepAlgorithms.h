//===- StepAlgorithms.h - library algorithms as the tools show them -*- C++ -*-===//
//
// Engine::stepAlgorithms() gives each step's pick in the timing cache's words; `kiln bench`
// counts steps per algorithm and `kiln profile` labels each step with it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_STEPALGORITHMS_H
#define KILN_TOOLS_KILN_STEPALGORITHMS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

/// The timing-cache text without its workspace size: "cudnn graph engine=6 knobs=...",
/// "cudnn legacy algo=1 math=1"; a cuBLASLt algorithm is 64 opaque bytes, so just "cublasLt".
/// Empty for a step without one.
std::string algorithmLabel(llvm::StringRef algorithm);

/// How many steps run with each library algorithm (label -> count).
std::map<std::string, int64_t> countAlgorithms(const std::vector<std::string> &algorithms);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_STEPALGORITHMS_H
