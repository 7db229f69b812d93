//===- HostTensor.h - small constant tensors at import time ----*- C++ -*-===//
//
// Exporters compute shapes with small graphs (Shape -> Gather -> Concat -> Reshape). The
// importer folds them on host values before any kiln op exists. Values are held as long double,
// which on x86-64 has a 64-bit mantissa and so represents every int64 and every double exactly
// (INT64_MAX slice ends included).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_FRONTEND_HOSTTENSOR_H
#define KILN_FRONTEND_HOSTTENSOR_H

#include "ir/ShapeRules.h"

#include <cstdint>
#include <vector>

namespace kiln::frontend {

struct HostTensor {
  int32_t onnxType = 0; // TensorProto::DataType of the values
  Shape shape;
  std::vector<long double> values;

  int64_t size() const { return (int64_t)values.size(); }
  std::vector<int64_t> asInts() const {
    std::vector<int64_t> out;
    out.reserve(values.size());
    for (long double v : values)
      out.push_back((int64_t)v);
    return out;
  }
};

} // namespace kiln::frontend

#endif // KILN_FRONTEND_HOSTTENSOR_H
