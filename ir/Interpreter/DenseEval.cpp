//===- DenseEval.cpp - conv, pooling, normalization, matmul, softmax --------===//
//
// Evaluators of the dense ops with ONNX semantics. Everything is computed in double and rounded
// once, when stored in the result's element type (storeDouble / roundToFloat), so f16/bf16
// results are the correctly rounded exact value (up to double accumulation). Convolutions are
// im2col + an Eigen matrix product, and transposed convolutions an Eigen product + col2im: a
// ResNet-50 forward must take seconds, not minutes. Pooling, norms, einsum and softmax are
// plain loops.
//
// Shapes come from the op's static result type: the shape rules (ir/ShapeRules.h) already
// resolved ceil_mode, output_padding and the like when the op was built and verified. Ops with
// `channels_last` are evaluated channels first between two permutations (eitherLayout).
//
//===----------------------------------------------------------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnOps.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

using namespace mlir;

namespace kiln::interp {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMatrix>;
using MatrixMap = Eigen::Map<RowMatrix>;

Tensor resultTensor(Operation *op, unsigned index = 0) {
  return Tensor::zeros(llvm::cast<RankedTensorType>(op->getResult(index).getType()));
}

/// Whether `op` (a conv or a pool) has `channels_last`: the channel axis last in its operands
/// and result.
bool channelsLast(Operation *op) {
  auto attr = op->getAttrOfType<BoolAttr>("channels_last");
  return attr && attr.getValue();
}

/// The op's result as a zero tensor, channels first even when the op is channels_last: the
/// evaluators of layout-sensitive ops compute the channels-first op, and eitherLayout permutes
/// around them.
Tensor channelsFirstResult(Operation *op) {
  Tensor y = resultTensor(op);
  if (channelsLast(op))
    y.shape = toChannelsFirst(y.shape);
  return y;
}

/// A layout-sensitive op in either layout. With `channels_last`, the operands of rank >= 3
/// (input and weight, not conv's bias) are permuted channels first, the channels-first
/// evaluator runs and its result is permuted back. Permutations copy values, so the result is
/// bit for bit the channels-first op's.
template <OpEvaluator Evaluate>
llvm::Expected<Results> eitherLayout(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  if (!channelsLast(op))
    return Evaluate(op, operands);
  std::vector<Tensor> permuted;
  permuted.reserve(operands.size()); // the pointers below stay valid
  llvm::SmallVector<const Tensor *> channelsFirst;
  for (const Tensor *operand : operands) {
    if (operand->shape.size() < 3) {
      channelsFirst.push_back(operand);
      continue;
    }
    permuted.push_back(transposeTensor(*operand, channelsFirstPermutation(operand->shape.size())));
    channelsFirst.push_back(&permuted.back());
  }
  auto results = Evaluate(op, channelsFirst);
  if (!results)
    return results.takeError();
  Tensor &y = results->front();
  y = transposeTensor(y, channelsLastPermutation(y.shape.size()));
  return results;
}

int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// For each element of `to` (row-major), the index of the element of `from` that numpy
/// broadcasting maps to it (`from` right-aligned; its size-1 axes repeat).
std::vector<int64_t> broadcastIndices(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to) {
  size_t rank = to.size(), offset = rank - from.size();
  Shape fromStrides = stridesOf(from);
  Shape strides(rank, 0);
  for (size_t a = offset; a < rank; ++a)
    strides[a] = from[a - offset] == 1 ? 0 : fromStrides[a - offset];
  std::vector<int64_t> indices(product(to));
  Shape idx(rank, 0);
  int64_t source = 0;
  for (int64_t k = 0; k < (int64_t)indices.size(); ++k) {
    indices[k] = source;
    for (int a = (int)rank - 1; a >= 0; --a) {
      source += strides[a];
      if (++idx[a] < to[a])
        break;
      source -= strides[a] * to[a];
      idx[a] = 0;
    }
  }
  return indices;
}

/// Adds with two's-complement wrap-around (integer ops wrap; signed overflow must not be UB).
int64_t wrapAdd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
int64_t wrapMul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

//===----------------------------------------------------------------------===//
// Sliding windows (conv, conv_transpose, pooling)
//===----------------------------------------------------------------------===//

/// The geometry of a sliding window over an image, with 1 or 2 spatial axes padded to 3
/// (leading unit axes) so every loop nest has a fixed depth. Window position `o` along an axis
/// covers image coordinates `o * stride - padBegin + k * dilation` for k in [0, kernel).
struct Window {
  int64_t image[3], positions[3], kernel[3], stride[3], dilation[3], padBegin[3], padEnd[3];

