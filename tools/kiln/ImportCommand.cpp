//===- ImportCommand.cpp - `kiln import` -----------------------------------===//

#include "Commands.h"

#include "frontend/OnnxImporter.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace kiln::cli {

const char *const kImportHelp = R"(kiln import - import an ONNX model into the kiln MLIR dialect

USAGE: kiln import <model.onnx> [options]

Reads the model (opsets 13-21 of the default ONNX domain; older opsets where the op is
unchanged), resolves every shape statically, folds shape-computing subgraphs and then every
op whose operands are all constants (through the reference interpreter, up to 2^20 elements
per result), and writes the module as MLIR text. Weights are MLIR resource blobs at the end of the file. A summary
(ops by kind, inputs, outputs, weight bytes) goes to stderr.

OPTIONS:
  -o <file>                  Write the MLIR here (default: stdout; '-' is stdout)
  --shape <name>=<dims>      Static shape for a graph input with symbolic dims,
                             e.g. --shape input=1x3x224x224 (repeatable)
  --no-fold                  Keep ops whose operands are all constants (no folding pass)
  --quiet                    Do not print the summary
  --help                     Show this help

EXIT STATUS: 0 on success, 1 when the model cannot be imported (the error names the
node, its op type and opset, and what to do), 2 on a usage error.
)";

namespace {

void printSummary(mlir::ModuleOp module, llvm::StringRef path, llvm::raw_ostream &os) {
  std::map<std::string, int> ops;
  int64_t weightBytes = 0, total = 0;
  module.walk([&](mlir::Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() != "kiln")
      return;
    ++total;
    ops[op->getName().stripDialect().str()]++;
    if (op->getName().getStringRef() == "kiln.constant") {
      auto type = llvm::cast<mlir::RankedTensorType>(op->getResult(0).getType());
      weightBytes += type.getNumElements() * std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    }
  });
  auto func = *module.getOps<mlir::func::FuncOp>().begin();
  os << "imported " << path << ": " << total << " ops, " << weightBytes << " constant bytes\n";
  auto printValues = [&](llvm::StringRef what, mlir::TypeRange types, auto nameOf) {
    os << "  " << what << ":";
    for (auto [i, type] : llvm::enumerate(types))
      os << " " << nameOf(i) << " " << type;
    os << "\n";
  };
  printValues("inputs", func.getArgumentTypes(), [&](unsigned i) {
    auto name = func.getArgAttrOfType<mlir::StringAttr>(i, "kiln.name");
    return name ? name.getValue().str() : std::to_string(i);
  });
  printValues("outputs", func.getResultTypes(), [&](unsigned i) {
    auto name = func.getResultAttrOfType<mlir::StringAttr>(i, "kiln.name");
    return name ? name.getValue().str() : std::to_string(i);
  });
  os << "  ops:";
  for (auto &[name, count] : ops)
    os << " " << name << "=" << count;
  os << "\n";
}

} // namespace

int runImport(const std::vector<std::string> &args) {
  frontend::ImportOptions options;
  std::string input, output = "-";
  bool quiet = false, fold = true;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&](const char *flag) -> const std::string * {
      if (i + 1 >= args.size()) {
        llvm::errs() << "kiln import: " << flag << " needs a value\n";
        return nullptr;
      }
      return &args[++i];
    };
    if (a == "--help" || a == "-h") {
      llvm::outs() << kImportHelp;
      return 0;
    } else if (a == "-o") {
      const std::string *v = value("-o");
      if (!v)
        return 2;
      output = *v;
    } else if (a == "--shape" || llvm::StringRef(a).starts_with("--shape=")) {
      std::string text = a == "--shape" ? "" : a.substr(8);
      if (a == "--shape") {
        const std::string *v = value("--shape");
        if (!v)
          return 2;
        text = *v;
      }
      if (auto err = frontend::parseShapeOption(text, options)) {
        llvm::errs() << "kiln import: " << llvm::toString(std::move(err)) << "\n";
        return 2;
      }
    } else if (a == "--quiet") {
      quiet = true;
    } else if (a == "--no-fold") {
      fold = false;
    } else if (!a.empty() && a[0] == '-') {
      llvm::errs() << "kiln import: unknown option '" << a << "'; run 'kiln import --help'\n";
      return 2;
    } else if (input.empty()) {
      input = a;
    } else {
      llvm::errs() << "kiln import: more than one model given ('" << input << "', '" << a << "')\n";
      return 2;
    }
  }
  if (input.empty()) {
    llvm::errs() << "kiln import: no model given; run 'kiln import --help'\n";
    return 2;
  }

  mlir::MLIRContext context;
  auto module = frontend::importOnnxFile(context, input, options);
  if (!module) {
    llvm::errs() << "kiln import: error: " << llvm::toString(module.takeError()) << "\n";
    return 1;
  }
  if (fold) {
    mlir::PassManager pm(&context);
    pm.addNestedPass<mlir::func::FuncOp>(createFoldConstants());
    if (mlir::failed(pm.run(**module))) {
      llvm::errs() << "kiln import: error: constant folding failed\n";
      return 1;
    }
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(output, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "kiln import: cannot write '" << output << "': " << ec.message() << "\n";
    return 1;
  }
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/false);
  (*module)->print(os, flags);
  os.flush();
  if (!quiet)
    printSummary(**module, input, llvm::errs());
  return 0;
}

} // namespace kiln::cli
