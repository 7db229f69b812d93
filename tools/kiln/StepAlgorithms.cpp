//===- StepAlgorithms.cpp - library algorithms as the tools show them -----===//

#include "StepAlgorithms.h"

#include "llvm/ADT/Twine.h"

namespace kiln::cli {

std::string algorithmLabel(llvm::StringRef algorithm) {
  if (algorithm.empty())
    return "";
  if (algorithm.starts_with("gemm "))
    return "cublasLt";
  llvm::StringRef text = algorithm.split(" ws=").first;
  if (text.consume_front("graph "))
    return (llvm::Twine("cudnn graph ") + text).str();
  if (text.consume_front("conv "))
    return (llvm::Twine("cudnn legacy ") + text).str();
  return text.str();
}

std::map<std::string, int64_t> countAlgorithms(const std::vector<std::string> &algorithms) {
  std::map<std::string, int64_t> counts;
  for (const std::string &algorithm : algorithms)
    if (!algorithm.empty())
      ++counts[algorithmLabel(algorithm)];
  return counts;
}

} // namespace kiln::cli
