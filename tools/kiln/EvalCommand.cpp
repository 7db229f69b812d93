//===- EvalCommand.cpp - `kiln eval` ----------------------------------------===//
//
// Runs a model through the CPU reference interpreter: ONNX (imported first) or kiln MLIR,
// after the optimization pipeline `kiln compile` runs, so it evaluates the module a plan is
// built from.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Diagnostics.h"
#include "InputFlags.h"
#include "InterpreterRun.h"
#include "ModelLoading.h"
#include "PipelineFlags.h"
#include "TensorNpy.h"

#include "ir/Interpreter/Interpreter.h"
#include "runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <map>
#include <optional>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;
using interp::Tensor;

const char *const kEvalOverview =
    R"(Runs the optimization pipeline of `kiln compile` with the same options (fp32 by default),
then evaluates every op with its reference meaning (f32 compute, f64 accumulation, exact
rounding of f16/bf16/f8 storage), so `kiln eval --precision bf16` computes what a bf16 plan
should. Inputs are .npy files matched to the model's inputs by name; inputs not given are
random with a fixed seed, so two runs agree. Outputs are written as <output name>.npy. numpy
has no bf16 or f8 dtype: such inputs are given as float32 (and rounded), such outputs are
written as float32.

Exit status: 0 on success, 1 when the model cannot be loaded or evaluated, 2 on a usage error.
)";

class EvalCommand : public Command {
public:
  explicit EvalCommand(Categories &categories)
      : Command("eval", "Run a model (ONNX or kiln MLIR) on the CPU reference interpreter", kEvalOverview),
        model(sub, categories), inputs(sub, categories), pipeline(sub, categories),
        outputDir("output-dir", cl::value_desc("dir"),
                  cl::desc("Where to write the outputs (default: print a summary only)"), cl::sub(sub),
                  cl::cat(categories.output)),
        dumpDir("dump", cl::value_desc("dir"),
                cl::desc("Also write every ONNX value the module computes, in evaluation order, as\n"
                         "<dir>/<NNNN>_<name>.npy with <dir>/manifest.json listing name, file, type,\n"
                         "shape (channels-last values as computed: NHWC), op and ONNX nodes. Values\n"
                         "a pass folded away or that only live inside a fused step are not computed\n"
                         "as such and are not written; the reference side of `kiln compare`"),
                cl::sub(sub), cl::cat(categories.output)),
        quiet("quiet", cl::desc("Do not print the passes' remarks"), cl::sub(sub), cl::cat(categories.output)) {}

  int run() override;

private:
  ModelFlags model;
  InputFlags inputs;
  PipelineFlags pipeline;
  cl::opt<std::string> outputDir;
  cl::opt<std::string> dumpDir;
  cl::opt<bool> quiet;
};

int EvalCommand::run() {
  if (std::optional<std::string> problem = pipeline.calibrationUsageError())
    return usageError(*problem);
  if (pipeline.autoPrecision())
    return usageError("--precision auto chooses a plan's precision: use it with kiln compile (with --max-error\n"
                      "and --calibration), then evaluate the precision it reports");
  auto importOptions = model.importOptions();
  if (!importOptions)
    return usageError(llvm::toString(importOptions.takeError()));
  auto files = inputs.inputFiles();
  if (!files)
    return usageError(llvm::toString(files.takeError()));
  const std::map<std::string, std::string> &inputFiles = *files;

  mlir::MLIRContext context;
  DiagnosticPrinter diagnostics(context, prefix(), /*showRemarks=*/!quiet);
  auto module = loadModel(context, model.path(), *importOptions);
  if (!module)
    return failure(llvm::toString(module.takeError()));
  if (mlir::failed(pipeline.runOptimizationPipeline(**module)))
    return kExitFailure;
  auto main = mainFunction(**module);
  if (!main)
    return failure(llvm::toString(main.takeError()));
  mlir::func::FuncOp func = *main;

  auto arguments = interpreterArguments(func, inputFiles, inputs.seed());
  if (!arguments)
    return failure(llvm::toString(arguments.takeError()));

  auto start = std::chrono::steady_clock::now();
  size_t dumped = 0;
  auto outputs = dumpDir.empty() ? interp::evaluateFunction(func, *arguments)
                                 : evaluateIntoDump(func, *arguments, model.path(), pipeline.pipelineOptions(),
                                                    dumpDir, dumped);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!outputs)
    return failure(llvm::toString(outputs.takeError()));
  if (!outputDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return failure("cannot create '" + outputDir + "': " + ec.message());
  llvm::outs() << "evaluated " << model.path() << " in " << llvm::format("%.3f", seconds) << " s\n";
  if (!dumpDir.empty())
    llvm::outs() << "dumped " << dumped << " values into " << dumpDir << "\n";
  for (auto [i, t] : llvm::enumerate(*outputs)) {
    std::string name = interfaceName(func, i, true);
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (int64_t k = 0; k < t.size(); ++k) {
      double v = t.getDouble(k);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
    }
    llvm::outs() << "  " << name << " " << t.type() << " min " << llvm::format("%g", lo) << " max "
                 << llvm::format("%g", hi) << " mean "
                 << llvm::format("%g", t.size() ? sum / t.size() : 0.0) << "\n";
    if (outputDir.empty())
      continue;
    llvm::SmallString<256> path(outputDir);
    llvm::sys::path::append(path, runtime::npyFileName(name));
    auto array = tensorToNpy(t);
    if (!array)
      return failure(llvm::toString(array.takeError()));
    runtime::Status status = runtime::writeNpy(std::string(path), *array);
    if (!status.isOk())
      return failure(status.message());
  }
  return kExitOk;
}

} // namespace

std::unique_ptr<Command> makeEvalCommand(Categories &categories) {
  return std::make_unique<EvalCommand>(categories);
}

} // namespace kiln::cli
