//===- ShapeRules.cpp - static shape rules of kiln ops ----------------------===//

#include "ir/ShapeRules.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

using llvm::ArrayRef;

namespace kiln {
namespace {

llvm::Error shapeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Floor division for possibly negative numerators (denominator > 0).
int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

llvm::Error checkSpatialParams(ArrayRef<int64_t> input, size_t kernelRank, ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads) {
  if (input.size() < 3)
    return shapeError("expects an input of rank >= 3 ([N, C, spatial...]), got " +
                      formatShape(input));
  size_t spatial = input.size() - 2;
  if (kernelRank != spatial)
    return shapeError(llvm::formatv("kernel has {0} spatial axes but the input has {1}", kernelRank,
                                    spatial));
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial)
    return shapeError(llvm::formatv("needs {0} strides, {0} dilations and {1} pads, got {2}, {3} "
                                    "and {4}",
                                    spatial, 2 * spatial, strides.size(), dilations.size(),
                                    pads.size()));
  for (size_t i = 0; i < spatial; ++i) {
    if (strides[i] < 1 || dilations[i] < 1)
      return shapeError("strides and dilations must be >= 1");
    if (pads[i] < 0 || pads[i + spatial] < 0)
      return shapeError("pads must be >= 0");
  }
  return llvm::Error::success();
}

} // namespace

std::string formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

llvm::Expected<int64_t> normalizeAxis(int64_t axis, int64_t rank, llvm::StringRef what) {
  if (axis < -rank || axis >= rank)
    return shapeError(llvm::formatv("{0} {1} is out of range for rank {2} (valid: [{3}, {4}])",
                                    what, axis, rank, -rank, rank - 1));
  return axis < 0 ? axis + rank : axis;
}

llvm::Expected<int64_t> checkedElementCount(ArrayRef<int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return shapeError("dimension " + std::to_string(d) + " is negative");
    if (d != 0 && count > INT64_MAX / d)
      return shapeError("element count of shape " + formatShape(dims) + " overflows int64");
    count *= d;
  }
  return count;
}

bool broadcastsTo(ArrayRef<int64_t> shape, ArrayRef<int64_t> target) {
  if (shape.size() > target.size())
    return false;
  size_t lead = target.size() - shape.size();
  for (auto [d, size] : llvm::enumerate(shape))
    if (size != 1 && size != target[lead + d])
      return false;
  return true;
}

ShapeOrError broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return shapeError("shapes " + formatShape(a) + " and " + formatShape(b) +
                        " do not broadcast (axis " + std::to_string(i) + ": " +
                        std::to_string(da) + " vs " + std::to_string(db) + ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

ShapeOrError convShape(ArrayRef<int64_t> input, ArrayRef<int64_t> weight, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads, int64_t group) {
  if (weight.size() != input.size())
    return shapeError("weight rank " + std::to_string(weight.size()) + " differs from input rank " +
                      std::to_string(input.size()));
  if (auto err = checkSpatialParams(input, weight.size() - 2, strides, dilations, pads))
    return std::move(err);
  if (group < 1 || input[1] % group != 0 || weight[0] % group != 0)
    return shapeError(llvm::formatv("group {0} must divide input channels {1} and output "
                                    "channels {2}",
                                    group, input[1], weight[0]));
  if (weight[1] * group != input[1])
    return shapeError(llvm::formatv("weight expects {0} input channels per group, the input has "
                                    "{1} channels in {2} groups",
                                    weight[1], input[1], group));
  size_t spatial = input.size() - 2;
  Shape out = {input[0], weight[0]};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t window = (weight[i + 2] - 1) * dilations[i] + 1;
    int64_t padded = input[i + 2] + pads[i] + pads[i + spatial];
    if (padded < window)
      return shapeError(llvm::formatv("spatial axis {0}: padded size {1} is smaller than the "
                                      "dilated kernel {2}",
                                      i, padded, window));
    out.push_back((padded - window) / strides[i] + 1);
  }
  return out;
}

