//===- TensorData.h - host tensors for plan I/O ----------------*- C++ -*-===//
//
// What `kiln run` and `kiln bench` (and embedders) need around a plan's inputs and outputs:
// .npy arrays to and from the plan's element types (numpy has no bf16 or f8: those travel as
// float32, rounded to nearest-even on the way in), random inputs that match `kiln eval`'s
// (same generator, same order), and summary statistics. Host only: no CUDA.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_TENSORDATA_H
#define KILN_RUNTIME_TENSORDATA_H

#include "runtime/Npy.h"
#include "runtime/plan/Plan.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kiln::runtime {

/// The bytes of `binding` from an .npy array: the dtype must be the binding's (or float32 for
/// bf16/f8 inputs) and the shape equal. Errors name the input.
StatusOr<std::vector<uint8_t>> bytesFromNpy(const NpyArray &array, const plan::TensorBinding &binding);
/// An .npy array of plan bytes (bf16/f8 widened to float32, exactly).
NpyArray npyFromBytes(const std::vector<uint8_t> &bytes, plan::DType dtype, const std::vector<int64_t> &shape);
/// Random values as `kiln eval` makes them for one input: floats uniform in [-1, 1), integers
/// in [0, 10), bools fair coins; `rng` advances the same way.
std::vector<uint8_t> randomBytes(plan::DType dtype, int64_t count, std::mt19937_64 &rng);
/// Element k as a double.
double elementAsDouble(const uint8_t *data, plan::DType dtype, int64_t k);
/// The element type an .npy dtype holds ("<f4" is f32: bf16/f8 travel as float32), or nullopt
/// for one Kiln has no type for.
std::optional<plan::DType> dtypeOfNpy(const std::string &npyDtype);

struct TensorStats {
  double min = 0, max = 0, mean = 0;
  int64_t nonFinite = 0;
};
TensorStats statsOf(const std::vector<uint8_t> &bytes, plan::DType dtype);

/// Conversions between float and the narrow float types (round to nearest even; f8E4M3FN has
/// no infinity: out-of-range values become NaN, as without ONNX's saturate).
uint16_t floatToHalf(float value);
float halfToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);
uint8_t floatToF8E4M3FN(float value);
float f8E4M3FNToFloat(uint8_t bits);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_TENSORDATA_H
