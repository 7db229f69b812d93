//===- DataMovementEval.cpp - interpreter evaluators for data movement -----===//
//
// Reshape, transpose, concat, split, slice, the gathers, expand, tile, pad, range, trilu,
// depth/space rearrangements and resize, with ONNX semantics. Almost every op here is an index
// map: each result element is a copy of one input element (or a fill value). They share one
// loop, `gatherInto`, that walks the result in row-major order and asks the op where each
// element comes from; the op-specific code is only that mapping. Copies move the stored `f` or
// `i` value unchanged, so no op here rounds -- except resize, which interpolates in double and
// rounds once at the end (as the ONNX reference computes in float64 and casts the result).
//
//===----------------------------------------------------------------------===//

#include "ir/Interpreter/Interpreter.h"
#include "ir/KilnOps.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace mlir;

namespace kiln::interp {
namespace {

//===----------------------------------------------------------------------===//
// The shared index-mapping machinery
//===----------------------------------------------------------------------===//

Tensor resultOf(Operation *op, unsigned n = 0) {
  return Tensor::zeros(llvm::cast<RankedTensorType>(op->getResult(n).getType()));
}

/// Copies element k of `src` into element j of `dst` (one element type).
void copyElement(Tensor &dst, int64_t j, const Tensor &src, int64_t k) {
  if (dst.isFloat())
    dst.f[j] = src.f[k];
  else
    dst.i[j] = src.i[k];
}

/// Calls fn(coords, flat) for every element of `shape` in row-major order.
template <typename Fn>
void forEachCoord(llvm::ArrayRef<int64_t> shape, Fn fn) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  Shape coords(shape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    fn(llvm::ArrayRef<int64_t>(coords), flat);
    for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
      if (++coords[d] < shape[d])
        break;
      coords[d] = 0;
    }
  }
}

/// Fills `dst` from `src`: sourceOf(result coordinates) gives the flat index of the source
/// element, or -1 to leave the result element as it is (a fill value set beforehand).
template <typename SourceOf>
void gatherInto(Tensor &dst, const Tensor &src, SourceOf sourceOf) {
  forEachCoord(dst.shape, [&](llvm::ArrayRef<int64_t> coords, int64_t j) {
    int64_t k = sourceOf(coords);
    if (k >= 0)
      copyElement(dst, j, src, k);
  });
}

/// The value of a rank-0 (or one-element) operand as a double / an integer.
double scalarDouble(const Tensor &t) { return t.getDouble(0); }
int64_t scalarInt(const Tensor &t) { return t.isFloat() ? (int64_t)t.f[0] : t.i[0]; }

/// Wraps a possibly negative index into [0, dim), or fails naming it.
llvm::Expected<int64_t> wrapIndex(Operation *op, int64_t index, int64_t dim, int64_t axis) {
  if (index < -dim || index >= dim)
    return opError(op, "index " + std::to_string(index) + " is out of range for axis " +
                           std::to_string(axis) + " of size " + std::to_string(dim));
  return index < 0 ? index + dim : index;
}

llvm::Error shapeMismatch(Operation *op, llvm::ArrayRef<int64_t> computed,
                          llvm::ArrayRef<int64_t> declared) {
  return opError(op, "operand values give shape " + formatShape(computed) +
                         ", the result type declares " + formatShape(declared));
}

//===----------------------------------------------------------------------===//
// Reshape, transpose, concat, split, slice
//===----------------------------------------------------------------------===//