  int64_t imageSize() const { return image[0] * image[1] * image[2]; }
  int64_t positionCount() const { return positions[0] * positions[1] * positions[2]; }
  int64_t kernelSize() const { return kernel[0] * kernel[1] * kernel[2]; }
};

/// `imageShape` and `positionShape` are full [N, C, D...] shapes; the other arrays have one
/// value per spatial axis (pads: begins, then ends).
llvm::Expected<Window> makeWindow(Operation *op, llvm::ArrayRef<int64_t> imageShape,
                                  llvm::ArrayRef<int64_t> positionShape,
                                  llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> strides,
                                  llvm::ArrayRef<int64_t> dilations, llvm::ArrayRef<int64_t> pads) {
  int64_t spatial = (int64_t)imageShape.size() - 2;
  if (spatial < 1 || spatial > 3)
    return opError(op, "the interpreter supports 1 to 3 spatial axes, got " +
                           std::to_string(spatial));
  if ((int64_t)positionShape.size() != spatial + 2 || (int64_t)kernel.size() != spatial ||
      (int64_t)strides.size() != spatial || (int64_t)dilations.size() != spatial ||
      (int64_t)pads.size() != 2 * spatial)
    return opError(op, "window parameters do not match the spatial rank");
  Window w;
  int64_t lead = 3 - spatial;
  for (int64_t a = 0; a < 3; ++a) {
    if (a < lead) {
      w.image[a] = w.positions[a] = w.kernel[a] = w.stride[a] = w.dilation[a] = 1;
      w.padBegin[a] = w.padEnd[a] = 0;
      continue;
    }
    int64_t s = a - lead;
    w.image[a] = imageShape[s + 2];
    w.positions[a] = positionShape[s + 2];
    w.kernel[a] = kernel[s];
    w.stride[a] = strides[s];
    w.dilation[a] = dilations[s];
    w.padBegin[a] = pads[s];
    w.padEnd[a] = pads[s + spatial];
  }
  return w;
}

/// Unfolds `channels` planes of an image into a [channels * kernel, positions] row-major
/// matrix: row (c, k0, k1, k2), column p holds the image value under kernel tap k at window
/// position p (0 in the padding).
void im2col(const double *image, int64_t channels, const Window &w, double *col) {
  int64_t plane = w.imageSize(), count = w.positionCount();
  for (int64_t c = 0; c < channels; ++c) {
    const double *src = image + c * plane;
    for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0)
      for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1)
        for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
          double *row = col;
          col += count;
          for (int64_t o0 = 0; o0 < w.positions[0]; ++o0) {
            int64_t x0 = o0 * w.stride[0] - w.padBegin[0] + k0 * w.dilation[0];
            for (int64_t o1 = 0; o1 < w.positions[1]; ++o1) {
              int64_t x1 = o1 * w.stride[1] - w.padBegin[1] + k1 * w.dilation[1];
              if (x0 < 0 || x0 >= w.image[0] || x1 < 0 || x1 >= w.image[1]) {
                std::fill(row, row + w.positions[2], 0.0);
                row += w.positions[2];
                continue;
              }
              const double *line = src + (x0 * w.image[1] + x1) * w.image[2];
              for (int64_t o2 = 0; o2 < w.positions[2]; ++o2) {
                int64_t x2 = o2 * w.stride[2] - w.padBegin[2] + k2 * w.dilation[2];
                *row++ = x2 >= 0 && x2 < w.image[2] ? line[x2] : 0.0;
              }
            }
          }
        }
  }
}

/// The adjoint of im2col: adds each column entry into the image value under its kernel tap
/// (entries that fall into the padding are dropped).
void col2im(const double *col, int64_t channels, const Window &w, double *image) {
  int64_t plane = w.imageSize(), count = w.positionCount();
  for (int64_t c = 0; c < channels; ++c) {
    double *dst = image + c * plane;
    for (int64_t k0 = 0; k0 < w.kernel[0]; ++k0)
      for (int64_t k1 = 0; k1 < w.kernel[1]; ++k1)
        for (int64_t k2 = 0; k2 < w.kernel[2]; ++k2) {
          const double *row = col;
          col += count;
          for (int64_t o0 = 0; o0 < w.positions[0]; ++o0) {
            int64_t x0 = o0 * w.stride[0] - w.padBegin[0] + k0 * w.dilation[0];
            for (int64_t o1 = 0; o1 < w.positions[1]; ++o1) {
              int64_t x1 = o1 * w.stride[1] - w.padBegin[1] + k1 * w.dilation[1];
              if (x0 < 0 || x0 >= w.image[0] || x1 < 0 || x1 >= w.image[1]) {
                row += w.positions[2];
                continue;
              }
              double *line = dst + (x0 * w.image[1] + x1) * w.image[2];
              for (int64_t o2 = 0; o2 < w.positions[2]; ++o2, ++row) {
                int64_t x2 = o2 * w.stride[2] - w.padBegin[2] + k2 * w.dilation[2];
                if (x2 >= 0 && x2 < w.image[2])
                  line[x2] += *row;
              }
            }
          }
        }
  }
}

/// Adds the per-channel bias (if any) to a [N, M, ...] double buffer and rounds every value to
/// the element type.
void finishChannels(Tensor &y, const Tensor *bias) {
  FloatRounder round(llvm::cast<FloatType>(y.element));
  int64_t channels = y.shape[1], inner = product(llvm::ArrayRef<int64_t>(y.shape).drop_front(2));
  int64_t k = 0;
  for (int64_t n = 0; n < y.shape[0]; ++n)
    for (int64_t m = 0; m < channels; ++m) {
      double b = bias ? bias->f[m] : 0.0;
      for (int64_t p = 0; p < inner; ++p, ++k)
        y.f[k] = round(y.f[k] + b);
    }
}

