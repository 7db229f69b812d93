//===- OpTable.h - ONNX op handlers keyed by (domain, op, opset) -*- C++ -*-===//
#ifndef KILN_FRONTEND_OPTABLE_H
#define KILN_FRONTEND_OPTABLE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kiln::frontend {

class NodeContext;
using OpHandler = llvm::Error (*)(NodeContext &);

/// One handler serves one op over an opset range: `minOpset` is the ONNX version that
/// introduced the semantics the handler implements, `maxOpset` the last opset in which they
/// hold (the op's next version minus one, or the newest opset Kiln knows).
struct OpHandlerEntry {
  std::string domain;
  std::string opType;
  int64_t minOpset;
  int64_t maxOpset;
  OpHandler handler;
};

/// Newest default-domain opset Kiln imports.
constexpr int64_t kMaxOpset = 21;

class OpTable {
public:
  void add(llvm::StringRef opType, int64_t minOpset, int64_t maxOpset, OpHandler handler,
           llvm::StringRef domain = "");
  /// The handler for `opType` at the model's `opset`, or null.
  const OpHandlerEntry *lookup(llvm::StringRef domain, llvm::StringRef opType, int64_t opset) const;
  /// "13-21, 7-12" style list of the opsets that have a handler, for messages.
  std::string supportedOpsets(llvm::StringRef domain, llvm::StringRef opType) const;

  /// The table with every handler family registered.
  static const OpTable &get();

private:
  std::vector<OpHandlerEntry> entries_;
};

// One registration function per op family (frontend/ops/*.cpp).
void registerElementwiseOps(OpTable &table);
void registerConvPoolNormOps(OpTable &table);
void registerMatMulOps(OpTable &table);
void registerDataMovementOps(OpTable &table);
void registerReductionOps(OpTable &table);
void registerQuantizationOps(OpTable &table);
void registerShapeOps(OpTable &table);

} // namespace kiln::frontend

#endif // KILN_FRONTEND_OPTABLE_H