ShapeOrError convTransposeShape(ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
                                ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                                ArrayRef<int64_t> pads, ArrayRef<int64_t> outputPadding,
                                int64_t group) {
  if (weight.size() != input.size())
    return shapeError("weight rank " + std::to_string(weight.size()) + " differs from input rank " +
                      std::to_string(input.size()));
  if (auto err = checkSpatialParams(input, weight.size() - 2, strides, dilations, pads))
    return std::move(err);
  size_t spatial = input.size() - 2;
  if (outputPadding.size() != spatial)
    return shapeError(llvm::formatv("needs {0} output_padding values, got {1}", spatial,
                                    outputPadding.size()));
  for (int64_t p : outputPadding)
    if (p < 0)
      return shapeError("output_padding must be >= 0");
  if (group < 1 || input[1] % group != 0)
    return shapeError(llvm::formatv("group {0} must divide input channels {1}", group, input[1]));
  if (weight[0] != input[1])
    return shapeError(llvm::formatv("weight expects {0} input channels, the input has {1}",
                                    weight[0], input[1]));
  Shape out = {input[0], weight[1] * group};
  for (size_t i = 0; i < spatial; ++i) {
    int64_t size = strides[i] * (input[i + 2] - 1) + outputPadding[i] +
                   ((weight[i + 2] - 1) * dilations[i] + 1) - pads[i] - pads[i + spatial];
    if (size < 1)
      return shapeError(llvm::formatv("spatial axis {0}: output size {1} is not positive", i, size));
    out.push_back(size);
  }
  return out;
}

ShapeOrError poolShape(ArrayRef<int64_t> input, ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                       ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads, bool ceilMode) {
  if (auto err = checkSpatialParams(input, kernel.size(), strides, dilations, pads))
    return std::move(err);
  size_t spatial = input.size() - 2;
  Shape out = {input[0], input[1]};
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel[i] < 1)
      return shapeError("kernel_shape values must be >= 1");
    int64_t window = (kernel[i] - 1) * dilations[i] + 1;
    int64_t padded = input[i + 2] + pads[i] + pads[i + spatial];
    if (padded < window)
      return shapeError(llvm::formatv("spatial axis {0}: padded size {1} is smaller than the "
                                      "window {2}",
                                      i, padded, window));
    int64_t span = padded - window;
    int64_t size = (ceilMode ? ceilDiv(span, strides[i]) : floorDiv(span, strides[i])) + 1;
    // ONNX/PyTorch: with ceil_mode, the last window must start inside the input or left padding.
    if (ceilMode && (size - 1) * strides[i] >= input[i + 2] + pads[i])
      --size;
    out.push_back(size);
  }
  return out;
}

ShapeOrError matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  if (lhs.empty() || rhs.empty())
    return shapeError("matmul operands must have rank >= 1");
  Shape a(lhs.begin(), lhs.end()), b(rhs.begin(), rhs.end());
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  int64_t k = a.back();
  if (b[b.size() - 2] != k)
    return shapeError("matmul contraction sizes differ: " + formatShape(lhs) + " x " +
                      formatShape(rhs));
  auto batch = broadcastShapes(ArrayRef<int64_t>(a).drop_back(2), ArrayRef<int64_t>(b).drop_back(2));
  if (!batch)
    return batch.takeError();
  Shape out = *batch;
  if (!lhsVector)
    out.push_back(a[a.size() - 2]);
  if (!rhsVector)
    out.push_back(b.back());
  return out;
}

