//===- CompileCommand.cpp - `kiln compile` ---------------------------------===//
//
// ONNX (or kiln MLIR) to a plan file: import, the optimization pipeline, codegen. Needs no
// GPU: kernels are compiled with NVRTC, choices that need a GPU are made when the runtime first
// loads the plan.
//
//===----------------------------------------------------------------------===//

#include "CalibrationRun.h"
#include "Commands.h"
#include "Diagnostics.h"
#include "ModelLoading.h"
#include "PipelineFlags.h"
#include "PrecisionSearch.h"

#include "codegen/PlanBuilder.h"
#include "runtime/plan/Plan.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
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

A model already quantized in ONNX's QDQ format (onnxruntime's quantize_static, for one) keeps
its scales: a convolution of an int8 input per tensor and an int8 weight per tensor or per
output channel, zero points 0, one group, C a multiple of 32 and K of 16 (quantize_static's
ActivationSymmetric) runs as an INT8 cuDNN convolution at any --precision, and a Gemm or MatMul
of E4M3 input and constant weight, one scale each, zero points 0, K and N multiples of 16 as an
FP8 cuBLASLt GEMM; every other QuantizeLinear/DequantizeLinear runs as a kernel around float
ops, as onnxruntime computes it. A remark says how many ops run in 8 bits and why convolutions
do not.