llvm::Expected<Results> evalConv(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto conv = llvm::cast<ConvOp>(op);
  const Tensor &x = *operands[0], &w = *operands[1];
  const Tensor *bias = conv.getBias() ? operands[2] : nullptr;
  Tensor y = channelsFirstResult(op);
  auto window = makeWindow(op, x.shape, y.shape, llvm::ArrayRef<int64_t>(w.shape).drop_front(2),
                           conv.getStrides(), conv.getDilations(), conv.getPads());
  if (!window)
    return window.takeError();
  int64_t batch = x.shape[0], channels = x.shape[1], filters = w.shape[0];
  int64_t groups = (int64_t)conv.getGroup();
  int64_t groupChannels = channels / groups, groupFilters = filters / groups;
  int64_t rows = groupChannels * window->kernelSize(), count = window->positionCount();
  int64_t plane = window->imageSize();
  // A 1x1 kernel with unit strides and no padding reads the image as it is: skip the unfold.
  bool direct = window->kernelSize() == 1 && count == plane;
  for (int a = 0; a < 3; ++a)
    direct = direct && window->stride[a] == 1 && window->padBegin[a] == 0;
  std::vector<double> col(direct ? 0 : rows * count);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      const double *image = x.f.data() + (n * channels + g * groupChannels) * plane;
      if (!direct)
        im2col(image, groupChannels, *window, col.data());
      ConstMatrixMap weights(w.f.data() + g * groupFilters * rows, groupFilters, rows);
      ConstMatrixMap unfolded(direct ? image : col.data(), rows, count);
      MatrixMap out(y.f.data() + (n * filters + g * groupFilters) * count, groupFilters, count);
      out.noalias() = weights * unfolded;
    }
  finishChannels(y, bias);
  return oneResult(std::move(y));
}

llvm::Expected<Results> evalConvTranspose(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto conv = llvm::cast<ConvTransposeOp>(op);
  const Tensor &x = *operands[0], &w = *operands[1];
  const Tensor *bias = conv.getBias() ? operands[2] : nullptr;
  Tensor y = resultTensor(op);
  // The transposed convolution scatters each input position through the kernel: the same
  // geometry as a conv whose image is this op's output and whose window positions are the
  // input. output_padding only enlarges the output (the result type), so it needs no code.
  auto window = makeWindow(op, y.shape, x.shape, llvm::ArrayRef<int64_t>(w.shape).drop_front(2),
                           conv.getStrides(), conv.getDilations(), conv.getPads());
  if (!window)
    return window.takeError();
  int64_t batch = x.shape[0], channels = x.shape[1], filters = y.shape[1];
  int64_t groups = (int64_t)conv.getGroup();
  int64_t groupChannels = channels / groups, groupFilters = filters / groups;
  int64_t rows = groupFilters * window->kernelSize(), count = window->positionCount();
  int64_t plane = window->imageSize();
  RowMatrix col(rows, count);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      ConstMatrixMap weights(w.f.data() + g * groupChannels * rows, groupChannels, rows);
      ConstMatrixMap input(x.f.data() + (n * channels + g * groupChannels) * count, groupChannels,
                           count);
      col.noalias() = weights.transpose() * input;
      col2im(col.data(), groupFilters, *window,
             y.f.data() + (n * filters + g * groupFilters) * plane);
    }
  finishChannels(y, bias);
  return oneResult(std::move(y));
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Per axis and window position: the image coordinates the window covers inside the image,
/// and how many of its taps lie inside the padded image (ONNX/PyTorch clip a ceil_mode window
/// that runs past the end padding).
struct AxisTaps {
  std::vector<std::vector<int64_t>> inside; // [position] -> coordinates inside the image
  std::vector<int64_t> paddedCount;         // [position] -> taps inside the padded image
};

AxisTaps axisTaps(const Window &w, int axis) {
  AxisTaps taps;
  taps.inside.resize(w.positions[axis]);
  taps.paddedCount.assign(w.positions[axis], 0);
  for (int64_t o = 0; o < w.positions[axis]; ++o)
    for (int64_t k = 0; k < w.kernel[axis]; ++k) {
      int64_t x = o * w.stride[axis] - w.padBegin[axis] + k * w.dilation[axis];
      if (x >= 0 && x < w.image[axis])
        taps.inside[o].push_back(x);
      if (x >= -w.padBegin[axis] && x < w.image[axis] + w.padEnd[axis])
        ++taps.paddedCount[o];
    }
  return taps;
}

template <typename PoolOpT>
llvm::Expected<Window> poolWindow(PoolOpT pool, const Tensor &x, const Tensor &y) {
  return makeWindow(pool.getOperation(), x.shape, y.shape, pool.getKernelShape(), pool.getStrides(),
                    pool.getDilations(), pool.getPads());
}

/// Calls `visit(planeIndex, outputIndex, taps, paddedCount)` for every window, where `taps`
/// lists the in-image offsets (within the plane) the window covers.
template <typename Visit>
void forEachWindow(const Window &w, int64_t planes, Visit visit) {
  AxisTaps t0 = axisTaps(w, 0), t1 = axisTaps(w, 1), t2 = axisTaps(w, 2);
  std::vector<int64_t> offsets;
  int64_t out = 0;
  for (int64_t plane = 0; plane < planes; ++plane)
    for (int64_t o0 = 0; o0 < w.positions[0]; ++o0)
      for (int64_t o1 = 0; o1 < w.positions[1]; ++o1)
        for (int64_t o2 = 0; o2 < w.positions[2]; ++o2) {
          offsets.clear();
          for (int64_t x0 : t0.inside[o0])
            for (int64_t x1 : t1.inside[o1])
              for (int64_t x2 : t2.inside[o2])
                offsets.push_back((x0 * w.image[1] + x1) * w.image[2] + x2);
          int64_t padded = t0.paddedCount[o0] * t1.paddedCount[o1] * t2.paddedCount[o2];
          visit(plane, out++, llvm::ArrayRef<int64_t>(offsets), padded);
        }
}

