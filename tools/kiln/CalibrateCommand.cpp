//===- CalibrateCommand.cpp - `kiln calibrate` -----------------------------===//
//
// Measures activation ranges for 8-bit quantization on the CPU reference interpreter and
// writes them as a calibration file (passes/CalibrationTable.h).
//
//===----------------------------------------------------------------------===//

#include "CalibrationSamples.h"
#include "Commands.h"
#include "Diagnostics.h"
#include "InterpreterRun.h"
#include "ModelLoading.h"

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnOps.h"
#include "ir/Provenance.h"
#include "passes/CalibrationTable.h"
#include "passes/Pipelines.h"
#include "passes/QuantizableOps.h"
#include "passes/RangeHistogram.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;
using interp::Tensor;

const char *const kCalibrateOverview =
    R"(Measures what 8-bit quantization needs to know of a model: runs it in strict fp32 on the CPU
reference interpreter over every calibration input and writes, as JSON:

  - for every floating-point ONNX value (graph inputs included), in evaluation order: its min
    and max, and three clipping thresholds of |x|: minmax (the largest |x|), percentile (the
    --percentile of |x|) and entropy (the threshold whose 128-level quantization keeps the
    distribution of |x| closest in KL divergence, as TensorRT's entropy calibrator chooses);
  - for the constant weight of every Conv, ConvTranspose, MatMul and Gemm, the largest |w| of
    each output channel (symmetric per-channel scales).

The values are those of the module `kiln compile` optimizes, in fp32 and without fusion:
BatchNorms are folded into their convs, so a conv's weight and output are the folded ones.
An 8-bit scale is threshold / 127 for int8 and threshold / 448 for float8e4m3fn; --method
records which threshold the quantization pass takes. The same model, inputs and options give
the same file, byte for byte, however many threads evaluate the inputs.

Calibration inputs are .npy files named after the model's inputs, in <dir> itself (one input)
or in each of its subdirectories (one input each), as for `kiln compile --precision auto`.
Values with NaN or infinite elements are reported; their range leaves those out.

Exit status: 0 on success, 1 when the model cannot be loaded or evaluated, 2 on a usage error.
)";

/// One sample's statistics, by ONNX value.
using RangeMap = llvm::StringMap<RangeHistogram>;

/// The ONNX values `func` computes in evaluation order, graph inputs first (only names).
std::vector<std::string> valueOrder(mlir::func::FuncOp func) {
  std::vector<std::string> order;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    order.push_back(interfaceName(func, i, false));
  func.walk([&](mlir::Operation *op) {
    for (const std::string &name : onnxValueNames(op))
      if (!name.empty())
        order.push_back(name);
  });
  return order;
}

/// The output-channel axis of the constant weight of a conv, conv_transpose, matmul or gemm,
/// with that weight; nullopt for other ops and weights computed at run time.
std::optional<std::pair<int64_t, ConstantOp>> constantWeight(mlir::Operation *op) {
  std::optional<int64_t> axis = weightChannelAxis(op);
  if (!axis)
    return std::nullopt;
  auto constant = op->getOperand(1).getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto type = llvm::cast<mlir::RankedTensorType>(constant.getType());
  if (!llvm::isa<mlir::FloatType>(type.getElementType()) || type.getRank() <= *axis)
    return std::nullopt;
  return std::make_pair(*axis, constant);
}

llvm::Expected<std::vector<WeightRange>> weightRanges(mlir::func::FuncOp func) {
  std::vector<WeightRange> out;
  llvm::Error failed = llvm::Error::success();
  func.walk([&](mlir::Operation *op) {
    auto weight = constantWeight(op);
    if (!weight)
      return mlir::WalkResult::advance();
    auto [axis, constant] = *weight;
    auto absMax = channelAbsMax(constant, axis);
    if (!absMax) {
      failed = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "the weight of " + describeNode(op) + ": " + llvm::toString(absMax.takeError()));
      return mlir::WalkResult::interrupt();
    }
    WeightRange range{nodeName(op), op->getName().getStringRef().str(), axis, std::move(*absMax)};
    out.push_back(std::move(range));
    return mlir::WalkResult::advance();
  });
  if (failed)
    return std::move(failed);
  return out;
}

