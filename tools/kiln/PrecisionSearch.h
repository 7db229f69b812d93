//===- PrecisionSearch.h - precision chosen under an error budget -*- C++ -*-===//
//
// `kiln compile --precision auto --max-error E --calibration DIR`: the fewest ONNX nodes kept
// in fp32 that bring the model's output error on the calibration inputs under E, starting from
// half precision. Every candidate is the optimization pipeline run on a copy of the imported
// module and evaluated by the reference interpreter (which rounds bf16/fp16 storage exactly as
// the plan does), judged against the same module in strict fp32:
//
//   1. the fp32 reference, then pure bf16 and pure fp16 (fp16 keeps 3 more mantissa bits; it
//      loses where values outgrow 65504), on every calibration input; the one with the smaller
//      error is the start, and it is the answer when within the budget;
//   2. the per-value comparison of the start against the reference on the first input (what
//      `kiln compare` reports) ranks its half-precision values: outputs that alone break the
//      budget, then the error they add over their inputs, then their own error;
//   3. a bisection (or, with threads to spare, a search that evaluates several k a round) finds
//      the smallest k for which keeping the nodes of the top-k values in strict fp32 meets the
//      budget on every input (each step verified: the answer always was measured);
//   4. when even all of them miss it, the whole model runs in strict fp32.
//   5. when pure half precision meets the budget and 8-bit candidates are asked for
//      (`eightBitCalibration`), the ranges are measured on the same inputs (CalibrationRun.h)
//      and written there, and int8 and fp8 plans (bf16 with INT8 convolutions, with FP8 linear
//      layers) are evaluated; the one within the budget that runs the most multiply-adds in 8
//      bits is the answer, if it runs any.
//
// The error is max |out - ref| / max |ref| over every output and calibration input, the max
// relative error of `kiln compare`.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_PRECISIONSEARCH_H
#define KILN_TOOLS_KILN_PRECISIONSEARCH_H

#include "CalibrationSamples.h"

#include "passes/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kiln::cli {

/// One candidate the search evaluated.
struct PrecisionTrial {
  std::string what; // "reference fp32", "bf16", "fp16 + 12 values in fp32", ...
  size_t keptValues = 0;
  size_t keptNodes = 0;
  double error = 0;
  double seconds = 0;
  bool withinBudget = false;
};

/// What the search chose.
struct PrecisionChoice {
  /// The plan's precision: bf16 or fp16, or fp32 when no half-precision candidate met the budget.
  Precision precision = Precision::FP32;
  /// 8-bit quantization on top of bf16 (`--precision int8|fp8 --calibration FILE`), when chosen.
  std::optional<PipelineOptions::Quantization> quantization;
  /// ONNX nodes run in strict fp32 (as `--force-precision NAME=fp32` asks), in rank order.
  std::vector<std::string> fp32Nodes;
  double error = 0; // of the chosen candidate, as measured
  double maxError = 0;
  double target = 0; // what the search held the interpreter's error to (maxError less headroom)
  size_t samples = 0;
  double seconds = 0; // the whole search
  std::vector<PrecisionTrial> trials;

  /// The options to compile: `base` with the chosen precision and overrides.
  PipelineOptions apply(PipelineOptions base) const;
  /// One line for the plan's metadata and the summary.
  std::string summary() const;
  llvm::json::Value toJSON() const;
};

struct PrecisionSearchOptions {
  double maxError = 1e-3;
  /// The fraction of maxError the search leaves unused: candidates must measure within
  /// maxError * (1 - headroom) on the interpreter, because the GPU's accumulation order and
  /// fused kernels do not round exactly as the interpreter does (BERT-base, fp16 with fp32
  /// nodes: 1.14e-3 on the GPU where the interpreter measured 9.9e-4).
  double headroom = 0.2;
  /// Options every candidate shares (layout, fusion, the user's own overrides); the search sets
  /// the precision and adds its fp32 nodes.
  PipelineOptions base;
  /// One line per evaluated candidate; may be empty.
  std::function<void(const std::string &)> progress;
  /// Where to write the calibration table 8-bit candidates use; empty: none are tried.
  std::string eightBitCalibration;
  /// The model's file name, recorded in that table.
  std::string model;
};

/// Searches as the file comment says. `imported` is not changed (candidates run on copies).
/// Errors: an unreadable input, a candidate the pipeline or the interpreter cannot run.
llvm::Expected<PrecisionChoice> searchPrecision(mlir::ModuleOp imported, const std::vector<CalibrationSample> &samples,
                                               const PrecisionSearchOptions &options);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_PRECISIONSEARCH_H
