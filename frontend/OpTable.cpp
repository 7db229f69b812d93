//===- OpTable.cpp - ONNX op handlers keyed by (domain, op, opset) ---------===//

#include "frontend/OpTable.h"

namespace kiln::frontend {

void OpTable::add(llvm::StringRef opType, int64_t minOpset, int64_t maxOpset, OpHandler handler,
                  llvm::StringRef domain) {
  entries_.push_back({domain.str(), opType.str(), minOpset, maxOpset, handler});
}

const OpHandlerEntry *OpTable::lookup(llvm::StringRef domain, llvm::StringRef opType,
                                      int64_t opset) const {
  if (domain == "ai.onnx")
    domain = "";
  for (const OpHandlerEntry &e : entries_)
    if (e.domain == domain && e.opType == opType && opset >= e.minOpset && opset <= e.maxOpset)
      return &e;
  return nullptr;
}

std::string OpTable::supportedOpsets(llvm::StringRef domain, llvm::StringRef opType) const {
  std::string out;
  for (const OpHandlerEntry &e : entries_) {
    if (e.domain != domain || e.opType != opType)
      continue;
    if (!out.empty())
      out += ", ";
    out += std::to_string(e.minOpset) + "-" + std::to_string(e.maxOpset);
  }
  return out;
}

const OpTable &OpTable::get() {
  // Built on first use rather than by static initializers, so registration order is explicit.
  static const OpTable table = [] {
    OpTable t;
    registerElementwiseOps(t);
    registerConvPoolNormOps(t);
    registerMatMulOps(t);
    registerDataMovementOps(t);
    registerReductionOps(t);
    registerQuantizationOps(t);
    registerShapeOps(t);
    return t;
  }();
  return table;
}

} // namespace kiln::frontend