llvm::Expected<llvm::SmallVector<SliceAxis, 6>>
normalizeSlice(ArrayRef<int64_t> input, ArrayRef<int64_t> starts, ArrayRef<int64_t> ends,
               ArrayRef<int64_t> axes, ArrayRef<int64_t> steps) {
  int64_t rank = input.size();
  if (starts.size() != ends.size() || starts.size() != axes.size() || starts.size() != steps.size())
    return shapeError(llvm::formatv("slice starts, ends, axes and steps must have one length, got "
                                    "{0}, {1}, {2} and {3}",
                                    starts.size(), ends.size(), axes.size(), steps.size()));
  llvm::SmallVector<SliceAxis, 6> result;
  for (int64_t d : input)
    result.push_back({0, 1, d});
  llvm::SmallVector<bool, 6> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto axis = normalizeAxis(axes[i], rank, "slice axis");
    if (!axis)
      return axis.takeError();
    if (seen[*axis])
      return shapeError("slice axis " + std::to_string(*axis) + " is repeated");
    seen[*axis] = true;
    int64_t dim = input[*axis], step = steps[i];
    if (step == 0)
      return shapeError("slice step must not be 0");
    if (dim == 0) {
      result[*axis] = {0, step, 0};
      continue;
    }
    // ONNX: negative values count from the end; then start clamps to [0, dim] ([0, dim - 1]
    // for negative steps) and end to [0, dim] ([-1, dim - 1] for negative steps).
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    int64_t count = step > 0 ? std::max<int64_t>(0, ceilDiv(end - start, step))
                             : std::max<int64_t>(0, ceilDiv(start - end, -step));
    result[*axis] = {count == 0 ? 0 : start, step, count};
  }
  return result;
}

ShapeOrError sliceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> starts, ArrayRef<int64_t> ends,
                        ArrayRef<int64_t> axes, ArrayRef<int64_t> steps) {
  auto normalized = normalizeSlice(input, starts, ends, axes, steps);
  if (!normalized)
    return normalized.takeError();
  Shape out;
  for (const SliceAxis &a : *normalized)
    out.push_back(a.count);
  return out;
}

llvm::Expected<llvm::SmallVector<int64_t, 6>>
normalizeReduceAxes(int64_t rank, std::optional<ArrayRef<int64_t>> axes, bool noopWithEmptyAxes) {
  llvm::SmallVector<int64_t, 6> result;
  if (!axes || axes->empty()) {
    if (noopWithEmptyAxes)
      return result;
    for (int64_t i = 0; i < rank; ++i)
      result.push_back(i);
    return result;
  }
  for (int64_t a : *axes) {
    auto axis = normalizeAxis(a, rank, "reduction axis");
    if (!axis)
      return axis.takeError();
    if (llvm::is_contained(result, *axis))
      return shapeError("reduction axis " + std::to_string(*axis) + " is repeated");
    result.push_back(*axis);
  }
  llvm::sort(result);
  return result;
}

ShapeOrError reduceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> normalizedAxes, bool keepDims) {
  Shape out;
  for (size_t i = 0; i < input.size(); ++i) {
    if (!llvm::is_contained(normalizedAxes, (int64_t)i))
      out.push_back(input[i]);
    else if (keepDims)
      out.push_back(1);
  }
  return out;
}

ShapeOrError padShape(ArrayRef<int64_t> input, ArrayRef<int64_t> pads) {
  if (pads.size() != 2 * input.size())
    return shapeError(llvm::formatv("pads needs {0} values (2 x rank), got {1}", 2 * input.size(),
                                    pads.size()));
  Shape out;
  for (size_t i = 0; i < input.size(); ++i) {
    int64_t size = input[i] + pads[i] + pads[i + input.size()];
    if (size < 0)
      return shapeError(llvm::formatv("pads crop axis {0} below zero ({1})", i, size));
    out.push_back(size);
  }
  return out;
}

ShapeOrError gatherShape(ArrayRef<int64_t> input, ArrayRef<int64_t> indices, int64_t axis) {
  if (axis < 0 || axis >= (int64_t)input.size())
    return shapeError("gather axis out of range");
  Shape out(input.begin(), input.begin() + axis);
  out.append(indices.begin(), indices.end());
  out.append(input.begin() + axis + 1, input.end());
  return out;
}

ShapeOrError gatherNDShape(ArrayRef<int64_t> input, ArrayRef<int64_t> indices, int64_t batchDims) {
  int64_t inRank = input.size(), idxRank = indices.size();
  if (idxRank < 1 || batchDims < 0 || batchDims >= std::min(inRank, idxRank))
    return shapeError(llvm::formatv("gather_nd needs indices of rank >= 1 and batch_dims in [0, "
                                    "min(ranks)), got batch_dims {0} with ranks {1} and {2}",
                                    batchDims, inRank, idxRank));
  int64_t tuple = indices.back();
  if (tuple < 1 || tuple > inRank - batchDims)
    return shapeError(llvm::formatv("gather_nd index tuples have {0} entries; the input has {1} "
                                    "axes after the batch axes",
                                    tuple, inRank - batchDims));
  for (int64_t i = 0; i < batchDims; ++i)
    if (input[i] != indices[i])
      return shapeError("gather_nd batch axes of input and indices differ");
  Shape out(indices.begin(), indices.end() - 1);
  out.append(input.begin() + batchDims + tuple, input.end());
  return out;
}

