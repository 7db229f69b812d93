//===- CalibrationRun.h - activation ranges measured on calibration inputs -*- C++ -*-===//
//
// What `kiln calibrate` and `kiln compile --precision auto` (its 8-bit candidates) measure: the
// model run in strict fp32 over every calibration input, on the GPU when there is one
// (CalibrationOnGpu.h), else on the reference interpreter, each ONNX value's range (minmax,
// percentile and entropy thresholds) and each constant weight's per-channel ranges, as a
// calibration table (passes/CalibrationTable.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_CALIBRATIONRUN_H
#define KILN_TOOLS_KILN_CALIBRATIONRUN_H

#include "CalibrationSamples.h"

#include "passes/CalibrationTable.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::cli {

/// Where the calibration inputs are evaluated.
enum class CalibrationDevice {
  Auto, // the GPU when the runtime finds a usable CUDA device, else the interpreter
  Gpu,  // the GPU, an error without one
  Cpu,  // the reference interpreter (the same file, byte for byte, on any machine)
};

struct CalibrationRunOptions {
  CalibrationDevice device = CalibrationDevice::Auto;
  /// The runtime's timing cache for the GPU plan ("" = none).
  std::string timingCache;
  CalibrationMethod method = CalibrationMethod::Entropy;
  double percentile = 99.99;
  std::string model; // the file name the table records
  /// One line per evaluated input; may be empty.
  std::function<void(const std::string &)> progress;
};

/// Runs the fp32 pipeline the quantization pass sees (ONNX layout, no fusion) on a copy of
/// `imported` and measures every value on `samples`: on the GPU as `options.device` says, else
/// in the interpreter (in parallel; the result does not depend on the order). The model's
/// input names for reading samples: calibrationInputNames.
llvm::Expected<CalibrationTable> measureCalibration(mlir::ModuleOp imported, const std::vector<CalibrationSample> &samples,
                                                    const CalibrationRunOptions &options);

/// The names calibration inputs are read by (the model's inputs).
llvm::Expected<std::vector<std::string>> calibrationInputNames(mlir::ModuleOp imported);

/// Writes `table` as JSON to `path`.
llvm::Error writeCalibrationTable(const CalibrationTable &table, const std::string &path);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_CALIBRATIONRUN_H
