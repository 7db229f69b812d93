//===- NormPoolResize.cpp - kiln.resize kernel -----------------------------===//
//
// Resize is separable: along each resized axis an output position reads a few input positions
// with fixed weights. Those taps depend only on shapes, attributes and the constant scales/roi,
// so they are computed here on the host -- with the reference interpreter's own arithmetic
// (ir/Interpreter/DataMovementEval.cpp, in double) -- and baked into the source as tables.
// One thread per output element then sums over the taps of every resized axis, nested in the
// order the interpreter resamples the axes (first axis innermost), in double, and rounds once
// when storing. Nearest mode, whose taps are single positions with weight 1, becomes a pure
// gather from an offset table.
//
// Runtime (non-constant) scales or roi change the taps at run time: such ops go to the kernel of
// NormPoolResizeRuntime.cpp, which computes the taps on the device.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/NormPoolKernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace kiln::codegen::normpool {

double roundToDType(double value, DType type) {
  int precision = 0, minExponent = 0;
  double largest = 0;
  bool hasInfinity = true;
  switch (type) {
  case DType::F64: return value;
  case DType::F32: precision = 24, minExponent = -126, largest = std::numeric_limits<float>::max(); break;
  case DType::F16: precision = 11, minExponent = -14, largest = 65504.0; break;
  case DType::BF16: precision = 8, minExponent = -126, largest = 0x1.fep127; break;
  case DType::F8E4M3FN: precision = 4, minExponent = -6, largest = 448.0, hasInfinity = false; break;
  default: return value;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (std::isnan(value) || value == 0)
    return value;
  if (std::isinf(value))
    return hasInfinity ? value : nan;
  // Quantum of the binade (fixed below the normal range: subnormals); dividing by a power of two
  // is exact, and nearbyint rounds half to even in the default rounding mode.
  int exponent = std::max(std::ilogb(value), minExponent);
  double quantum = std::ldexp(1.0, exponent - (precision - 1));
  double rounded = std::nearbyint(value / quantum) * quantum;
  if (std::fabs(rounded) > largest)
    return hasInfinity ? std::copysign(std::numeric_limits<double>::infinity(), value) : nan;
  return rounded;
}

namespace {

/// The kernel for one output position (resizeCoeffs in the interpreter).
std::vector<double> resizeCoeffs(const ResizeAxisParams &p, double ratio) {
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
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * s - (a + 3)) * s * s + 1, ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

} // namespace

std::vector<ResizeAxisTap> resizeAxisTaps(const ResizeAxisParams &p, int64_t inSize, int64_t outSize, double scale,
                                          double roiBegin, double roiEnd) {
  double outWidth = scale * (double)inSize; // may differ from outSize when `scales` is given
  // roi arithmetic happens in the roi's element type in the reference (numpy scalars).
  auto inRoiType = [&](double v) { return p.roiType ? roundToDType(v, *p.roiType) : v; };
  std::vector<ResizeAxisTap> taps(outSize);
  for (int64_t y = 0; y < outSize; ++y) {
    double x = (double)y, xOri = 0;
    const std::string &t = p.transform;
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
    std::vector<double> coeffs = resizeCoeffs(p, ratio);
    int64_t n = coeffs.size();
    // The n neighbours nearest to xOri, ties to the left, in edge-padded coordinates.
    int64_t pad = (n + 1) / 2;
    double xPadded = xOri + (double)pad;
    double pPadded = std::floor(xPadded);
    int64_t first = (int64_t)pPadded + (xPadded - pPadded == 0 ? -(n / 2) : -(n / 2) + 1) - pad;
    ResizeAxisTap &tap = taps[y];
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

namespace {

/// The most taps (over all resized axes) baked into one resize kernel's tables.
constexpr int64_t kMaxTableEntries = int64_t(1) << 20;

/// A resized axis: its taps and where its tables live in the source.
struct ResizedAxis {
  int64_t axis = 0;
  int64_t taps = 0; // per output position
  std::vector<ResizeAxisTap> table;
  bool anyExtrapolated = false;
};

std::string doubleText(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

template <typename T, typename Format>
std::string tableSource(const std::string &type, const std::string &name, const std::vector<T> &values,
                        Format format) {
  std::ostringstream os;
  os << "__device__ const " << type << " " << name << "[" << std::max<size_t>(values.size(), 1) << "] = {";
  for (size_t k = 0; k < values.size(); ++k)
    os << (k % 16 == 0 ? "\n  " : " ") << format(values[k]) << ",";
  if (values.empty())
    os << "0";
  os << "\n};\n";
  return os.str();
}

bool oneOf(const std::string &value, std::initializer_list<const char *> allowed) {
  for (const char *a : allowed)
    if (value == a)
      return true;
  return false;
}

/// Python's math.isclose with its default tolerance, as the reference skips identity axes.
bool isClose(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

/// The nested tap sums of resized axes [0, level), innermost first; `v<level>` ends up holding
/// the value interpolated along axes [0, level) at offset `o<level+1>`.
void emitTapSum(std::ostringstream &os, const std::vector<ResizedAxis> &axes, size_t level, const std::string &fn,
                const std::string &extrapolation, const std::string &indent) {
  const ResizedAxis &a = axes[level - 1];
  std::string k = std::to_string(level), c = "c" + std::to_string(a.axis), n = literalInt(a.taps);
  os << indent << "double v" << k << ";\n";
  std::string in = indent;
  if (a.anyExtrapolated) {
    os << indent << "if (" << fn << "_e" << k << "[" << c << "]) {\n"
       << indent << "  v" << k << " = " << extrapolation << ";\n"
       << indent << "} else {\n";
    in += "  ";
  }
  os << in << "v" << k << " = 0.0;\n"
     << in << "#pragma unroll\n"
     << in << "for (int m" << k << " = 0; m" << k << " < " << a.taps << "; ++m" << k << ") {\n"
     << in << "  const double w" << k << " = " << fn << "_w" << k << "[" << c << " * " << n << " + m" << k << "];\n"
     // A zero weight never turns an inf or NaN neighbour into NaN.
     << in << "  if (w" << k << " == 0.0)\n"
     << in << "    continue;\n"
     << in << "  const kiln_i64 o" << k << " = o" << level + 1 << " + " << fn << "_i" << k << "[" << c << " * " << n
     << " + m" << k << "];\n";
  if (level == 1) {
    os << in << "  v1 += w1 * (double)kiln_ld(x, o1);\n";
  } else {
    emitTapSum(os, axes, level - 1, fn, extrapolation, in + "  ");
    os << in << "  v" << k << " += w" << k << " * v" << level - 1 << ";\n";
  }
  os << in << "}\n";
  if (a.anyExtrapolated)
    os << indent << "}\n";
}

} // namespace

StatusOr<EmittedKernels> emitResize(const OpDesc &op, const EmitContext &context) {
  KILN_NP_TRY(checkArity(op, 3, 1));
  auto input = requireOperand(op, 0, "input");
  if (!input.isOk())
    return input.status();
  const TensorDesc &x = *input.value();
  KILN_NP_TRY(requireFloat(op, x, "input"));
  const TensorDesc &y = op.results[0];
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (y.dtype != x.dtype || static_cast<int64_t>(y.shape.size()) != rank)
    return op.error("the result must have the input's element type and rank");

  ResizeAxisParams p;
  p.mode = op.attrString("mode", "nearest");
  p.transform = op.attrString("coordinate_transformation_mode", "half_pixel");
  p.nearestMode = op.attrString("nearest_mode", "round_prefer_floor");
  // F32 attributes: the interpreter reads them as float.
  p.cubicA = static_cast<double>(static_cast<float>(op.attrFloat("cubic_coeff_a", -0.75)));
  p.excludeOutside = op.attrInt("exclude_outside", 0) != 0;
  double extrapolationValue = static_cast<double>(static_cast<float>(op.attrFloat("extrapolation_value", 0.0)));
  if (!oneOf(p.mode, {"nearest", "linear", "cubic"}))
    return op.error("unsupported mode '" + p.mode + "' (nearest, linear or cubic)");
  if (!oneOf(p.transform, {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_crop_and_resize", "tf_half_pixel_for_nn"}))
    return op.error("unsupported coordinate_transformation_mode '" + p.transform + "'");
  if (!oneOf(p.nearestMode, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}))
    return op.error("unsupported nearest_mode '" + p.nearestMode + "'");

  const std::optional<TensorDesc> &scales = op.operands[1], &roi = op.operands[2];
  if (scales) {
    if (scales->dtype != DType::F32 || scales->shape != std::vector<int64_t>{rank})
      return op.error("scales must be a 1-d f32 tensor of shape [" + std::to_string(rank) + "]");
    if (scales->floats)
      for (double s : *scales->floats)
        if (!(s > 0) || std::isinf(s))
          return op.error("every scale must be positive and finite, got " + doubleText(s));
  }
  if (roi) {
    if (!plan::isFloat(roi->dtype) || roi->shape != std::vector<int64_t>{2 * rank})
      return op.error("roi must be a 1-d float tensor of shape [" + std::to_string(2 * rank) + "]");
    p.roiType = roi->dtype;
  }
  if (p.transform == "tf_crop_and_resize" && !roi)
    return op.error("tf_crop_and_resize needs a roi operand");
  // Taps that depend on runtime values are computed on the device (no tables).
  if ((scales && !scales->floats) || (roi && !roi->floats))
    return emitRuntimeResize(op, context, p, extrapolationValue);

  EmittedKernels out;
  int64_t total = y.numElements();
  if (total == 0)
    return out;
  for (int64_t d = 0; d < rank; ++d)
    if (x.shape[d] == 0)
      return op.error("cannot resize the empty axis " + std::to_string(d) + " to " + std::to_string(y.shape[d]));

  std::vector<int64_t> inStrides = rowMajorStrides(x.shape);
  std::vector<ResizedAxis> axes;
  int64_t tableEntries = 0;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t inSize = x.shape[d], outSize = y.shape[d];
    double scale = scales ? (*scales->floats)[d] : (double)outSize / (double)inSize;
    double roiBegin = roi ? (*roi->floats)[d] : 0.0, roiEnd = roi ? (*roi->floats)[d + rank] : 1.0;
    if (isClose(scale, 1.0) && outSize == inSize && (!roi || (roiBegin == 0.0 && isClose(roiEnd, 1.0))))
      continue; // identity along this axis: its output coordinate is the input's
    // Tables are source text: an axis of millions of positions would make a program NVRTC
    // cannot reasonably compile (image axes are at most a few thousand).
    tableEntries += outSize * (p.mode == "cubic" ? 4 : 2);
    if (tableEntries > kMaxTableEntries)
      return op.error("resizing axes of " + std::to_string(tableEntries) + " sampling taps is beyond the GPU resize "
                      "kernel's compile-time tables (at most " + std::to_string(kMaxTableEntries) +
                      "); resize fewer or shorter axes");
    ResizedAxis a;
    a.axis = d;
    a.table = resizeAxisTaps(p, inSize, outSize, scale, roiBegin, roiEnd);
    a.taps = p.mode == "cubic" ? 4 : 2;
    for (const ResizeAxisTap &t : a.table)
      a.anyExtrapolated |= t.extrapolated;
    axes.push_back(std::move(a));
  }

  // Nearest taps are one position of weight 1 (or none, when exclude_outside zeroes it: the
  // value is then 0); such axes need only an offset table.
  bool gather = !axes.empty();
  for (const ResizedAxis &a : axes)
    for (const ResizeAxisTap &t : a.table) {
      int nonzero = 0;
      for (double w : t.weight)
        if (w != 0) {
          ++nonzero;
          gather &= w == 1.0;
        }
      gather &= !t.extrapolated && nonzero <= 1;
    }

  std::string fn = context.symbol + "resize";
  std::ostringstream os;
  for (size_t k = 0; k < axes.size(); ++k) {
    const ResizedAxis &a = axes[k];
    std::string level = std::to_string(k + 1);
    int64_t stride = inStrides[a.axis];
    if (gather) {
      std::vector<int64_t> offsets;
      for (const ResizeAxisTap &t : a.table) {
        int64_t offset = -1;
        for (size_t m = 0; m < t.weight.size(); ++m)
          if (t.weight[m] != 0)
            offset = t.index[m] * stride;
        offsets.push_back(offset);
      }
      os << tableSource("long long", fn + "_o" + level, offsets, literalInt);
      continue;
    }
    std::vector<int64_t> offsets;
    std::vector<double> weights;
    std::vector<int64_t> extrapolated;
    for (const ResizeAxisTap &t : a.table) {
      extrapolated.push_back(t.extrapolated);
      for (int64_t m = 0; m < a.taps; ++m) {
        offsets.push_back(t.extrapolated ? 0 : t.index[m] * stride);
        weights.push_back(t.extrapolated ? 0.0 : t.weight[m]);
      }
    }
    os << tableSource("long long", fn + "_i" + level, offsets, literalInt);
    os << tableSource("double", fn + "_w" + level, weights, doubleText);
    if (a.anyExtrapolated)
      os << tableSource("unsigned char", fn + "_e" + level, extrapolated,
                        [](int64_t v) { return std::to_string(v); });
  }

  std::string t = storageType(x.dtype), ct = computeType(x.dtype);
  os << "extern \"C\" __global__ void " << fn << "(const " << t << " *__restrict__ x, " << t << " *__restrict__ y) {\n"
     << "  for (kiln_i64 i = blockIdx.x * (kiln_i64)blockDim.x + threadIdx.x; i < " << literalInt(total)
     << "; i += (kiln_i64)gridDim.x * blockDim.x) {\n"
     << "    kiln_i64 r = i;\n";
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (d == 0) {
      os << "    const kiln_i64 c0 = r;\n";
      break;
    }
    os << "    const kiln_i64 c" << d << " = r % " << literalInt(y.shape[d]) << ";\n"
       << "    r /= " << literalInt(y.shape[d]) << ";\n";
  }
  // Axes left alone contribute their coordinate directly.
  os << "    const kiln_i64 o" << axes.size() + 1 << " = 0";
  for (int64_t d = 0; d < rank; ++d)
    if (std::none_of(axes.begin(), axes.end(), [&](const ResizedAxis &a) { return a.axis == d; }))
      os << " + c" << d << " * " << literalInt(inStrides[d]);
  os << ";\n";
  if (gather) {
    // 0 + x: the interpreter accumulates from +0, which turns -0 into +0.
    os << "    kiln_i64 offset = o" << axes.size() + 1 << ";\n"
       << "    bool zero = false;\n";
    for (size_t k = 0; k < axes.size(); ++k)
      os << "    {\n"
         << "      const kiln_i64 t = " << fn << "_o" << k + 1 << "[c" << axes[k].axis << "];\n"
         << "      zero |= t < 0;\n"
         << "      offset += t;\n"
         << "    }\n";
    os << "    " << ct << " v = 0;\n"
       << "    if (!zero)\n"
       << "      v += (" << ct << ")kiln_ld(x, offset);\n"
       << "    kiln_st(y, i, v);\n";
  } else if (axes.empty()) {
    os << "    kiln_st(y, i, kiln_ld(x, o1));\n"; // every axis is an identity: a copy
  } else {
    emitTapSum(os, axes, axes.size(), fn, literal(DType::F64, extrapolationValue), "    ");
    os << "    kiln_np_st(y, i, v" << axes.size() << ");\n";
  }
  os << "  }\n}\n";
  out.source = os.str();
  out.launches.push_back(gridStrideLaunch(fn, total, {KernelArg::operand(0), KernelArg::result(0)}));
  return out;
}

} // namespace kiln::codegen::normpool
