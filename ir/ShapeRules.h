//===- ShapeRules.h - static shape rules of kiln ops -------------*- C++ -*-===//
//
// Pure functions from operand shapes and parameters to result shapes. The op verifiers and
// result-type inference use them, and so does the ONNX importer (which knows parameter values
// before any op exists), so the two can never disagree about a shape.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_IR_SHAPERULES_H
#define KILN_IR_SHAPERULES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace kiln {

using Shape = llvm::SmallVector<int64_t, 6>;
using ShapeOrError = llvm::Expected<Shape>;

/// Axis in [-rank, rank) to [0, rank); error names `what` otherwise.
llvm::Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank, llvm::StringRef what = "axis");

/// Product of dims, or an error when it overflows int64 or a dim is negative.
llvm::Expected<int64_t> checkedElementCount(llvm::ArrayRef<int64_t> dims);

/// Whether `shape` broadcasts (numpy) to `target` without changing it.
bool broadcastsTo(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> target);

/// Numpy broadcasting of two or more shapes.
ShapeOrError broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// [N, C, D1..Dk] → [N, D1..Dk, C]: the permutation kiln.transpose takes (rank >= 2).
llvm::SmallVector<int64_t, 6> channelsLastPermutation(int64_t rank);
/// [N, D1..Dk, C] → [N, C, D1..Dk], the inverse of channelsLastPermutation.
llvm::SmallVector<int64_t, 6> channelsFirstPermutation(int64_t rank);
/// A shape in the other order (the same permutations applied to dims).
Shape toChannelsLast(llvm::ArrayRef<int64_t> channelsFirst);
Shape toChannelsFirst(llvm::ArrayRef<int64_t> channelsLast);

/// Convolution: input [N, C, D...], weight [M, C/group, K...].
ShapeOrError convShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> weight,
                       llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> dilations,
                       llvm::ArrayRef<int64_t> pads, int64_t group);

/// Transposed convolution: input [N, C, D...], weight [C, M/group, K...].
ShapeOrError convTransposeShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> weight,
                                llvm::ArrayRef<int64_t> strides,
                                llvm::ArrayRef<int64_t> dilations, llvm::ArrayRef<int64_t> pads,
                                llvm::ArrayRef<int64_t> outputPadding, int64_t group);

/// Pooling window over the spatial axes of [N, C, D...].
ShapeOrError poolShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> kernel,
                       llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> dilations,
                       llvm::ArrayRef<int64_t> pads, bool ceilMode);

/// numpy.matmul (1-d operands are promoted and the added axis removed again).
ShapeOrError matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// One axis of an ONNX Slice after clamping: the first index, the step and the element count.
struct SliceAxis {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};
/// Normalizes ONNX Slice parameters to one SliceAxis per input axis (untouched axes take all).
llvm::Expected<llvm::SmallVector<SliceAxis, 6>>
normalizeSlice(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> starts,
               llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> axes,
               llvm::ArrayRef<int64_t> steps);
ShapeOrError sliceShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> starts,
                        llvm::ArrayRef<int64_t> ends, llvm::ArrayRef<int64_t> axes,
                        llvm::ArrayRef<int64_t> steps);

/// Normalized, sorted, unique reduction axes; nullopt axes means "no axes given". The result is
/// empty when nothing is reduced (noop_with_empty_axes with no axes).
llvm::Expected<llvm::SmallVector<int64_t, 6>>
normalizeReduceAxes(int64_t rank, std::optional<llvm::ArrayRef<int64_t>> axes, bool noopWithEmptyAxes);
ShapeOrError reduceShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> normalizedAxes,
                         bool keepDims);

/// Pad: `pads` holds 2 * rank values, begins then ends (negative crops).
ShapeOrError padShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> pads);

/// Gather along a (normalized) axis.
ShapeOrError gatherShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> indices,
                         int64_t axis);

/// ONNX GatherND with `batchDims` leading batch axes.
ShapeOrError gatherNDShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> indices,
                           int64_t batchDims);

/// Concatenation along a (normalized) axis.
ShapeOrError concatShape(llvm::ArrayRef<llvm::ArrayRef<int64_t>> inputs, int64_t axis);

/// Transpose with a permutation of [0, rank).
ShapeOrError transposeShape(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> perm);

ShapeOrError depthToSpaceShape(llvm::ArrayRef<int64_t> input, int64_t blocksize);
ShapeOrError spaceToDepthShape(llvm::ArrayRef<int64_t> input, int64_t blocksize);

/// An einsum equation split into its operand terms and, when it has `->`, its output term
/// (spaces removed).
struct EinsumTerms {
  llvm::SmallVector<std::string, 4> inputs;
  std::optional<std::string> output;
};
EinsumTerms splitEinsum(llvm::StringRef equation);

/// numpy.einsum shape rule, with implicit output (sorted labels seen once) and `...`.
ShapeOrError einsumShape(llvm::StringRef equation,
                         llvm::ArrayRef<llvm::ArrayRef<int64_t>> inputs);

/// Number of elements of a Range, or an error for a zero delta.
llvm::Expected<int64_t> rangeCount(double start, double limit, double delta);

/// Formats a shape as 1x3x224x224 (or "scalar").
std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace kiln

#endif // KILN_IR_SHAPERULES_H