llvm::Expected<Results> evalMaxPool(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &x = *operands[0];
  Tensor y = channelsFirstResult(op);
  auto window = poolWindow(llvm::cast<MaxPoolOp>(op), x, y);
  if (!window)
    return window.takeError();
  int64_t plane = window->imageSize(), planes = x.shape[0] * x.shape[1];
  if (x.isFloat()) {
    FloatRounder round(llvm::cast<FloatType>(y.element));
    forEachWindow(*window, planes, [&](int64_t p, int64_t out, llvm::ArrayRef<int64_t> taps, int64_t) {
      const double *src = x.f.data() + p * plane;
      double best = -std::numeric_limits<double>::infinity();
      for (int64_t t : taps) {
        if (std::isnan(src[t])) { // NaN propagates, as in kiln.max and PyTorch
          best = src[t];
          break;
        }
        best = std::max(best, src[t]);
      }
      y.f[out] = round(best);
    });
  } else {
    // i8 / ui8: the padding never wins; a window wholly in the padding yields the type's lowest.
    int64_t lowest = y.element.isUnsignedInteger() ? 0 : -128;
    forEachWindow(*window, planes, [&](int64_t p, int64_t out, llvm::ArrayRef<int64_t> taps, int64_t) {
      const int64_t *src = x.i.data() + p * plane;
      int64_t best = lowest;
      for (int64_t t : taps)
        best = std::max(best, src[t]);
      y.i[out] = best;
    });
  }
  return oneResult(std::move(y));
}

llvm::Expected<Results> evalAvgPool(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto pool = llvm::cast<AvgPoolOp>(op);
  const Tensor &x = *operands[0];
  Tensor y = channelsFirstResult(op);
  auto window = poolWindow(pool, x, y);
  if (!window)
    return window.takeError();
  bool includePad = pool.getCountIncludePad();
  int64_t plane = window->imageSize(), planes = x.shape[0] * x.shape[1];
  forEachWindow(*window, planes,
                [&](int64_t p, int64_t out, llvm::ArrayRef<int64_t> taps, int64_t padded) {
                  const double *src = x.f.data() + p * plane;
                  double sum = 0.0;
                  for (int64_t t : taps)
                    sum += src[t];
                  int64_t divisor = includePad ? padded : (int64_t)taps.size();
                  storeDouble(y, out, sum / (double)divisor);
                });
  return oneResult(std::move(y));
}

llvm::Expected<Results> evalGlobalAvgPool(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &x = *operands[0];
  Tensor y = channelsFirstResult(op);
  int64_t plane = product(llvm::ArrayRef<int64_t>(x.shape).drop_front(2));
  for (int64_t p = 0; p < y.size(); ++p) {
    double sum = 0.0;
    for (int64_t k = 0; k < plane; ++k)
      sum += x.f[p * plane + k];
    storeDouble(y, p, sum / (double)plane);
  }
  return oneResult(std::move(y));
}

llvm::Expected<Results> evalGlobalMaxPool(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &x = *operands[0];
  Tensor y = channelsFirstResult(op);
  int64_t plane = product(llvm::ArrayRef<int64_t>(x.shape).drop_front(2));
  for (int64_t p = 0; p < y.size(); ++p) {
    double best = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < plane; ++k) {
      double v = x.f[p * plane + k];
      if (std::isnan(v)) {
        best = v;
        break;
      }
      best = std::max(best, v);
    }
    storeDouble(y, p, best);
  }
  return oneResult(std::move(y));
}

//===----------------------------------------------------------------------===//
// Normalization (statistics in double, two passes: mean, then mean squared deviation)
//===----------------------------------------------------------------------===//

struct Moments {
  double mean, variance;
};

Moments moments(const double *values, int64_t count) {
  double sum = 0.0;
  for (int64_t k = 0; k < count; ++k)
    sum += values[k];
  double mean = sum / (double)count, squares = 0.0;
  for (int64_t k = 0; k < count; ++k)
    squares += (values[k] - mean) * (values[k] - mean);
  return {mean, squares / (double)count};
}

llvm::Expected<Results> evalBatchNorm(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto norm = llvm::cast<BatchNormOp>(op);
  const Tensor &x = *operands[0], &scale = *operands[1], &bias = *operands[2];
  const Tensor &mean = *operands[3], &variance = *operands[4];
  double epsilon = norm.getEpsilonAttr().getValueAsDouble();
  Tensor y = resultTensor(op);
  int64_t channels = x.shape[1], inner = product(llvm::ArrayRef<int64_t>(x.shape).drop_front(2));
  int64_t k = 0;
  for (int64_t n = 0; n < x.shape[0]; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      double stdDev = std::sqrt(variance.f[c] + epsilon);
      for (int64_t p = 0; p < inner; ++p, ++k)
        storeDouble(y, k, (x.f[k] - mean.f[c]) / stdDev * scale.f[c] + bias.f[c]);
    }
  return oneResult(std::move(y));
}