llvm::Expected<Results> evalReshape(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  // Row-major reinterpretation: the values stay in order.
  Tensor out = resultOf(op);
  out.f = operands[0]->f;
  out.i = operands[0]->i;
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalTranspose(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  return oneResult(transposeTensor(*operands[0], llvm::cast<TransposeOp>(op).getPerm()));
}

llvm::Expected<Results> evalConcat(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  int64_t axis = (int64_t)llvm::cast<ConcatOp>(op).getAxis();
  Tensor out = resultOf(op);
  Shape outStrides = stridesOf(out.shape);
  // Each input lands in its own band along the axis.
  int64_t offset = 0;
  for (const Tensor *in : operands) {
    forEachCoord(in->shape, [&](llvm::ArrayRef<int64_t> c, int64_t k) {
      int64_t j = offset * outStrides[axis];
      for (size_t d = 0; d < c.size(); ++d)
        j += c[d] * outStrides[d];
      copyElement(out, j, *in, k);
    });
    offset += in->shape[axis];
  }
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalSplit(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0];
  int64_t axis = (int64_t)llvm::cast<SplitOp>(op).getAxis();
  Shape inStrides = stridesOf(in.shape);
  Results results;
  int64_t offset = 0;
  for (unsigned r = 0; r < op->getNumResults(); ++r) {
    Tensor out = resultOf(op, r);
    gatherInto(out, in, [&](llvm::ArrayRef<int64_t> c) {
      int64_t k = offset * inStrides[axis];
      for (size_t d = 0; d < c.size(); ++d)
        k += c[d] * inStrides[d];
      return k;
    });
    offset += out.shape[axis];
    results.push_back(std::move(out));
  }
  return results;
}

llvm::Expected<Results> evalSlice(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0];
  auto slice = normalizeSlice(in.shape, operands[1]->i, operands[2]->i, operands[3]->i,
                              operands[4]->i);
  if (!slice)
    return opError(op, llvm::toString(slice.takeError()));
  Tensor out = resultOf(op);
  Shape computed;
  for (const SliceAxis &a : *slice)
    computed.push_back(a.count);
  if (computed != out.shape)
    return shapeMismatch(op, computed, out.shape);
  Shape inStrides = stridesOf(in.shape);
  gatherInto(out, in, [&](llvm::ArrayRef<int64_t> c) {
    int64_t k = 0;
    for (size_t d = 0; d < c.size(); ++d)
      k += ((*slice)[d].start + c[d] * (*slice)[d].step) * inStrides[d];
    return k;
  });
  return oneResult(std::move(out));
}

//===----------------------------------------------------------------------===//
// Gathers
//===----------------------------------------------------------------------===//

llvm::Expected<Results> evalGather(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0], &indices = *operands[1];
  int64_t axis = (int64_t)llvm::cast<GatherOp>(op).getAxis();
  // Check and wrap every index first, so the copy loop cannot fail.
  std::vector<int64_t> wrapped(indices.i.size());
  for (size_t n = 0; n < wrapped.size(); ++n) {
    auto index = wrapIndex(op, indices.i[n], in.shape[axis], axis);
    if (!index)
      return index.takeError();
    wrapped[n] = *index;
  }
  Tensor out = resultOf(op);
  Shape inStrides = stridesOf(in.shape), idxStrides = stridesOf(indices.shape);
  int64_t q = indices.shape.size();
  // Result coordinates: input axes before `axis`, then the index axes, then the input axes after.
  gatherInto(out, in, [&](llvm::ArrayRef<int64_t> c) {
    int64_t k = 0, n = 0;
    for (int64_t d = 0; d < axis; ++d)
      k += c[d] * inStrides[d];
    for (int64_t t = 0; t < q; ++t)
      n += c[axis + t] * idxStrides[t];
    k += wrapped[n] * inStrides[axis];
    for (int64_t d = axis + 1; d < (int64_t)in.shape.size(); ++d)
      k += c[d - 1 + q] * inStrides[d];
    return k;
  });
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalGatherElements(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0], &indices = *operands[1];
  int64_t axis = (int64_t)llvm::cast<GatherElementsOp>(op).getAxis();
  // Type inference checks only ranks; off the axis, indices must fit inside the input.
  for (size_t d = 0; d < in.shape.size(); ++d)
    if ((int64_t)d != axis && indices.shape[d] > in.shape[d])
      return opError(op, "indices shape " + formatShape(indices.shape) +
                             " exceeds the input shape " + formatShape(in.shape) + " off axis " +
                             std::to_string(axis));
  std::vector<int64_t> wrapped(indices.i.size());
  for (size_t n = 0; n < wrapped.size(); ++n) {
    auto index = wrapIndex(op, indices.i[n], in.shape[axis], axis);
    if (!index)
      return index.takeError();
    wrapped[n] = *index;
  }
  Tensor out = resultOf(op); // the shape of `indices`
  Shape inStrides = stridesOf(in.shape);
  forEachCoord(out.shape, [&](llvm::ArrayRef<int64_t> c, int64_t j) {
    int64_t k = 0;
    for (size_t d = 0; d < c.size(); ++d)
      k += ((int64_t)d == axis ? wrapped[j] : c[d]) * inStrides[d];
    copyElement(out, j, in, k);
  });
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalGatherND(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0], &indices = *operands[1];
  int64_t batchDims = (int64_t)llvm::cast<GatherNDOp>(op).getBatchDims();
  int64_t q = indices.shape.size(), tuple = indices.shape.back();
  // Entry m of every index tuple addresses input axis batchDims + m.
  std::vector<int64_t> wrapped(indices.i.size());
  for (size_t n = 0; n < wrapped.size(); ++n) {
    int64_t axis = batchDims + (int64_t)n % tuple;
    auto index = wrapIndex(op, indices.i[n], in.shape[axis], axis);
    if (!index)
      return index.takeError();
    wrapped[n] = *index;
  }
  Tensor out = resultOf(op);
  Shape inStrides = stridesOf(in.shape), idxStrides = stridesOf(indices.shape);
  // Result coordinates: indices.shape[:-1] (the first batchDims are the batch axes), then the
  // input axes after the addressed ones.
  gatherInto(out, in, [&](llvm::ArrayRef<int64_t> c) {
    int64_t k = 0, base = 0;
    for (int64_t d = 0; d < batchDims; ++d)
      k += c[d] * inStrides[d];
    for (int64_t d = 0; d < q - 1; ++d)
      base += c[d] * idxStrides[d];
    for (int64_t m = 0; m < tuple; ++m)
      k += wrapped[base + m] * inStrides[batchDims + m];
    for (int64_t d = batchDims + tuple; d < (int64_t)in.shape.size(); ++d)
      k += c[q - 1 + d - batchDims - tuple] * inStrides[d];
    return k;
  });
  return oneResult(std::move(out));
}

