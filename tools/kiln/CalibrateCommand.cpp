//===- CalibrateCommand.cpp - `kiln calibrate` -----------------------------===//
//
// Measures activation ranges for 8-bit quantization, on the GPU when there is one (else on the
// CPU reference interpreter), and writes them as a calibration file (passes/CalibrationTable.h).
//
//===----------------------------------------------------------------------===//

#include "CalibrationRun.h"
#include "CalibrationSamples.h"
#include "Commands.h"
#include "Diagnostics.h"
#include "ModelLoading.h"

#include "passes/CalibrationTable.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;

const char *const kCalibrateOverview =
    R"(Measures what 8-bit quantization needs to know of a model: runs it in strict fp32 over every
calibration input, on the GPU when the runtime finds a CUDA device (a plan of the same ops run
step by step, each value copied back), else on the CPU reference interpreter (--device), and
writes, as JSON:

  - for every floating-point ONNX value (graph inputs included), in evaluation order: its min
    and max, and three clipping thresholds of |x|: minmax (the largest |x|), percentile (the
    --percentile of |x|) and entropy (the threshold whose 128-level quantization keeps the
    distribution of |x| closest in KL divergence, as TensorRT's entropy calibrator chooses);
  - for the constant weight of every Conv, ConvTranspose, MatMul and Gemm, the largest |w| of
    each output channel (symmetric per-channel scales).

The values are those of the module `kiln compile` optimizes, in fp32 and without fusion:
BatchNorms are folded into their convs, so a conv's weight and output are the folded ones.
An 8-bit scale is threshold / 127 for int8 and threshold / 448 for float8e4m3fn; --method
records which threshold the quantization pass takes; "measured_on" says where the values were
computed. On the interpreter (--device cpu), the same model, inputs and options give the same
file, byte for byte, on any machine and however many threads evaluate the inputs. The GPU sums
in another order, so its values, and at times a threshold, differ from the interpreter's by
fp32 roundings; they are the same from run to run with the same tuned algorithms (timing cache).

Calibration inputs are .npy files named after the model's inputs, in <dir> itself (one input)
or in each of its subdirectories (one input each), as for `kiln compile --precision auto`.
Values with NaN or infinite elements are reported; their range leaves those out.

Exit status: 0 on success, 1 when the model cannot be loaded or evaluated, 2 on a usage error.
)";

class CalibrateCommand : public Command {
public:
  explicit CalibrateCommand(Categories &categories)
      : Command("calibrate", "Measure activation ranges for 8-bit quantization (GPU, or CPU interpreter)",
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
        device("device", cl::desc("Where the calibration inputs are evaluated:"),
               cl::values(clEnumValN(CalibrationDevice::Auto, "auto",
                                     "the GPU when there is a usable CUDA device, else the CPU (default)"),
                          clEnumValN(CalibrationDevice::Gpu, "gpu", "the GPU; an error without one"),
                          clEnumValN(CalibrationDevice::Cpu, "cpu", "the reference interpreter")),
               cl::init(CalibrationDevice::Auto), cl::sub(sub), cl::cat(categories.runtime)),
        timingCache("timing-cache", cl::value_desc("file"),
                    cl::desc("On the GPU: the runtime's timing cache for the calibration plan's\n"
                             "convolutions (default: none, tuned in memory)"),
                    cl::sub(sub), cl::cat(categories.runtime)),
        quiet("quiet", cl::desc("No progress or summary on stderr"), cl::sub(sub), cl::cat(categories.output)) {}

  int run() override;

private:
  void progress(const llvm::Twine &line) {
    if (!quiet)
      llvm::errs() << prefix() << ": " << line << "\n";
  }

  ModelFlags model;
  cl::opt<std::string> calibration;
  cl::opt<std::string> output;
  cl::opt<CalibrationMethod> method;
  cl::opt<double> percentile;
  cl::opt<CalibrationDevice> device;
  cl::opt<std::string> timingCache;
  cl::opt<bool> quiet;
};

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
  auto inputNames = calibrationInputNames(**module);
  if (!inputNames)
    return failure(llvm::toString(inputNames.takeError()));
  auto samples = readCalibrationSamples(calibration, *inputNames);
  if (!samples)
    return usageError(llvm::toString(samples.takeError()));
  progress(llvm::formatv("evaluating {0} calibration input(s)", samples->size()));
  CalibrationRunOptions options;
  options.method = method;
  options.percentile = percentile;
  options.device = device;
  options.timingCache = timingCache == "none" ? "" : timingCache.getValue();
  options.model = llvm::sys::path::filename(model.path()).str();
  options.progress = [&](const std::string &line) { progress(line); };
  auto table = measureCalibration(**module, *samples, options);
  if (!table)
    return failure(llvm::toString(table.takeError()));
  for (const ActivationRange &a : table->activations)
    if (a.nonFinite)
      llvm::errs() << prefix() << ": warning: value '" << a.name << "' has " << a.nonFinite
                   << " NaN or infinite element(s) on the calibration inputs; its range leaves them out\n";
  if (llvm::Error err = writeCalibrationTable(*table, output))
    return failure(llvm::toString(std::move(err)));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress(llvm::formatv("wrote {0}: {1} values, {2} weights, {3} input(s) on the {4}, {5:f1} s", output.getValue(),
                         table->activations.size(), table->weights.size(), table->samples, table->measuredOn,
                         seconds));
  return kExitOk;
}

} // namespace

std::unique_ptr<Command> makeCalibrateCommand(Categories &categories) {
  return std::make_unique<CalibrateCommand>(categories);
}

} // namespace kiln::cli