llvm::Expected<Results> evalInstanceNorm(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto norm = llvm::cast<InstanceNormOp>(op);
  const Tensor &x = *operands[0], &scale = *operands[1], &bias = *operands[2];
  double epsilon = norm.getEpsilonAttr().getValueAsDouble();
  Tensor y = resultTensor(op);
  int64_t channels = x.shape[1], inner = product(llvm::ArrayRef<int64_t>(x.shape).drop_front(2));
  for (int64_t n = 0; n < x.shape[0]; ++n)
    for (int64_t c = 0; c < channels; ++c) {
      int64_t base = (n * channels + c) * inner;
      Moments m = moments(x.f.data() + base, inner);
      double stdDev = std::sqrt(m.variance + epsilon);
      for (int64_t p = 0; p < inner; ++p)
        storeDouble(y, base + p, (x.f[base + p] - m.mean) / stdDev * scale.f[c] + bias.f[c]);
    }
  return oneResult(std::move(y));
}

llvm::Expected<Results> evalLayerNorm(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto norm = llvm::cast<LayerNormOp>(op);
  const Tensor &x = *operands[0], &scale = *operands[1];
  const Tensor *bias = norm.getBias() ? operands[2] : nullptr;
  double epsilon = norm.getEpsilonAttr().getValueAsDouble();
  int64_t axis = (int64_t)norm.getAxis();
  if (axis < 0 || axis >= (int64_t)x.shape.size())
    return opError(op, "axis " + std::to_string(axis) + " is out of range");
  Tensor y = resultTensor(op);
  llvm::ArrayRef<int64_t> normalized = llvm::ArrayRef<int64_t>(x.shape).drop_front(axis);
  int64_t inner = product(normalized), outer = x.size() / std::max<int64_t>(inner, 1);
  std::vector<int64_t> scaleIndex = broadcastIndices(scale.shape, normalized);
  std::vector<int64_t> biasIndex = bias ? broadcastIndices(bias->shape, normalized)
                                        : std::vector<int64_t>();
  for (int64_t o = 0; o < outer; ++o) {
    int64_t base = o * inner;
    Moments m = moments(x.f.data() + base, inner);
    double stdDev = std::sqrt(m.variance + epsilon);
    for (int64_t p = 0; p < inner; ++p) {
      double v = (x.f[base + p] - m.mean) / stdDev * scale.f[scaleIndex[p]];
      if (bias)
        v += bias->f[biasIndex[p]];
      storeDouble(y, base + p, v);
    }
  }
  return oneResult(std::move(y));
}

llvm::Expected<Results> evalGroupNorm(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto norm = llvm::cast<GroupNormOp>(op);
  const Tensor &x = *operands[0], &scale = *operands[1], &bias = *operands[2];
  double epsilon = norm.getEpsilonAttr().getValueAsDouble();
  int64_t groups = (int64_t)norm.getNumGroups(), channels = x.shape[1];
  if (groups < 1 || channels % groups != 0)
    return opError(op, "num_groups must divide the channels");
  Tensor y = resultTensor(op);
  int64_t inner = product(llvm::ArrayRef<int64_t>(x.shape).drop_front(2));
  int64_t groupChannels = channels / groups, groupSize = groupChannels * inner;
  for (int64_t n = 0; n < x.shape[0]; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t base = (n * groups + g) * groupSize;
      Moments m = moments(x.f.data() + base, groupSize);
      double stdDev = std::sqrt(m.variance + epsilon);
      for (int64_t c = 0; c < groupChannels; ++c) {
        int64_t channel = g * groupChannels + c;
        for (int64_t p = 0; p < inner; ++p) {
          int64_t k = base + c * inner + p;
          storeDouble(y, k, (x.f[k] - m.mean) / stdDev * scale.f[channel] + bias.f[channel]);
        }
      }
    }
  return oneResult(std::move(y));
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

llvm::Expected<Results> evalMatMul(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &a = *operands[0], &b = *operands[1];
  Tensor y = resultTensor(op);
  // numpy: a 1-d lhs is a row [1, K], a 1-d rhs a column [K, 1]; the result drops those axes,
  // which does not change its row-major layout.
  Shape aShape = a.shape, bShape = b.shape;
  if (aShape.size() == 1)
    aShape.insert(aShape.begin(), 1);
  if (bShape.size() == 1)
    bShape.push_back(1);
  int64_t m = aShape[aShape.size() - 2], k = aShape.back(), n = bShape.back();
  if (bShape[bShape.size() - 2] != k)
    return opError(op, "contraction sizes differ");
  llvm::ArrayRef<int64_t> aBatch = llvm::ArrayRef<int64_t>(aShape).drop_back(2);
  llvm::ArrayRef<int64_t> bBatch = llvm::ArrayRef<int64_t>(bShape).drop_back(2);
  auto batch = broadcastShapes(aBatch, bBatch);
  if (!batch)
    return opError(op, llvm::toString(batch.takeError()));
  std::vector<int64_t> aIndex = broadcastIndices(aBatch, *batch);
  std::vector<int64_t> bIndex = broadcastIndices(bBatch, *batch);
  if (y.isFloat()) {
    FloatRounder round(llvm::cast<FloatType>(y.element));
    RowMatrix product(m, n);
    for (size_t p = 0; p < aIndex.size(); ++p) {
      ConstMatrixMap lhs(a.f.data() + aIndex[p] * m * k, m, k);
      ConstMatrixMap rhs(b.f.data() + bIndex[p] * k * n, k, n);
      product.noalias() = lhs * rhs;
      double *out = y.f.data() + p * m * n;
      for (int64_t e = 0; e < m * n; ++e)
        out[e] = round(product.data()[e]);
    }
  } else {
    auto type = llvm::cast<IntegerType>(y.element);
    for (size_t p = 0; p < aIndex.size(); ++p) {
      const int64_t *lhs = a.i.data() + aIndex[p] * m * k, *rhs = b.i.data() + bIndex[p] * k * n;
      int64_t *out = y.i.data() + p * m * n;
      for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) {
          int64_t sum = 0;
          for (int64_t j = 0; j < k; ++j)
            sum = wrapAdd(sum, wrapMul(lhs[r * k + j], rhs[j * n + c]));
          out[r * n + c] = wrapToInteger(sum, type);
        }
    }
  }
  return oneResult(std::move(y));
}