class CalibrateCommand : public Command {
public:
  explicit CalibrateCommand(Categories &categories)
      : Command("calibrate", "Measure activation ranges for 8-bit quantization (CPU interpreter)",
                kCalibrateOverview),
        model(sub, categories),
        calibration("calibration", cl::value_desc("dir"),
                    cl::desc("The calibration inputs (required): <input name>.npy files in <dir> (one\n"
                             "input) or in each of its subdirectories (one input each)"),
                    cl::sub(sub), cl::cat(categories.input)),
        output("o", cl::value_desc("calib.json"), cl::desc("Write the calibration file here (required)"), cl::sub(sub),
               cl::cat(categories.output)),
        method("method",
               cl::desc("The threshold the quantization pass takes (all three are written):"),
               cl::values(clEnumValN(CalibrationMethod::Entropy, "entropy", "KL divergence (default)"),
                          clEnumValN(CalibrationMethod::Percentile, "percentile", "the --percentile of |x|"),
                          clEnumValN(CalibrationMethod::MinMax, "minmax", "the largest |x|")),
               cl::init(CalibrationMethod::Entropy), cl::sub(sub), cl::cat(categories.optimization)),
        percentile("percentile", cl::value_desc("p"), cl::init(99.99),
                   cl::desc("The percentile of |x| behind the percentile threshold (above 0, at\n"
                            "most 100; default 99.99)"),
                   cl::sub(sub), cl::cat(categories.optimization)),
        quiet("quiet", cl::desc("No progress or summary on stderr"), cl::sub(sub), cl::cat(categories.output)) {}

  int run() override;

private:
  void progress(const llvm::Twine &line) {
    if (!quiet)
      llvm::errs() << prefix() << ": " << line << "\n";
  }

  /// Evaluates `func` on every sample (in parallel) and merges every value's statistics.
  llvm::Expected<RangeMap> collect(mlir::func::FuncOp func, const std::vector<CalibrationSample> &samples);

  ModelFlags model;
  cl::opt<std::string> calibration;
  cl::opt<std::string> output;
  cl::opt<CalibrationMethod> method;
  cl::opt<double> percentile;
  cl::opt<bool> quiet;
};

llvm::Expected<RangeMap> CalibrateCommand::collect(mlir::func::FuncOp func,
                                                   const std::vector<CalibrationSample> &samples) {
  RangeMap merged;
  std::mutex mutex;
  std::vector<std::string> errors(samples.size());
  std::atomic<size_t> next{0}, done{0};
  auto start = std::chrono::steady_clock::now();
  auto work = [&] {
    for (size_t s = next++; s < samples.size(); s = next++) {
      RangeMap ranges;
      llvm::StringSet<> seen;
      auto record = [&](const std::string &name, const Tensor &t) {
        if (!name.empty() && t.isFloat() && seen.insert(name).second)
          ranges[name].add(t.f);
      };
      auto arguments = interpreterArguments(func, samples[s].files, std::nullopt);
      if (!arguments) {
        errors[s] = llvm::toString(arguments.takeError());
        continue;
      }
      for (auto [i, t] : llvm::enumerate(*arguments))
        record(interfaceName(func, i, false), t);
      auto outputs =
          interp::evaluateFunction(func, *arguments, [&](mlir::Operation *op, llvm::ArrayRef<Tensor> results) {
            std::vector<std::string> names = onnxValueNames(op);
            for (size_t r = 0; r < results.size() && r < names.size(); ++r)
              record(names[r], results[r]);
            return llvm::Error::success();
          });
      if (!outputs) {
        errors[s] = llvm::toString(outputs.takeError());
        continue;
      }
      // Merging is exact and order-free (RangeHistogram), so samples merge as they finish.
      std::lock_guard<std::mutex> lock(mutex);
      for (auto &entry : ranges)
        merged[entry.getKey()].merge(entry.getValue());
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress(llvm::formatv("input {0}/{1} ({2}) done, {3:f1} s", ++done, samples.size(), samples[s].name, seconds));
    }
  };
  size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, samples.size());
  std::vector<std::thread> pool;
  for (size_t w = 0; w < workers; ++w)
    pool.emplace_back(work);
  for (std::thread &t : pool)
    t.join();
  for (size_t s = 0; s < samples.size(); ++s)
    if (!errors[s].empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "calibration input '" + samples[s].name + "': " + errors[s]);
  return merged;
}