With --precision auto, --max-error E and --calibration DIR, the precision is chosen: the
reference interpreter runs the model on the calibration inputs in strict fp32, pure bf16 and
pure fp16; the better of the two is kept if its output error (max |out - ref| / max |ref| over
every output and input, kiln compare's max rel) is within E less --error-headroom (20%: the GPU
rounds a little differently from the interpreter); otherwise the values that add the
most error (ranked as kiln compare ranks culprits) have their nodes kept in strict fp32, as
few as a search finds (several candidates a round on threads to spare), every candidate
measured. When pure half precision is within the budget, 8 bits are tried too: the ranges are
measured on the same inputs (as kiln calibrate does) and written beside the plan
(<plan>.calib.json), and bf16 plans with INT8 convolutions (int8) and with FP8 linear layers
(fp8) are evaluated; the one within the budget running the most multiply-adds in 8 bits wins
(judged on the calibration inputs, like every candidate: give held-out inputs to kiln compare
to check). The plan records the choice (kiln inspect); --precision-report writes every
candidate tried. The interpreter's time bounds it: a few evaluations of the model per
calibration input.

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
              cl::cat(categories.output)),
        convKernels("conv-kernels", cl::init(ConvKernels::Cudnn),
                    cl::desc("What runs the INT8 1x1 convolutions a kernel of our own can run (C a\n"
                             "multiple of 32 up to 256, K of 256, stride 1, int8 out, an int8 residual\n"
                             "or none, ReLU or none: ResNet's expanding convs)"),
                    cl::values(clEnumValN(ConvKernels::Cudnn, "cudnn", "cuDNN graphs, timed at load (default)"),
                               clEnumValN(ConvKernels::Generated, "generated",
                                          "the generated kernel (mma.sync, weights in shared memory);\n"
                                          "experimental: not yet run on a GPU, neither its speed against\n"
                                          "cuDNN's nor its values (tests/gpu/check_conv_kernels.py)")),
                    cl::sub(sub), cl::cat(categories.optimization)),
        maxError("max-error", cl::value_desc("e"),
                 cl::desc("--precision auto: the output error allowed, max |out - ref| / max |ref|\n"
                          "against strict fp32 on the calibration inputs (e.g. 1e-3)"),
                 cl::sub(sub), cl::cat(categories.optimization)),
        errorHeadroom("error-headroom", cl::value_desc("fraction"), cl::init(0.2),
                      cl::desc("--precision auto: the fraction of --max-error the search leaves unused;\n"
                               "the interpreter's error must be within E * (1 - fraction), since\n"
                               "the GPU's accumulation order and fused kernels round a little\n"
                               "differently (0 to 1; default 0.2)"),
                      cl::sub(sub), cl::cat(categories.optimization)),
        precisionReport("precision-report", cl::value_desc("file.json"),
                        cl::desc("--precision auto: write the choice and every candidate evaluated (its\n"
                                 "error and time) as JSON"),
                        cl::sub(sub), cl::cat(categories.output)) {}

  int run() override {
    auto importOptions = model.importOptions();
    if (!importOptions)
      return usageError(llvm::toString(importOptions.takeError()));
    if (output.empty())
      return usageError("no output given (-o model.kiln)");

    bool autoPrecision = pipeline.autoPrecision();
    if (autoPrecision && (!maxError.getNumOccurrences() || pipeline.calibrationPath().empty()))
      return usageError("--precision auto needs --max-error E and --calibration DIR");
    if (!autoPrecision && (maxError.getNumOccurrences() || !precisionReport.empty() || errorHeadroom.getNumOccurrences()))
      return usageError("--max-error, --error-headroom and --precision-report go with --precision auto");
    if (std::optional<std::string> problem = pipeline.calibrationUsageError())
      return usageError(*problem);
    if (!(errorHeadroom >= 0 && errorHeadroom < 1))
      return usageError("--error-headroom needs a fraction from 0 up to (not including) 1, e.g. 0.2");
    if (autoPrecision && !(maxError > 0))
      return usageError("--max-error needs a positive error, e.g. 1e-3");

    auto start = std::chrono::steady_clock::now();
    PipelineOptions pipelineOptions = pipeline.pipelineOptions();
    codegen::CompileOptions options;
    options.precisionOverrides = precisionOverrideList(pipelineOptions);
    options.smVersion = target;
    options.pointwiseConvInt8Kernels = convKernels == ConvKernels::Generated;
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
    if (autoPrecision) {
      auto choice = choosePrecision(**module, pipelineOptions, options.progress);
      if (!choice)
        return failure(llvm::toString(choice.takeError()));
      pipelineOptions = choice->apply(pipelineOptions);
      for (const std::string &node : choice->fp32Nodes)
        options.precisionOverrides.push_back("auto: " + node + "=fp32");
      options.precisionChoice = choice->summary();
    }
    options.math = pipelineOptions.precision == Precision::FP32 || pipelineOptions.strictFp32
                       ? plan::MathMode::StrictF32
                       : plan::MathMode::TF32;
    options.precision = planPrecisionName(pipelineOptions);
    if (options.progress)
      options.progress("optimizing for " + options.precision);
    if (mlir::failed(pipeline.runPasses(
            **module, [&](mlir::OpPassManager &pm) { buildOptimizationPipeline(pm, pipelineOptions); })))
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
  /// `--precision auto`: the precision search on the calibration inputs (PrecisionSearch.h);
  /// writes --precision-report.
  llvm::Expected<PrecisionChoice> choosePrecision(mlir::ModuleOp module, const PipelineOptions &base,
                                                  const std::function<void(const std::string &)> &progress) {
    auto inputNames = calibrationInputNames(module);
    if (!inputNames)
      return inputNames.takeError();
    auto samples = readCalibrationSamples(pipeline.calibrationPath(), *inputNames);
    if (!samples)
      return samples.takeError();
    PrecisionSearchOptions search;
    search.maxError = maxError;
    search.headroom = errorHeadroom;
    search.base = base;
    search.progress = progress;
    search.eightBitCalibration = output + ".calib.json";
    search.model = llvm::sys::path::filename(model.path()).str();
    auto choice = searchPrecision(module, *samples, search);
    if (!choice)
      return choice.takeError();
    if (progress)
      progress(choice->summary() + llvm::formatv(" (search {0:f1} s)", choice->seconds).str());
    if (!precisionReport.empty()) {
      std::error_code ec;
      llvm::raw_fd_ostream os(precisionReport, ec, llvm::sys::fs::OF_Text);
      if (ec)
        return llvm::createStringError(ec, "cannot write '" + precisionReport + "': " + ec.message());
      llvm::json::Object report{{"model", llvm::sys::path::filename(model.path()).str()},
                                {"plan", output.getValue()},
                                {"choice", choice->toJSON()}};
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
    }
    return choice;
  }


  ModelFlags model;
  PipelineFlags pipeline;
  cl::opt<std::string> output;
  cl::opt<unsigned, false, TargetParser> target;
  cl::opt<bool> quiet;
  enum class ConvKernels { Cudnn, Generated };
  cl::opt<ConvKernels> convKernels;
  cl::opt<double> maxError;
  cl::opt<double> errorHeadroom;
  cl::opt<std::string> precisionReport;
};

} // namespace

std::unique_ptr<Command> makeCompileCommand(Categories &categories) {
  return std::make_unique<CompileCommand>(categories);
}

} // namespace kiln::cli