//===----------------------------------------------------------------------===//
// Expand, tile, pad
//===----------------------------------------------------------------------===//

llvm::Expected<Results> evalExpand(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0];
  Tensor out = resultOf(op);
  Shape inStrides = stridesOf(in.shape);
  int64_t lead = out.shape.size() - in.shape.size();
  // Numpy broadcasting: shapes align at the right; size-1 input axes repeat.
  gatherInto(out, in, [&](llvm::ArrayRef<int64_t> c) {
    int64_t k = 0;
    for (size_t d = 0; d < in.shape.size(); ++d)
      k += (in.shape[d] == 1 ? 0 : c[d + lead]) * inStrides[d];
    return k;
  });
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalTile(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0];
  Tensor out = resultOf(op);
  Shape inStrides = stridesOf(in.shape);
  gatherInto(out, in, [&](llvm::ArrayRef<int64_t> c) {
    int64_t k = 0;
    for (size_t d = 0; d < c.size(); ++d)
      k += c[d] % in.shape[d] * inStrides[d];
    return k;
  });
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalPad(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0], &value = *operands[2];
  const std::vector<int64_t> &pads = operands[1]->i;
  llvm::StringRef mode = llvm::cast<PadOp>(op).getMode();
  int64_t rank = in.shape.size();
  Tensor out = resultOf(op);
  auto computed = padShape(in.shape, pads);
  if (!computed)
    return opError(op, llvm::toString(computed.takeError()));
  if (*computed != out.shape)
    return shapeMismatch(op, *computed, out.shape);
  // Negative pads crop the input first; the remaining (non-negative) pads then extend the
  // cropped input, so reflect/edge/wrap read from what is left (as onnxruntime does).
  Shape keptBegin(rank), keptSize(rank), padBegin(rank);
  for (int64_t d = 0; d < rank; ++d) {
    keptBegin[d] = std::max<int64_t>(0, -pads[d]);
    keptSize[d] = in.shape[d] + std::min<int64_t>(0, pads[d]) + std::min<int64_t>(0, pads[d + rank]);
    padBegin[d] = std::max<int64_t>(0, pads[d]);
    if (keptSize[d] == 0 && mode != "constant" && out.size() > 0)
      return opError(op, "cannot pad an empty axis " + std::to_string(d) + " in " + mode.str() +
                             " mode");
  }
  if (mode == "constant")
    for (int64_t j = 0; j < out.size(); ++j)
      copyElement(out, j, value, 0);
  Shape inStrides = stridesOf(in.shape);
  gatherInto(out, in, [&](llvm::ArrayRef<int64_t> c) {
    int64_t k = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t t = c[d] - padBegin[d], n = keptSize[d];
      if (t < 0 || t >= n) {
        if (mode == "constant")
          return (int64_t)-1;
        if (mode == "edge") {
          t = std::clamp<int64_t>(t, 0, n - 1);
        } else if (mode == "wrap") {
          t = ((t % n) + n) % n;
        } else { // reflect (numpy): mirror without repeating the edge, periodically
          int64_t period = 2 * (n - 1);
          if (period == 0) {
            t = 0;
          } else {
            t = ((t % period) + period) % period;
            if (t >= n)
              t = period - t;
          }
        }
      }
      k += (keptBegin[d] + t) * inStrides[d];
    }
    return k;
  });
  return oneResult(std::move(out));
}