int CalibrateCommand::run() {
  auto importOptions = model.importOptions();
  if (!importOptions)
    return usageError(llvm::toString(importOptions.takeError()));
  if (calibration.empty())
    return usageError("no calibration inputs given (--calibration DIR)");
  if (output.empty())
    return usageError("no output given (-o calib.json)");
  if (!(percentile > 0 && percentile <= 100))
    return usageError("--percentile " + llvm::formatv("{0}", llvm::format("%g", percentile.getValue())).str() +
                      " is not above 0 and at most 100");
  auto start = std::chrono::steady_clock::now();

  mlir::MLIRContext context;
  DiagnosticPrinter diagnostics(context, prefix(), /*showRemarks=*/false);
  progress("importing " + model.path());
  auto module = loadModel(context, model.path(), *importOptions);
  if (!module)
    return failure(llvm::toString(module.takeError()));
  // What the quantization pass sees: the fp32 module before fusion, in the ONNX layout.
  PipelineOptions options;
  options.strictFp32 = true;
  options.fuse = false;
  options.fuseAttention = false;
  options.layout = Layout::NCHW;
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  buildOptimizationPipeline(pm, options);
  if (mlir::failed(pm.run(**module)))
    return failure("the fp32 optimization pipeline failed (the errors above say where)");
  auto main = mainFunction(**module);
  if (!main)
    return failure(llvm::toString(main.takeError()));
  mlir::func::FuncOp func = *main;

  std::vector<std::string> inputNames;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    inputNames.push_back(interfaceName(func, i, false));
  auto samples = readCalibrationSamples(calibration, inputNames);
  if (!samples)
    return usageError(llvm::toString(samples.takeError()));
  progress(llvm::formatv("evaluating {0} calibration input(s)", samples->size()));
  auto ranges = collect(func, *samples);
  if (!ranges)
    return failure(llvm::toString(ranges.takeError()));

  CalibrationTable table;
  table.model = llvm::sys::path::filename(model.path()).str();
  table.compiler = KILN_VERSION;
  table.samples = samples->size();
  table.method = method;
  table.percent = percentile;
  llvm::StringSet<> listed;
  for (const std::string &name : valueOrder(func)) {
    auto it = ranges->find(name);
    if (it == ranges->end() || !listed.insert(name).second)
      continue;
    const RangeHistogram &h = it->getValue();
    ActivationRange a;
    a.name = name;
    a.count = h.count();
    a.nonFinite = h.nonFinite();
    a.min = h.min();
    a.max = h.max();
    a.minmax = h.absMax();
    a.percentile = h.percentileThreshold(percentile);
    a.entropy = h.entropyThreshold();
    if (a.nonFinite)
      llvm::errs() << prefix() << ": warning: value '" << name << "' has " << a.nonFinite
                   << " NaN or infinite element(s) on the calibration inputs; its range leaves them out\n";
    table.activations.push_back(std::move(a));
  }
  auto weights = weightRanges(func);
  if (!weights)
    return failure(llvm::toString(weights.takeError()));
  table.weights = std::move(*weights);

  std::error_code ec;
  llvm::raw_fd_ostream os(output, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return failure("cannot write '" + output + "': " + ec.message());
  os << llvm::formatv("{0:2}", toJSON(table)) << "\n";
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress(llvm::formatv("wrote {0}: {1} values, {2} weights, {3} input(s), {4:f1} s", output.getValue(),
                         table.activations.size(), table.weights.size(), table.samples, seconds));
  return kExitOk;
}

} // namespace

std::unique_ptr<Command> makeCalibrateCommand(Categories &categories) {
  return std::make_unique<CalibrateCommand>(categories);
}

} // namespace kiln::cli
