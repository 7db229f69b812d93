//===- IRDump.h - the module after every pass, for people to read -*- C++ -*-===//
//
// `--print-ir-after-all` and `--dump-ir DIR` show what each pass of the pipeline did. Weights
// are elided in both: a model's IR is kilobytes, its weights can be hundreds of megabytes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_IRDUMP_H
#define KILN_TOOLS_KILN_IRDUMP_H

#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace kiln::cli {

/// How IR is printed between passes: constants of more than 16 elements and resource blobs
/// (the weights) elided.
mlir::OpPrintingFlags passDumpPrintingFlags();

/// Writes the whole module into a directory: `00-input.mlir` before the passes (writeInput),
/// then `NN-<pass argument>.mlir` after every pass (`NN-<pass argument>.failed.mlir` after one
/// that failed), numbered in the order they ran, so that `diff DIR/03-* DIR/04-*` shows what
/// one pass did. The context must be single-threaded: the module is printed while the pass
/// manager walks it.
class IRDumpInstrumentation : public mlir::PassInstrumentation {
public:
  explicit IRDumpInstrumentation(llvm::StringRef dir) : dir(dir.str()) {}

  /// Creates the directory and writes `module` as it is before the first pass.
  llvm::Error writeInput(mlir::Operation *module);

  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override;
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) override;

  /// The first file that could not be written after a pass, if any (a pass hook cannot fail).
  llvm::Error takeError();

private:
  void dump(mlir::Pass *pass, mlir::Operation *op, llvm::StringRef suffix);
  llvm::Error write(mlir::Operation *module, llvm::StringRef name);

  std::string dir;
  unsigned next = 1;
  std::string firstError;
};

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_IRDUMP_H