//===----------------------------------------------------------------------===//
// Range, trilu
//===----------------------------------------------------------------------===//

llvm::Expected<Results> evalRange(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &start = *operands[0], &limit = *operands[1], &delta = *operands[2];
  Tensor out = resultOf(op);
  auto count = rangeCount(scalarDouble(start), scalarDouble(limit), scalarDouble(delta));
  if (!count)
    return opError(op, llvm::toString(count.takeError()));
  if (*count != out.shape[0])
    return shapeMismatch(op, {*count}, out.shape);
  for (int64_t n = 0; n < out.shape[0]; ++n) {
    if (out.isFloat())
      storeDouble(out, n, start.f[0] + (double)n * delta.f[0]);
    else
      out.i[n] = wrapToInteger(start.i[0] + n * delta.i[0], llvm::cast<IntegerType>(out.element));
  }
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalTrilu(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0];
  int64_t k = scalarInt(*operands[1]);
  bool upper = llvm::cast<TriluOp>(op).getUpper();
  Tensor out = resultOf(op);
  size_t rank = in.shape.size();
  // Element (row, col) of the last two axes stays when col - row >= k (upper) or <= k (lower).
  forEachCoord(in.shape, [&](llvm::ArrayRef<int64_t> c, int64_t j) {
    int64_t diagonal = c[rank - 1] - c[rank - 2];
    if (upper ? diagonal >= k : diagonal <= k)
      copyElement(out, j, in, j);
  });
  return oneResult(std::move(out));
}

//===----------------------------------------------------------------------===//
// Depth/space rearrangements
//===----------------------------------------------------------------------===//

llvm::Expected<Results> evalDepthToSpace(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0];
  auto d2s = llvm::cast<DepthToSpaceOp>(op);
  int64_t b = (int64_t)d2s.getBlocksize();
  bool crd = d2s.getMode() == "CRD";
  Tensor out = resultOf(op);
  int64_t channels = out.shape[1];
  Shape inStrides = stridesOf(in.shape);
  // out[n, c, h*b + i, w*b + j] = in[n, (i*b + j)*C' + c, h, w] (DCR: depth, column, row)
  //                             = in[n, c*b*b + i*b + j, h, w]   (CRD: column, row, depth).
  gatherInto(out, in, [&](llvm::ArrayRef<int64_t> c) {
    int64_t i = c[2] % b, j = c[3] % b;
    int64_t inChannel = crd ? c[1] * b * b + i * b + j : (i * b + j) * channels + c[1];
    return c[0] * inStrides[0] + inChannel * inStrides[1] + c[2] / b * inStrides[2] +
           c[3] / b * inStrides[3];
  });
  return oneResult(std::move(out));
}

