//===- IRDump.cpp - the module after every pass, for people to read -------===//

#include "IRDump.h"

#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <utility>

namespace kiln::cli {

mlir::OpPrintingFlags passDumpPrintingFlags() {
  mlir::OpPrintingFlags flags;
  flags.elideLargeElementsAttrs(16).elideLargeResourceString(64);
  return flags;
}

llvm::Error IRDumpInstrumentation::writeInput(mlir::Operation *module) { return write(module, "00-input.mlir"); }

llvm::Error IRDumpInstrumentation::write(mlir::Operation *module, llvm::StringRef name) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return llvm::createStringError(ec, "cannot create '" + dir + "': " + ec.message());
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (!ec) {
    module->print(os, passDumpPrintingFlags());
    os.close();
    ec = os.error();
  }
  if (ec)
    return llvm::createStringError(ec, "cannot write '" + path + "': " + ec.message());
  return llvm::Error::success();
}

void IRDumpInstrumentation::runAfterPass(mlir::Pass *pass, mlir::Operation *op) { dump(pass, op, ""); }

void IRDumpInstrumentation::runAfterPassFailed(mlir::Pass *pass, mlir::Operation *op) { dump(pass, op, ".failed"); }

void IRDumpInstrumentation::dump(mlir::Pass *pass, mlir::Operation *op, llvm::StringRef suffix) {
  // A pass with no argument is the adaptor that ran a nested pipeline (func.func passes, say):
  // each pass inside it has been dumped already. Passes declared in .td files all have one.
  if (pass->getArgument().empty() || !firstError.empty())
    return;
  // Nested passes run on a function; the user diffs whole modules.
  while (mlir::Operation *parent = op->getParentOp())
    op = parent;
  std::string name;
  llvm::raw_string_ostream(name) << llvm::format("%02u-", next++) << pass->getArgument() << suffix << ".mlir";
  if (llvm::Error error = write(op, name))
    firstError = llvm::toString(std::move(error));
}

llvm::Error IRDumpInstrumentation::takeError() {
  if (firstError.empty())
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(), std::exchange(firstError, ""));
}

} // namespace kiln::cli
