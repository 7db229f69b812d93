//===- Npy.h - NumPy .npy files --------------------------------*- C++ -*-===//
//
// Reads and writes the .npy format (version 1.0-3.0, C order, little-endian) that `kiln eval`
// and `kiln run` take inputs in and write outputs to. No dependency beyond the C++ library.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_NPY_H
#define KILN_RUNTIME_NPY_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::runtime {

struct NpyArray {
  std::string dtype;            // numpy descr: "<f4", "<f2", "<f8", "<i8", "<i4", "|i1", "|u1", "|b1", ...
  std::vector<int64_t> shape;
  std::vector<char> data;       // C-order little-endian elements

  /// Bytes per element of `dtype` (0 when unknown).
  static size_t elementSize(const std::string &dtype);
};

/// Reads `path`; errors name the file and what is wrong (not .npy, Fortran order, big-endian,
/// truncated data, unsupported dtype).
StatusOr<NpyArray> readNpy(const std::string &path);
/// Parses .npy bytes already in memory (`name` labels errors).
StatusOr<NpyArray> parseNpy(const std::string &bytes, const std::string &name);
/// Writes `array` to `path` as .npy version 1.0.
Status writeNpy(const std::string &path, const NpyArray &array);
/// The file `kiln eval` and `kiln run` write a tensor to: "<name>.npy", every character other
/// than letters, digits, '_', '-' and '.' replaced by '_' (ONNX names may hold '/' or ':').
std::string npyFileName(const std::string &tensorName);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_NPY_H