ShapeOrError concatShape(ArrayRef<ArrayRef<int64_t>> inputs, int64_t axis) {
  if (inputs.empty())
    return shapeError("concat needs at least one input");
  Shape out(inputs[0].begin(), inputs[0].end());
  if (axis < 0 || axis >= (int64_t)out.size())
    return shapeError("concat axis " + std::to_string(axis) + " is out of range for rank " +
                      std::to_string(out.size()));
  for (size_t n = 1; n < inputs.size(); ++n) {
    if (inputs[n].size() != out.size())
      return shapeError("concat inputs differ in rank");
    for (size_t i = 0; i < out.size(); ++i) {
      if ((int64_t)i == axis)
        out[i] += inputs[n][i];
      else if (inputs[n][i] != out[i])
        return shapeError("concat input " + std::to_string(n) + " has shape " +
                          formatShape(inputs[n]) + ", which differs from " +
                          formatShape(inputs[0]) + " off the concat axis");
    }
  }
  return out;
}

ShapeOrError transposeShape(ArrayRef<int64_t> input, ArrayRef<int64_t> perm) {
  if (perm.size() != input.size())
    return shapeError("perm has " + std::to_string(perm.size()) + " entries for rank " +
                      std::to_string(input.size()));
  llvm::SmallVector<bool, 6> seen(input.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)input.size() || seen[p])
      return shapeError("perm is not a permutation of [0, rank)");
    seen[p] = true;
    out.push_back(input[p]);
  }
  return out;
}

ShapeOrError depthToSpaceShape(ArrayRef<int64_t> input, int64_t b) {
  // b > channels also guards b * b against overflow.
  if (input.size() != 4 || b < 1 || b > input[1] || input[1] % (b * b) != 0)
    return shapeError("depth_to_space needs a rank-4 input whose channels divide by blocksize^2");
  return Shape{input[0], input[1] / (b * b), input[2] * b, input[3] * b};
}

ShapeOrError spaceToDepthShape(ArrayRef<int64_t> input, int64_t b) {
  if (input.size() != 4 || b < 1 || b > (int64_t)1 << 31 || input[2] % b != 0 || input[3] % b != 0)
    return shapeError("space_to_depth needs a rank-4 input whose height and width divide by "
                      "blocksize");
  return Shape{input[0], input[1] * b * b, input[2] / b, input[3] / b};
}

EinsumTerms splitEinsum(llvm::StringRef equation) {
  std::string eq;
  for (char c : equation)
    if (c != ' ')
      eq += c;
  EinsumTerms result;
  llvm::StringRef lhs = eq;
  if (size_t arrow = lhs.find("->"); arrow != llvm::StringRef::npos) {
    result.output = lhs.substr(arrow + 2).str();
    lhs = lhs.substr(0, arrow);
  }
  llvm::SmallVector<llvm::StringRef, 4> terms;
  lhs.split(terms, ',');
  for (llvm::StringRef t : terms)
    result.inputs.push_back(t.str());
  return result;
}