llvm::Expected<Results> evalGemm(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto gemm = llvm::cast<GemmOp>(op);
  const Tensor &a = *operands[0], &b = *operands[1];
  const Tensor *c = gemm.getC() ? operands[2] : nullptr;
  double alpha = gemm.getAlphaAttr().getValueAsDouble(), beta = gemm.getBetaAttr().getValueAsDouble();
  bool transA = gemm.getTransA(), transB = gemm.getTransB();
  Tensor y = resultTensor(op);
  int64_t m = y.shape[0], n = y.shape[1], k = transA ? a.shape[0] : a.shape[1];
  std::vector<int64_t> cIndex = c ? broadcastIndices(c->shape, y.shape) : std::vector<int64_t>();
  if (y.isFloat()) {
    ConstMatrixMap lhs(a.f.data(), a.shape[0], a.shape[1]);
    ConstMatrixMap rhs(b.f.data(), b.shape[0], b.shape[1]);
    RowMatrix product(m, n);
    if (transA && transB)
      product.noalias() = lhs.transpose() * rhs.transpose();
    else if (transA)
      product.noalias() = lhs.transpose() * rhs;
    else if (transB)
      product.noalias() = lhs * rhs.transpose();
    else
      product.noalias() = lhs * rhs;
    for (int64_t e = 0; e < m * n; ++e)
      storeDouble(y, e, alpha * product.data()[e] + (c ? beta * c->f[cIndex[e]] : 0.0));
    return oneResult(std::move(y));
  }
  // Integers: the product is exact (wrapping) in int64; non-unit alpha/beta scale in double
  // and truncate, as ONNX's reference does with numpy.
  auto type = llvm::cast<IntegerType>(y.element);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < n; ++col) {
      int64_t sum = 0;
      for (int64_t j = 0; j < k; ++j) {
        int64_t lhs = transA ? a.i[j * m + r] : a.i[r * k + j];
        int64_t rhs = transB ? b.i[col * k + j] : b.i[j * n + col];
        sum = wrapAdd(sum, wrapMul(lhs, rhs));
      }
      int64_t e = r * n + col;
      int64_t cValue = c ? c->i[cIndex[e]] : 0;
      if (alpha == 1.0 && (beta == 1.0 || !c))
        y.i[e] = wrapToInteger(wrapAdd(sum, cValue), type);
      else
        storeDouble(y, e, alpha * (double)sum + beta * (double)cValue);
    }
  return oneResult(std::move(y));
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

/// An einsum equation with every axis named by a label id: letters are their character code,
/// the axes under `...` are kEllipsisLabel + position (right-aligned across operands).
struct EinsumPlan {
  static constexpr int kEllipsisLabel = 256;
  std::vector<std::vector<int>> inputLabels; // per operand, one label per axis
  std::vector<int> outputLabels;
};

