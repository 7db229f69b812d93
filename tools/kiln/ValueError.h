//===- ValueError.h - how far one evaluation of a value is from another -*- C++ -*-===//
//
// The error measures `kiln compare` reports and `kiln compile --precision auto` budgets: B
// against A, max absolute error, max error relative to max |A|, cosine similarity; channels-last
// values aligned to the other side's layout; and how much error a value gains over its inputs
// (where error grows, not where it arrives).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_VALUEERROR_H
#define KILN_TOOLS_KILN_VALUEERROR_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

struct ValueError {
  double maxAbs = 0;
  double maxRel = 0; // maxAbs / max |A| (maxAbs when A is all zeros)
  double cosine = 1;
};

/// B's error against A (same size, same order). The same infinity or NaN on both sides is no
/// error and no part of the cosine (a mask's -inf, say); a non-finite value on one side, or
/// another one on the other, is an infinite error and makes the cosine 0. Every measure but
/// an infinite maxAbs/maxRel is finite.
ValueError measureError(llvm::ArrayRef<double> a, llvm::ArrayRef<double> b);

/// How B's values were put in A's element order.
enum class Alignment { Same, BChannelsLast, AChannelsLast, Mismatch };

/// "same", "b channels last", "a channels last", "shapes differ".
const char *alignmentName(Alignment alignment);

/// Puts `b` (of shape `bShape`) in the element order of A (of shape `aShape`): unchanged when
/// the shapes agree, permuted when one side is the other's 4-d tensor channels last (NHWC
/// against NCHW); Mismatch otherwise.
Alignment alignToA(std::vector<double> &b, const std::vector<int64_t> &aShape, const std::vector<int64_t> &bShape);

/// One value of an evaluation, for errorBroughtByInputs: its inputs (ONNX value or graph input
/// names) and its own relative error when it was compared.
struct ErrorEdge {
  std::vector<std::string> inputs;
  std::optional<double> maxRel;
};

/// The largest relative error `inputs` bring: a compared input's own; an input that was not
/// compared (folded or fused on one side) brings what its inputs bring, back to compared values
/// or graph inputs (0). `lookup` gives a value's edge, nullptr for names it does not know.
double errorBroughtByInputs(const std::vector<std::string> &inputs,
                            const std::function<const ErrorEdge *(const std::string &)> &lookup);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_VALUEERROR_H