ShapeOrError einsumShape(llvm::StringRef equation, ArrayRef<ArrayRef<int64_t>> inputs) {
  EinsumTerms split = splitEinsum(equation);
  llvm::SmallVector<llvm::StringRef, 4> terms(split.inputs.begin(), split.inputs.end());
  bool explicitOutput = split.output.has_value();
  llvm::StringRef rhs = explicitOutput ? llvm::StringRef(*split.output) : llvm::StringRef();
  if (terms.size() != inputs.size())
    return shapeError(llvm::formatv("einsum equation has {0} operands, the op has {1}",
                                    terms.size(), inputs.size()));
  std::map<char, int64_t> sizes;
  std::map<char, int> counts;
  Shape ellipsis;
  for (size_t n = 0; n < terms.size(); ++n) {
    llvm::StringRef term = terms[n];
    size_t dots = term.find("...");
    size_t labels = term.size() - (dots == llvm::StringRef::npos ? 0 : 3);
    if (labels > inputs[n].size())
      return shapeError("einsum term '" + term.str() + "' has more labels than operand rank");
    size_t ellipsisRank = inputs[n].size() - labels;
    if (dots == llvm::StringRef::npos && ellipsisRank != 0)
      return shapeError("einsum term '" + term.str() + "' does not match operand rank " +
                        std::to_string(inputs[n].size()));
    size_t dim = 0;
    for (size_t i = 0; i < term.size(); ++i) {
      if (i == dots) {
        auto part = inputs[n].slice(dim, ellipsisRank);
        auto merged = broadcastShapes(ellipsis, part);
        if (!merged)
          return merged.takeError();
        ellipsis = *merged;
        dim += ellipsisRank;
        i += 2;
        continue;
      }
      char c = term[i];
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return shapeError(std::string("einsum label '") + c + "' is not a letter");
      int64_t size = inputs[n][dim++];
      auto [it, inserted] = sizes.emplace(c, size);
      if (!inserted && it->second != size) {
        if (it->second == 1)
          it->second = size;
        else if (size != 1)
          return shapeError(std::string("einsum label '") + c + "' has sizes " +
                            std::to_string(it->second) + " and " + std::to_string(size));
      }
      counts[c]++;
    }
  }
  Shape out;
  if (!explicitOutput) {
    out = ellipsis;
    for (auto &[c, n] : counts)
      if (n == 1)
        out.push_back(sizes[c]);
    return out;
  }
  std::string seenLabels;
  for (size_t i = 0; i < rhs.size(); ++i) {
    if (rhs.substr(i).starts_with("...")) {
      out.append(ellipsis.begin(), ellipsis.end());
      i += 2;
      continue;
    }
    if (seenLabels.find(rhs[i]) != std::string::npos)
      return shapeError(std::string("einsum output label '") + rhs[i] + "' is repeated");
    seenLabels += rhs[i];
    auto it = sizes.find(rhs[i]);
    if (it == sizes.end())
      return shapeError(std::string("einsum output label '") + rhs[i] + "' is not an input label");
    out.push_back(it->second);
  }
  return out;
}

llvm::Expected<int64_t> rangeCount(double start, double limit, double delta) {
  if (delta == 0)
    return shapeError("range delta must not be 0");
  double n = std::ceil((limit - start) / delta);
  if (!(n >= 0))
    return 0;
  if (n > 1e15)
    return shapeError("range has too many elements");
  return static_cast<int64_t>(n);
}

llvm::SmallVector<int64_t, 6> channelsLastPermutation(int64_t rank) {
  llvm::SmallVector<int64_t, 6> perm = {0};
  for (int64_t axis = 2; axis < rank; ++axis)
    perm.push_back(axis);
  if (rank > 1)
    perm.push_back(1);
  return perm;
}

llvm::SmallVector<int64_t, 6> channelsFirstPermutation(int64_t rank) {
  llvm::SmallVector<int64_t, 6> perm = {0};
  if (rank > 1)
    perm.push_back(rank - 1);
  for (int64_t axis = 1; axis + 1 < rank; ++axis)
    perm.push_back(axis);
  return perm;
}

static Shape permuted(llvm::ArrayRef<int64_t> dims, llvm::ArrayRef<int64_t> perm) {
  Shape out;
  for (int64_t axis : perm)
    out.push_back(dims[axis]);
  return out;
}

Shape toChannelsLast(llvm::ArrayRef<int64_t> channelsFirst) {
  return permuted(channelsFirst, channelsLastPermutation(channelsFirst.size()));
}

Shape toChannelsFirst(llvm::ArrayRef<int64_t> channelsLast) {
  return permuted(channelsLast, channelsFirstPermutation(channelsLast.size()));
}

} // namespace kiln
