//===- Diagnostics.h - MLIR diagnostics as kiln messages -------*- C++ -*-===//
//
// Passes, the verifier and the MLIR parser report through the context's diagnostics. The tools
// print them the way every other Kiln message looks, naming the ONNX node an op came from
// (ir/Provenance.h), so a user reads `kiln compile: warning: node 'conv1' (Conv): ...` rather
// than a location dump.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_DIAGNOSTICS_H
#define KILN_TOOLS_KILN_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln::cli {

/// Where a diagnostic points, for a message: "node 'conv1' (Conv)" when the location names an
/// ONNX node, else its first file position ("model.mlir:12:5"), else "".
std::string describeLocation(mlir::Location loc);

/// While alive, prints every diagnostic of `context` to stderr as
/// `<prefix>: <error|warning|remark>: <where>: <message>`, each of its notes after it as
/// `<prefix>: note: ...`. Remarks are dropped unless `showRemarks` (`--quiet` drops them).
class DiagnosticPrinter {
public:
  DiagnosticPrinter(mlir::MLIRContext &context, llvm::StringRef prefix, bool showRemarks);
  DiagnosticPrinter(const DiagnosticPrinter &) = delete;
  DiagnosticPrinter &operator=(const DiagnosticPrinter &) = delete;

  /// Whether an error was printed: a failure that printed none still needs a line.
  bool errorPrinted() const { return errors > 0; }

private:
  void print(mlir::Diagnostic &diagnostic);

  std::string prefix;
  bool showRemarks;
  unsigned errors = 0;
  // Last, so it is registered once the fields it reads exist and erased before they go.
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_DIAGNOSTICS_H
