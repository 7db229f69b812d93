//===- CalibrationTable.h - the ranges `kiln calibrate` measured -*- C++ -*-===//
//
// A calibration file (`kiln calibrate -o calib.json`): for every floating-point ONNX value the
// model computes on the calibration inputs (graph inputs included), its range and the three
// clipping thresholds of RangeHistogram; for the constant weight of every conv,
// conv_transpose, matmul and gemm, the largest |w| per output channel (symmetric per-channel
// scales). Values are listed in evaluation order, weights by ONNX node. What 8-bit scale a
// value gets is derived from its threshold and the target type (threshold / 127 for int8,
// / 448 for float8e4m3fn) by the quantization pass, so one file serves both.
//
// The file is deterministic: the same model, inputs and options give the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_CALIBRATIONTABLE_H
#define KILN_PASSES_CALIBRATIONTABLE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// How an activation's clipping threshold is chosen.
enum class CalibrationMethod { MinMax, Percentile, Entropy };

/// "minmax", "percentile", "entropy".
llvm::StringRef calibrationMethodName(CalibrationMethod method);
/// The inverse of calibrationMethodName; std::nullopt for anything else.
std::optional<CalibrationMethod> parseCalibrationMethod(llvm::StringRef text);

struct ActivationRange {
  std::string name;       // the ONNX value
  uint64_t count = 0;     // finite elements seen over all calibration inputs
  uint64_t nonFinite = 0; // NaN or infinite elements seen (left out of the range)
  double min = 0, max = 0;
  double minmax = 0, percentile = 0, entropy = 0; // clipping thresholds of |x|

  double threshold(CalibrationMethod method) const;
};

struct WeightRange {
  std::string node;           // the ONNX node whose constant weight this is
  std::string op;             // its kiln op ("kiln.conv", ...)
  int64_t axis = 0;           // the weight's output-channel axis
  std::vector<double> absMax; // the largest |w| of each output channel
};

struct CalibrationTable {
  std::string model;                                     // the model's file name
  std::string compiler;                                  // the Kiln version that measured it
  uint64_t samples = 0;                                  // calibration inputs
  std::string measuredOn = "interpreter";                // or the GPU's name (kiln calibrate --device)
  CalibrationMethod method = CalibrationMethod::Entropy; // the threshold the pass takes
  double percent = 99.99;                                // the percentile of |x| behind `percentile`
  std::vector<ActivationRange> activations;
  std::vector<WeightRange> weights;

  /// The activation named `name`, or nullptr.
  const ActivationRange *activation(llvm::StringRef name) const;
};

/// Reads a calibration file's text; the error says which field is missing or malformed.
llvm::Expected<CalibrationTable> parseCalibrationTable(llvm::StringRef text);

// llvm::json mappings (found by argument-dependent lookup).
llvm::json::Value toJSON(const CalibrationTable &table);
llvm::json::Value toJSON(const ActivationRange &range);
llvm::json::Value toJSON(const WeightRange &range);
bool fromJSON(const llvm::json::Value &value, CalibrationTable &table, llvm::json::Path path);
bool fromJSON(const llvm::json::Value &value, ActivationRange &range, llvm::json::Path path);
bool fromJSON(const llvm::json::Value &value, WeightRange &range, llvm::json::Path path);

} // namespace kiln

#endif // KILN_PASSES_CALIBRATIONTABLE_H