llvm::Expected<EinsumPlan> parseEinsum(Operation *op, llvm::StringRef equation,
                                       llvm::ArrayRef<const Tensor *> operands) {
  EinsumTerms split = splitEinsum(equation);
  llvm::SmallVector<llvm::StringRef, 4> terms(split.inputs.begin(), split.inputs.end());
  bool explicitOutput = split.output.has_value();
  llvm::StringRef rhs = explicitOutput ? llvm::StringRef(*split.output) : llvm::StringRef();
  if (terms.size() != operands.size())
    return opError(op, "equation has " + std::to_string(terms.size()) + " operand terms, the op " +
                           std::to_string(operands.size()) + " operands");
  // The ellipsis covers as many axes as the longest operand puts under it.
  int64_t ellipsisRank = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    size_t dots = terms[t].find("...");
    int64_t letters = (int64_t)terms[t].size() - (dots == llvm::StringRef::npos ? 0 : 3);
    int64_t rank = (int64_t)operands[t]->shape.size();
    if (dots == llvm::StringRef::npos ? letters != rank : letters > rank)
      return opError(op, "term '" + terms[t].str() + "' does not match operand rank " +
                             std::to_string(rank));
    if (dots != llvm::StringRef::npos)
      ellipsisRank = std::max(ellipsisRank, rank - letters);
  }
  EinsumPlan plan;
  std::map<int, int> counts;
  for (size_t t = 0; t < terms.size(); ++t) {
    std::vector<int> labels;
    int64_t rank = (int64_t)operands[t]->shape.size();
    for (size_t i = 0; i < terms[t].size(); ++i) {
      if (terms[t].substr(i).starts_with("...")) {
        int64_t letters = (int64_t)terms[t].size() - 3;
        int64_t own = rank - letters;
        for (int64_t e = ellipsisRank - own; e < ellipsisRank; ++e)
          labels.push_back(EinsumPlan::kEllipsisLabel + (int)e);
        i += 2;
        continue;
      }
      char c = terms[t][i];
      if (!std::isalpha(static_cast<unsigned char>(c)))
        return opError(op, std::string("label '") + c + "' is not a letter");
      labels.push_back((unsigned char)c);
      counts[(unsigned char)c]++;
    }
    plan.inputLabels.push_back(std::move(labels));
  }
  if (!explicitOutput) {
    // numpy: the ellipsis axes, then the labels seen once, in alphabetical (ASCII) order.
    for (int64_t e = 0; e < ellipsisRank; ++e)
      plan.outputLabels.push_back(EinsumPlan::kEllipsisLabel + (int)e);
    for (auto [label, count] : counts)
      if (count == 1)
        plan.outputLabels.push_back(label);
    return plan;
  }
  for (size_t i = 0; i < rhs.size(); ++i) {
    if (rhs.substr(i).starts_with("...")) {
      for (int64_t e = 0; e < ellipsisRank; ++e)
        plan.outputLabels.push_back(EinsumPlan::kEllipsisLabel + (int)e);
      i += 2;
      continue;
    }
    int label = (unsigned char)rhs[i];
    if (!counts.count(label))
      return opError(op, std::string("output label '") + rhs[i] + "' is not an input label");
    plan.outputLabels.push_back(label);
  }
  return plan;
}