llvm::Expected<Results> evalSpaceToDepth(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  const Tensor &in = *operands[0];
  int64_t b = (int64_t)llvm::cast<SpaceToDepthOp>(op).getBlocksize();
  Tensor out = resultOf(op);
  int64_t channels = in.shape[1];
  Shape inStrides = stridesOf(in.shape);
  // out[n, (i*b + j)*C + c, h, w] = in[n, c, h*b + i, w*b + j].
  gatherInto(out, in, [&](llvm::ArrayRef<int64_t> c) {
    int64_t block = c[1] / channels, channel = c[1] % channels;
    int64_t i = block / b, j = block % b;
    return c[0] * inStrides[0] + channel * inStrides[1] + (c[2] * b + i) * inStrides[2] +
           (c[3] * b + j) * inStrides[3];
  });
  return oneResult(std::move(out));
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//
//
// Follows onnx/reference/ops/op_resize.py: separable, one axis at a time in float64; per output
// position x along an axis, a source coordinate x_ori from the coordinate transformation, a
// ratio in (0, 1] (1 when x_ori is a whole number: the pixel on the left is preferred), a kernel
// of n coefficients (nearest 2, linear 2, cubic 4) over n neighbouring input positions, edge
// clamped; the result is rounded to the element type once at the end.

struct ResizeParams {
  llvm::StringRef mode, transform, nearestMode;
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolationValue = 0.0;
  std::optional<FloatType> roiType;
};

/// The kernel for one output position.
llvm::SmallVector<double, 4> resizeCoeffs(const ResizeParams &p, double ratio) {
  if (p.mode == "nearest") {
    if (ratio == std::floor(ratio))
      return {0, 1};
    if (p.nearestMode == "round_prefer_floor")
      return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (p.nearestMode == "round_prefer_ceil")
      return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (p.nearestMode == "floor")
      return {1, 0};
    return {0, 1}; // ceil
  }
  if (p.mode == "linear")
    return {1 - ratio, ratio};
  double a = p.cubicA, r = ratio, s = 1 - ratio;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * s - (a + 3)) * s * s + 1,
          ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

/// One output position along one axis: its neighbours (clamped) and their weights, or the
/// extrapolation value when tf_crop_and_resize maps it outside the input.
struct ResizeTap {
  bool extrapolated = false;
  llvm::SmallVector<int64_t, 4> index;
  llvm::SmallVector<double, 4> weight;
};

std::vector<ResizeTap> resizeTaps(const ResizeParams &p, int64_t inSize, int64_t outSize,
                                  double scale, double roiBegin, double roiEnd) {
  double outWidth = scale * (double)inSize; // may differ from outSize when `scales` is given
  // roi arithmetic happens in the roi's element type in the reference (numpy scalars).
  auto inRoiType = [&](double v) { return p.roiType ? roundToFloat(v, *p.roiType) : v; };
  std::vector<ResizeTap> taps(outSize);
  for (int64_t y = 0; y < outSize; ++y) {
    double x = (double)y, xOri = 0;
    llvm::StringRef t = p.transform;
    if (t == "align_corners") {
      xOri = outWidth == 1 ? 0.0 : x * (double)(inSize - 1) / (outWidth - 1);
    } else if (t == "asymmetric") {
      xOri = x / scale;
    } else if (t == "tf_crop_and_resize") {
      double extent = inRoiType(roiEnd - roiBegin);
      xOri = outWidth == 1 ? inRoiType(inRoiType(extent * (double)(inSize - 1)) / 2)
                           : x * extent * (double)(inSize - 1) / (outWidth - 1);
      xOri += inRoiType(roiBegin * (double)(inSize - 1));
      if (xOri < 0 || xOri > (double)(inSize - 1)) {
        taps[y].extrapolated = true;
        continue;
      }
    } else if (t == "pytorch_half_pixel") {
      xOri = outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
    } else if (t == "half_pixel_symmetric") {
      double adjustment = (double)outSize / outWidth;
      double center = (double)inSize / 2;
      double offset = center * (1 - adjustment);
      xOri = offset + (x + 0.5) / scale - 0.5;
    } else if (t == "tf_half_pixel_for_nn") {
      xOri = (x + 0.5) / scale;
    } else { // half_pixel
      xOri = (x + 0.5) / scale - 0.5;
    }
    double xOriInt = std::floor(xOri);
    double ratio = xOri == xOriInt ? 1.0 : xOri - xOriInt;
    llvm::SmallVector<double, 4> coeffs = resizeCoeffs(p, ratio);
    int64_t n = coeffs.size();
    // The n neighbours nearest to xOri, ties to the left (an even kernel; as the reference
    // computes it, in edge-padded coordinates).
    int64_t pad = (n + 1) / 2;
    double xPadded = xOri + (double)pad;
    double pPadded = std::floor(xPadded);
    int64_t first = (int64_t)pPadded + (xPadded - pPadded == 0 ? -(n / 2) : -(n / 2) + 1) - pad;
    ResizeTap &tap = taps[y];
    double sum = 0;
    for (int64_t m = 0; m < n; ++m) {
      int64_t index = first + m;
      double w = coeffs[m];
      if (p.excludeOutside && (index < 0 || index >= inSize))
        w = 0;
      sum += w;
      tap.index.push_back(std::clamp<int64_t>(index, 0, inSize - 1));
      tap.weight.push_back(w);
    }
    if (p.excludeOutside && sum != 0)
      for (double &w : tap.weight)
        w /= sum;
  }
  return taps;
}

llvm::Expected<Results> evalResize(Operation *op, llvm::ArrayRef<const Tensor *> operands) {
  auto resize = llvm::cast<ResizeOp>(op);
  const Tensor &in = *operands[0];
  unsigned next = 1;
  const Tensor *scales = resize.getScales() ? operands[next++] : nullptr;
  const Tensor *roi = resize.getRoi() ? operands[next++] : nullptr;
  ResizeParams p;
  p.mode = resize.getMode();
  p.transform = resize.getCoordinateTransformationMode();
  p.nearestMode = resize.getNearestMode();
  p.cubicA = resize.getCubicCoeffA().convertToFloat();
  p.excludeOutside = resize.getExcludeOutside();
  p.extrapolationValue = resize.getExtrapolationValue().convertToFloat();
  if (roi)
    p.roiType = llvm::cast<FloatType>(roi->element);

  Tensor out = resultOf(op);
  int64_t rank = in.shape.size();
  if (out.size() == 0)
    return oneResult(std::move(out));
  for (int64_t d = 0; d < rank; ++d)
    if (in.shape[d] == 0)
      return opError(op, "cannot resize the empty axis " + std::to_string(d) + " to " +
                             std::to_string(out.shape[d]));

  // Resample one axis at a time (interpolation is separable), in double.
  std::vector<double> values = in.f;
  Shape shape = in.shape;
  for (int64_t axis = 0; axis < rank; ++axis) {
    int64_t inSize = shape[axis], outSize = out.shape[axis];
    double scale = scales ? scales->f[axis] : (double)outSize / (double)inSize;
    double roiBegin = roi ? roi->f[axis] : 0.0, roiEnd = roi ? roi->f[axis + rank] : 1.0;
    // Python's math.isclose, as the reference skips identity axes.
    auto isClose = [](double a, double b) {
      return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
    };
    if (isClose(scale, 1.0) && outSize == inSize &&
        (!roi || (roiBegin == 0.0 && isClose(roiEnd, 1.0))))
      continue; // identity along this axis
    std::vector<ResizeTap> taps = resizeTaps(p, inSize, outSize, scale, roiBegin, roiEnd);
    Shape newShape = shape;
    newShape[axis] = outSize;
    Shape strides = stridesOf(shape);
    int64_t count = 1;
    for (int64_t d : newShape)
      count *= d;
    std::vector<double> next(count);
    forEachCoord(newShape, [&](llvm::ArrayRef<int64_t> c, int64_t j) {
      const ResizeTap &tap = taps[c[axis]];
      if (tap.extrapolated) {
        next[j] = p.extrapolationValue;
        return;
      }
      int64_t base = 0;
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis)
          base += c[d] * strides[d];
      double v = 0;
      for (size_t m = 0; m < tap.index.size(); ++m)
        if (tap.weight[m] != 0) // a zero weight never turns an inf or NaN neighbour into NaN
          v += tap.weight[m] * values[base + tap.index[m] * strides[axis]];
      next[j] = v;
    });
    values = std::move(next);
    shape = std::move(newShape);
  }
  for (int64_t j = 0; j < out.size(); ++j)
    storeDouble(out, j, values[j]);
  return oneResult(std::move(out));
}

} // namespace

