//===- CalibrationOnGpu.h - calibration ranges measured on the GPU --*- C++ -*-===//
//
// `kiln calibrate` on a machine with a CUDA device: the calibration module (strict fp32, ONNX
// layout, no fusion) lowered to a plan and run step by step over every calibration input, each
// ONNX value a step completes copied back and added to its RangeHistogram. The same statistics
// the interpreter collects (CalibrationRun.h), much faster on real models; the values differ
// from the interpreter's by the GPU's rounding (fp32 sums in another order), so thresholds may
// move by an ulp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_CALIBRATIONONGPU_H
#define KILN_TOOLS_KILN_CALIBRATIONONGPU_H

#include "CalibrationSamples.h"

#include "passes/RangeHistogram.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
class Runtime;
namespace plan {
struct Plan;
}
} // namespace kiln

namespace kiln::cli {

/// Statistics by ONNX value name.
using RangeMap = llvm::StringMap<RangeHistogram>;

/// The float ONNX values `plan` (lowered from `func`) computes in no step of its own, each with
/// the value whose elements it holds (a reshape or transpose the plan aliases, of a graph input
/// or of a value a step completes), in `func`'s order; an error naming the first value that is
/// neither.
llvm::Expected<std::vector<std::pair<std::string, std::string>>> valuesFromAliases(mlir::func::FuncOp func,
                                                                                  const plan::Plan &plan);

/// Opens the CUDA device for calibration; nullptr and the reason (in `why`) without one.
std::unique_ptr<Runtime> openCalibrationDevice(const std::string &timingCache, std::string &why);

/// Runs `func` (the calibration module's main function, which this lowers to a plan) on
/// `runtime`'s device over every sample and returns every float ONNX value's statistics,
/// graph inputs included. Values the plan computes in no step of their own (a reshape the plan
/// aliases, say) get the statistics of the value they alias when that holds the same elements.
llvm::Expected<RangeMap> collectRangesOnGpu(Runtime &runtime, mlir::func::FuncOp func,
                                            const std::vector<CalibrationSample> &samples,
                                            const std::function<void(const std::string &)> &progress);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_CALIBRATIONONGPU_H
