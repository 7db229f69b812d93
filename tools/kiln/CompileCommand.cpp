//===- CompileCommand.cpp - `kiln compile` ---------------------------------===//
//
// ONNX (or kiln MLIR) to a plan file. Needs no GPU: kernels are compiled with NVRTC, choices
// that need a GPU are made when the runtime first loads the plan.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "ModelLoading.h"

#include "codegen/PlanBuilder.h"
#include "runtime/plan/Plan.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>

namespace kiln::cli {

const char *const kCompileHelp = R"(kiln compile - compile a model into a plan for the GPU runtime

USAGE: kiln compile <model.onnx|model.mlir> -o <model.kiln> [options]

Imports the model (every shape static), folds constants, lowers every op to a plan step
(convolutions on cuDNN, matmul/gemm on cuBLASLt, everything else CUDA kernels generated and
compiled with NVRTC for the target), plans the activation arena from liveness and writes the
plan: kernels (cubin + PTX), steps, buffers and the weights blob. Needs no GPU. The same model
and options always give a byte-identical plan. cuDNN and cuBLASLt algorithms are chosen when
the runtime first loads the plan (and kept in its timing cache).

OPTIONS:
  -o <file>                  Write the plan here (required)
  --precision <fp32|tf32>    fp32 (default): strict IEEE fp32 for conv/matmul;
                             tf32: TF32 tensor-core math for fp32 conv and matmul
  --shape <name>=<dims>      Static shape for a graph input with symbolic dims,
                             e.g. --shape input=1x3x224x224 (repeatable)
  --target <sm_XY>           GPU architecture of the cubins (default sm_90); PTX is
                             included for newer GPUs
  --quiet                    No progress or summary on stderr
  --help                     Show this help

EXIT STATUS: 0 on success, 1 when the model cannot be compiled (the error names the node and
the op), 2 on a usage error.
)";

namespace {

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

} // namespace

int runCompile(const std::vector<std::string> &args) {
  frontend::ImportOptions importOptions;
  codegen::CompileOptions options;
  std::string input, output;
  bool quiet = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&]() -> const std::string * { return i + 1 < args.size() ? &args[++i] : nullptr; };
    if (a == "--help" || a == "-h") {
      llvm::outs() << kCompileHelp;
      return 0;
    }
    if (a == "-o" || a == "--precision" || a == "--shape" || a == "--target") {
      const std::string *v = value();
      if (!v) {
        llvm::errs() << "kiln compile: " << a << " needs a value\n";
        return 2;
      }
      if (a == "-o") {
        output = *v;
      } else if (a == "--precision") {
        if (*v == "fp32")
          options.math = plan::MathMode::StrictF32;
        else if (*v == "tf32")
          options.math = plan::MathMode::TF32;
        else {
          llvm::errs() << "kiln compile: --precision '" << *v << "' is not fp32 or tf32\n";
          return 2;
        }
      } else if (a == "--shape") {
        if (auto err = frontend::parseShapeOption(*v, importOptions)) {
          llvm::errs() << "kiln compile: " << llvm::toString(std::move(err)) << "\n";
          return 2;
        }
      } else {
        unsigned sm = 0;
        if (!llvm::StringRef(*v).starts_with("sm_") || llvm::StringRef(*v).drop_front(3).getAsInteger(10, sm) ||
            sm < 70) {
          llvm::errs() << "kiln compile: --target '" << *v << "' is not sm_XY (sm_70 or newer), e.g. sm_90\n";
          return 2;
        }
        options.smVersion = sm;
      }
    } else if (a == "--quiet") {
      quiet = true;
    } else if (!a.empty() && a[0] == '-') {
      llvm::errs() << "kiln compile: unknown option '" << a << "'; run 'kiln compile --help'\n";
      return 2;
    } else if (input.empty()) {
      input = a;
    } else {
      llvm::errs() << "kiln compile: more than one model given ('" << input << "', '" << a << "')\n";
      return 2;
    }
  }
  if (input.empty() || output.empty()) {
    llvm::errs() << "kiln compile: " << (input.empty() ? "no model given" : "no output given (-o model.kiln)")
                 << "; run 'kiln compile --help'\n";
    return 2;
  }

  auto start = std::chrono::steady_clock::now();
  if (!quiet)
    options.progress = [](const std::string &line) { llvm::errs() << "kiln compile: " << line << "\n"; };
  options.modelName = llvm::sys::path::filename(input).str();
  mlir::MLIRContext context;
  if (!quiet)
    llvm::errs() << "kiln compile: importing " << input << "\n";
  auto module = loadModel(context, input, importOptions, /*fold=*/true);
  if (!module) {
    llvm::errs() << "kiln compile: error: " << llvm::toString(module.takeError()) << "\n";
    return 1;
  }
  auto plan = codegen::buildPlan(**module, options);
  if (!plan) {
    llvm::errs() << "kiln compile: error: " << llvm::toString(plan.takeError()) << "\n";
    return 1;
  }
  if (auto status = plan::writePlanFile(*plan, output); !status.isOk()) {
    llvm::errs() << "kiln compile: error: " << status.message() << "\n";
    return 1;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!quiet)
    printSummary(*plan, seconds, llvm::errs());
  return 0;
}

} // namespace kiln::cli
