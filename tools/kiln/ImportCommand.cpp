//===- ImportCommand.cpp - `kiln import` -----------------------------------===//

#include "Commands.h"
#include "Diagnostics.h"
#include "ModelLoading.h"
#include "PipelineFlags.h"

#include "ir/Provenance.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;

const char *const kImportOverview =
    R"(Reads the model (opsets 13-21 of the default ONNX domain; older opsets where the op is
unchanged), resolves every shape statically, folds shape-computing subgraphs and then every
op whose operands are all constants (through the reference interpreter, up to 2^20 elements
per result), and writes the module as MLIR text. Weights are MLIR resource blobs at the end of
the file. A summary (ops by kind, inputs, outputs, weight bytes) goes to stderr.

Given an optimization option (--precision, --strict-fp32, --keep-fp32, --force-precision,
--layout) it runs the whole optimization pipeline of `kiln compile` instead of folding alone,
and writes the module a plan would be built from. A kiln MLIR file (.mlir) is read as it is.

Exit status: 0 on success, 1 when the model cannot be imported (the error names the node, its
op type and opset, and what to do), 2 on a usage error.
)";

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
  os << "imported " << path << ": " << total << " ops, " << weightBytes << " constant bytes\n";
  auto printValues = [&](llvm::StringRef what, mlir::TypeRange types, auto nameOf) {
    os << "  " << what << ":";
    for (auto [i, type] : llvm::enumerate(types))
      os << " " << nameOf(i) << " " << type;
    os << "\n";
  };
  auto funcs = module.getOps<mlir::func::FuncOp>();
  if (!funcs.empty()) { // a .mlir file may hold none
    mlir::func::FuncOp func = *funcs.begin();
    printValues("inputs", func.getArgumentTypes(), [&](unsigned i) {
      auto name = func.getArgAttrOfType<mlir::StringAttr>(i, "kiln.name");
      return name ? name.getValue().str() : std::to_string(i);
    });
    printValues("outputs", func.getResultTypes(), [&](unsigned i) {
      auto name = func.getResultAttrOfType<mlir::StringAttr>(i, "kiln.name");
      return name ? name.getValue().str() : std::to_string(i);
    });
  }
  os << "  ops:";
  for (auto &[name, count] : ops)
    os << " " << name << "=" << count;
  os << "\n";
}

class ImportCommand : public Command {
public:
  explicit ImportCommand(Categories &categories)
      : Command("import", "Import an ONNX model into the kiln MLIR dialect (every shape static)", kImportOverview),
        model(sub, categories), pipeline(sub, categories),
        output("o", cl::value_desc("file"), cl::init("-"),
               cl::desc("Write the MLIR here (default: stdout; '-' is stdout)"), cl::sub(sub),
               cl::cat(categories.output)),
        valueNames("onnx-value-names",
                   cl::desc("Keep the kiln.onnx_values attributes (which op computes which ONNX value,\n"
                            "what `kiln eval --dump` names values by) in the MLIR written; off by\n"
                            "default, as they repeat the ONNX graph on every op"),
                   cl::sub(sub), cl::cat(categories.output)),
        locations("locations",
                  cl::desc("Print each op's location: the ONNX node it comes from (what --keep-fp32,\n"
                           "--force-precision and kiln-opt's keep= options match node names by); off\n"
                           "by default"),
                  cl::sub(sub), cl::cat(categories.output)),
        quiet("quiet", cl::desc("Print neither the summary nor the passes' remarks"), cl::sub(sub),
              cl::cat(categories.output)) {}

  int run() override {
    if (std::optional<std::string> problem = pipeline.calibrationUsageError())
      return usageError(*problem);
    if (pipeline.autoPrecision())
      return usageError("--precision auto chooses a plan's precision: use it with kiln compile (with --max-error\n"
                        "and --calibration), then import with the precision it reports");
    auto importOptions = model.importOptions();
    if (!importOptions)
      return usageError(llvm::toString(importOptions.takeError()));
    mlir::MLIRContext context;
    DiagnosticPrinter diagnostics(context, prefix(), /*showRemarks=*/!quiet);
    auto module = loadModel(context, model.path(), *importOptions);
    if (!module)
      return failure(llvm::toString(module.takeError()));
    // Without an optimization option the module is shown as imported: constants folded, no more.
    auto foldOnly = [&](mlir::OpPassManager &pm) {
      if (pipeline.foldConstants())
        pm.addNestedPass<mlir::func::FuncOp>(createFoldConstants());
    };
    if (mlir::failed(pipeline.optimizationRequested() ? pipeline.runOptimizationPipeline(**module)
                                                      : pipeline.runPasses(**module, foldOnly)))
      return kExitFailure;
    std::error_code ec;
    llvm::raw_fd_ostream os(output, ec, llvm::sys::fs::OF_None);
    if (ec)
      return failure("cannot write '" + output + "': " + ec.message());
    if (!valueNames)
      (*module)->walk([](mlir::Operation *op) { clearOnnxValueNames(op); });
    mlir::OpPrintingFlags flags;
    flags.enableDebugInfo(/*enable=*/locations);
    (*module)->print(os, flags);
    os.flush();
    if (!quiet)
      printSummary(**module, model.path(), llvm::errs());
    return kExitOk;
  }

private:
  ModelFlags model;
  PipelineFlags pipeline;
  cl::opt<std::string> output;
  cl::opt<bool> valueNames;
  cl::opt<bool> locations;
  cl::opt<bool> quiet;
};

} // namespace

std::unique_ptr<Command> makeImportCommand(Categories &categories) {
  return std::make_unique<ImportCommand>(categories);
}

} // namespace kiln::cli