Tensor transposeTensor(const Tensor &in, llvm::ArrayRef<int64_t> perm) {
  Tensor out;
  out.element = in.element;
  for (int64_t axis : perm)
    out.shape.push_back(in.shape[axis]);
  out.f.resize(in.f.size());
  out.i.resize(in.i.size());
  Shape inStrides = stridesOf(in.shape);
  // Output axis i is input axis perm[i].
  gatherInto(out, in, [&](llvm::ArrayRef<int64_t> c) {
    int64_t k = 0;
    for (size_t i = 0; i < c.size(); ++i)
      k += c[i] * inStrides[perm[i]];
    return k;
  });
  return out;
}

void registerDataMovementEvaluators(EvaluatorTable &table) {
  table.add("kiln.reshape", evalReshape);
  table.add("kiln.transpose", evalTranspose);
  table.add("kiln.concat", evalConcat);
  table.add("kiln.split", evalSplit);
  table.add("kiln.slice", evalSlice);
  table.add("kiln.gather", evalGather);
  table.add("kiln.gather_elements", evalGatherElements);
  table.add("kiln.gather_nd", evalGatherND);
  table.add("kiln.expand", evalExpand);
  table.add("kiln.tile", evalTile);
  table.add("kiln.pad", evalPad);
  table.add("kiln.range", evalRange);
  table.add("kiln.trilu", evalTrilu);
  table.add("kiln.depth_to_space", evalDepthToSpace);
  table.add("kiln.space_to_depth", evalSpaceToDepth);
  table.add("kiln.resize", evalResize);
}

} // namespace kiln::interp
