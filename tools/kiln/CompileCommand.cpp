//===- CompileCommand.cpp - `kiln compile` ---------------------------------===//
//
// ONNX (or kiln MLIR) to a plan file: import, the optimization pipeline, codegen. Needs no
// GPU: kernels are compiled with NVRTC, choices that need a GPU are made when the runtime first
// loads the plan.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "Diagnostics.h"
#include "ModelLoading.h"
#include "PipelineFlags.h"

#include "codegen/PlanBuilder.h"
#include "runtime/plan/Plan.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;

const char *const kCompileOverview =
    R"(Imports the model (every shape static), runs the optimization pipeline (constant folding,
then the precision the options ask for), lowers every op to a plan step (convolutions on
cuDNN, matmul/gemm on cuBLASLt, everything else CUDA kernels generated and compiled with NVRTC
for the target), plans the activation arena from liveness and writes the plan: kernels (cubin
+ PTX), steps, buffers and the weights blob. Needs no GPU. The same model and options always
give a byte-identical plan. cuDNN and cuBLASLt algorithms are chosen when the runtime first
loads the plan (and kept in its timing cache). Remarks and warnings of the passes name the
ONNX node they are about.

Exit status: 0 on success, 1 when the model cannot be compiled (the error names the node and
the op), 2 on a usage error.
)";

/// `--target sm_XY`, sm_70 or newer: the compute capability the cubins are built for.
class TargetParser : public cl::parser<unsigned> {
public:
  using parser::parser;
  bool parse(cl::Option &option, llvm::StringRef, llvm::StringRef arg, unsigned &value) {
    if (!arg.starts_with("sm_") || arg.drop_front(3).getAsInteger(10, value) || value < 70)
      return option.error("'" + arg + "' is not sm_XY (sm_70 or newer), e.g. sm_90");
    return false;
  }
};

void printSummary(const plan::Plan &plan, double seconds, llvm::raw_ostream &os) {
  std::map<std::string, int> kinds;
  for (const plan::Step &step : plan.steps)
    kinds[std::string(plan::stepRunner(step))]++;
  os << "compiled " << plan.metadata.model << " (" << plan.metadata.precision << ", sm_"
     << plan.metadata.computeCapability << ") in " << llvm::format("%.1f", seconds) << " s: " << plan.steps.size()
     << " steps (";
  bool first = true;
  for (auto &[kind, count] : kinds) {
    os << (first ? "" : ", ") << kind << " " << count;
    first = false;
  }
  os << ")\n  arena " << plan.metadata.arenaBytes << " bytes (liveness lower bound "
     << plan.metadata.arenaLowerBound << "), weights " << plan.weights.size() << " bytes\n";
}

class CompileCommand : public Command {
public:
  explicit CompileCommand(Categories &categories)
      : Command("compile", "Compile a model into a plan file for the GPU runtime (no GPU needed)", kCompileOverview),
        model(sub, categories), pipeline(sub, categories),
        output("o", cl::value_desc("model.kiln"), cl::desc("Write the plan here (required)"), cl::sub(sub),
               cl::cat(categories.output)),
        target("target", cl::value_desc("sm_XY"), cl::init(90),
               cl::desc("GPU architecture of the cubins (default sm_90); PTX is included for\n"
                        "newer GPUs"),
               cl::sub(sub), cl::cat(categories.output)),
        quiet("quiet", cl::desc("No progress, summary or remarks on stderr"), cl::sub(sub),
              cl::cat(categories.output)) {}

  int run() override {
    auto importOptions = model.importOptions();
    if (!importOptions)
      return usageError(llvm::toString(importOptions.takeError()));
    if (output.empty())
      return usageError("no output given (-o model.kiln)");

    auto start = std::chrono::steady_clock::now();
    PipelineOptions pipelineOptions = pipeline.pipelineOptions();
    codegen::CompileOptions options;
    options.math = pipelineOptions.precision == Precision::FP32 || pipelineOptions.strictFp32
                       ? plan::MathMode::StrictF32
                       : plan::MathMode::TF32;
    options.precision = precisionName(pipelineOptions.precision).str();
    options.smVersion = target;
    options.modelName = llvm::sys::path::filename(model.path()).str();
    if (!quiet)
      options.progress = [this](const std::string &line) { llvm::errs() << prefix() << ": " << line << "\n"; };

    mlir::MLIRContext context;
    DiagnosticPrinter diagnostics(context, prefix(), /*showRemarks=*/!quiet);
    if (options.progress)
      options.progress("importing " + model.path());
    auto module = loadModel(context, model.path(), *importOptions);
    if (!module)
      return failure(llvm::toString(module.takeError()));
    if (options.progress)
      options.progress("optimizing for " + options.precision);
    if (mlir::failed(pipeline.runOptimizationPipeline(**module)))
      return kExitFailure;
    auto plan = codegen::buildPlan(**module, options);
    if (!plan)
      return failure(llvm::toString(plan.takeError()));
    if (auto status = plan::writePlanFile(*plan, output); !status.isOk())
      return failure(status.message());
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!quiet)
      printSummary(*plan, seconds, llvm::errs());
    return kExitOk;
  }

private:
  ModelFlags model;
  PipelineFlags pipeline;
  cl::opt<std::string> output;
  cl::opt<unsigned, false, TargetParser> target;
  cl::opt<bool> quiet;
};

} // namespace

std::unique_ptr<Command> makeCompileCommand(Categories &categories) {
  return std::make_unique<CompileCommand>(categories);
}

} // namespace kiln::cli
