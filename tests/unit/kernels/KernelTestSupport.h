//===- KernelTestSupport.h - building OpDescs in kernel tests --*- C++ -*-===//
#ifndef KILN_TESTS_UNIT_KERNELS_KERNELTESTSUPPORT_H
#define KILN_TESTS_UNIT_KERNELS_KERNELTESTSUPPORT_H

#include "codegen/kernels/KernelEmitter.h"

#include <vector>

namespace kiln::codegen::kerneltest {

/// A runtime tensor of `dtype` and `shape` (no constant values).
inline TensorDesc tensor(DType dtype, std::vector<int64_t> shape) {
  TensorDesc t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  return t;
}

/// A compile-time constant of an integer (or bool) type.
inline TensorDesc intConstant(DType dtype, std::vector<int64_t> shape, std::vector<int64_t> values) {
  TensorDesc t = tensor(dtype, std::move(shape));
  t.ints = std::move(values);
  return t;
}

/// A compile-time constant of a float type.
inline TensorDesc floatConstant(DType dtype, std::vector<int64_t> shape, std::vector<double> values) {
  TensorDesc t = tensor(dtype, std::move(shape));
  t.floats = std::move(values);
  return t;
}

} // namespace kiln::codegen::kerneltest

#endif // KILN_TESTS_UNIT_KERNELS_KERNELTESTSUPPORT_H