llvm::Expected<Results> evalEinsum(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto einsum = llvm::cast<EinsumOp>(op);
  auto plan = parseEinsum(op, einsum.getEquation(), operands);
  if (!plan)
    return plan.takeError();
  Tensor y = resultTensor(op);
  // Every label becomes one loop: the output labels first (in output order), then the summed
  // ones. A label's size is its largest size among the operands (size-1 axes broadcast).
  std::vector<int> loops = plan->outputLabels;
  std::map<int, int64_t> sizes;
  for (size_t t = 0; t < operands.size(); ++t)
    for (size_t a = 0; a < plan->inputLabels[t].size(); ++a) {
      int label = plan->inputLabels[t][a];
      int64_t size = operands[t]->shape[a];
      auto [it, inserted] = sizes.emplace(label, size);
      if (!inserted && it->second == 1)
        it->second = size;
      if (!llvm::is_contained(loops, label))
        loops.push_back(label);
    }
  for (size_t a = 0; a < plan->outputLabels.size(); ++a)
    if (sizes[plan->outputLabels[a]] != y.shape[a])
      return opError(op, "the result type does not match the equation");
  size_t depth = loops.size();
  Shape extent(depth);
  for (size_t l = 0; l < depth; ++l)
    extent[l] = sizes[loops[l]];
  // Per operand and loop: how far its flat index moves when the loop advances by one (a label
  // repeated within an operand adds its strides: a diagonal; a broadcast axis moves 0).
  std::vector<Shape> step(operands.size(), Shape(depth, 0));
  for (size_t t = 0; t < operands.size(); ++t) {
    Shape strides = stridesOf(operands[t]->shape);
    for (size_t a = 0; a < plan->inputLabels[t].size(); ++a) {
      if (operands[t]->shape[a] == 1)
        continue;
      size_t l = llvm::find(loops, plan->inputLabels[t][a]) - loops.begin();
      step[t][l] += strides[a];
    }
  }
  Shape outStep(depth, 0);
  Shape outStrides = stridesOf(y.shape);
  for (size_t a = 0; a < plan->outputLabels.size(); ++a)
    outStep[a] = outStrides[a];
  if (product(extent) == 0)
    return oneResult(std::move(y)); // an empty loop: zeros (or an empty result)
  std::vector<double> floatSums(y.isFloat() ? y.size() : 0, 0.0);
  std::vector<int64_t> intSums(y.isFloat() ? 0 : y.size(), 0);
  Shape idx(depth, 0);
  Shape offset(operands.size(), 0);
  int64_t out = 0;
  while (true) {
    if (y.isFloat()) {
      double term = 1.0;
      for (size_t t = 0; t < operands.size(); ++t)
        term *= operands[t]->f[offset[t]];
      floatSums[out] += term;
    } else {
      int64_t term = 1;
      for (size_t t = 0; t < operands.size(); ++t)
        term = wrapMul(term, operands[t]->i[offset[t]]);
      intSums[out] = wrapAdd(intSums[out], term);
    }
    int l = (int)depth - 1;
    for (; l >= 0; --l) {
      for (size_t t = 0; t < operands.size(); ++t)
        offset[t] += step[t][l];
      out += outStep[l];
      if (++idx[l] < extent[l])
        break;
      for (size_t t = 0; t < operands.size(); ++t)
        offset[t] -= step[t][l] * extent[l];
      out -= outStep[l] * extent[l];
      idx[l] = 0;
    }
    if (l < 0)
      break;
  }
  if (y.isFloat()) {
    for (int64_t e = 0; e < y.size(); ++e)
      storeDouble(y, e, floatSums[e]);
  } else {
    auto type = llvm::cast<IntegerType>(y.element);
    for (int64_t e = 0; e < y.size(); ++e)
      y.i[e] = wrapToInteger(intSums[e], type);
  }
  return oneResult(std::move(y));
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

template <bool Log>
llvm::Expected<Results> evalSoftmax(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &x = *operands[0];
  int64_t axis = (int64_t)llvm::cast<IntegerAttr>(op->getAttr("axis")).getInt();
  if (axis < 0 || axis >= (int64_t)x.shape.size())
    return opError(op, "axis " + std::to_string(axis) + " is out of range");
  Tensor y = resultTensor(op);
  llvm::ArrayRef<int64_t> shape = x.shape;
  int64_t length = shape[axis], inner = product(shape.drop_front(axis + 1));
  int64_t outer = product(shape.take_front(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      int64_t base = o * length * inner + in;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < length; ++j)
        max = std::max(max, x.f[base + j * inner]);
      double sum = 0.0;
      for (int64_t j = 0; j < length; ++j)
        sum += std::exp(x.f[base + j * inner] - max);
      for (int64_t j = 0; j < length; ++j) {
        double shifted = x.f[base + j * inner] - max;
        storeDouble(y, base + j * inner, Log ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
  return oneResult(std::move(y));
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// kiln.attention in f64 from the stored operands, rounded once into the result (the op's
/// rounding promise); operands and result are read and written through their views.
llvm::Expected<Results> evalAttention(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto attention = llvm::cast<AttentionOp>(op);
  const Tensor &q = *operands[0], &k = *operands[1], &v = *operands[2];
  const Tensor *mask = attention.getMask() ? operands[3] : nullptr;
  llvm::ArrayRef<int64_t> d = attention.getDims();
  int64_t B = d[0], H = d[1], Sq = d[2], Skv = d[3], D = d[4], Dv = d[5];
  llvm::ArrayRef<int64_t> qv = attention.getQView(), kv = attention.getKView(), vv = attention.getVView(),
                          ov = attention.getOView();
  llvm::ArrayRef<int64_t> mv = mask ? *attention.getMaskView() : llvm::ArrayRef<int64_t>();
  auto at = [](llvm::ArrayRef<int64_t> view, int64_t b, int64_t h, int64_t s, int64_t e) {
    return view[0] + b * view[1] + h * view[2] + s * view[3] + e * view[4];
  };
  double scale = attention.getScale().convertToFloat();
  bool causal = attention.getCausal();
  Tensor y = resultTensor(op);
  std::vector<double> scores(Skv), out(Dv);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Sq; ++i) {
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < Skv; ++j) {
          double dot = 0.0;
          for (int64_t e = 0; e < D; ++e)
            dot += q.f[at(qv, b, h, i, e)] * k.f[at(kv, b, h, j, e)];
          double x = scale * dot + (mask ? mask->f[at(mv, b, h, i, j)] : 0.0);
          if (causal && j > i)
            x = -std::numeric_limits<double>::infinity();
          scores[j] = x;
          max = std::max(max, x);
        }
        double sum = 0.0;
        for (int64_t j = 0; j < Skv; ++j)
          sum += scores[j] = std::exp(scores[j] - max);
        std::fill(out.begin(), out.end(), 0.0);
        for (int64_t j = 0; j < Skv; ++j)
          for (int64_t e = 0; e < Dv; ++e)
            out[e] += scores[j] / sum * v.f[at(vv, b, h, j, e)];
        for (int64_t e = 0; e < Dv; ++e)
          storeDouble(y, at(ov, b, h, i, e), out[e]);
      }
  return oneResult(std::move(y));
}

} // namespace

void registerDenseEvaluators(EvaluatorTable &table) {
  table.add("kiln.conv", eitherLayout<evalConv>);
  table.add("kiln.conv_transpose", evalConvTranspose);
  table.add("kiln.max_pool", eitherLayout<evalMaxPool>);
  table.add("kiln.avg_pool", eitherLayout<evalAvgPool>);
  table.add("kiln.global_avg_pool", eitherLayout<evalGlobalAvgPool>);
  table.add("kiln.global_max_pool", eitherLayout<evalGlobalMaxPool>);
  table.add("kiln.batch_norm", evalBatchNorm);
  table.add("kiln.instance_norm", evalInstanceNorm);
  table.add("kiln.layer_norm", evalLayerNorm);
  table.add("kiln.group_norm", evalGroupNorm);
  table.add("kiln.matmul", evalMatMul);
  table.add("kiln.gemm", evalGemm);
  table.add("kiln.einsum", evalEinsum);
  table.add("kiln.softmax", evalSoftmax<false>);
  table.add("kiln.log_softmax", evalSoftmax<true>);
  table.add("kiln.attention", evalAttention);
}

} // namespace kiln::interp
