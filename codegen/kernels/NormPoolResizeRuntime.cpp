//===- NormPoolResizeRuntime.cpp - kiln.resize with runtime scales/roi ----===//
//
// When `scales` or `roi` is a runtime tensor the sampling taps are unknown at compile time, so
// the host tables of NormPoolResize.cpp cannot be baked. This kernel computes them on the device
// instead: per output element and per axis it reads the scale (and roi) from device memory, maps
// the output coordinate to the source coordinate and derives the nearest index / linear / cubic
// weights -- the interpreter's arithmetic (ir/Interpreter/DataMovementEval.cpp, resizeTaps), in
// double -- then sums the taps nested as the interpreter resamples the axes (first axis
// innermost) and rounds once when storing.
//
// The tap arithmetic is written once, below, inside KILN_NP_RESIZE_TAP_SOURCE: the macro both
// compiles it here as host C++ (deviceResizeTap, which tests compare with the host tables) and
// turns the same tokens into the text every runtime-resize kernel embeds. Every operation goes
// through add/sub/mul/div, which on the device are the __d*_rn intrinsics: CUDA would otherwise
// contract a * b + c into one fused multiply-add, rounding differently from the interpreter.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/NormPoolKernels.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <tuple>

namespace kiln::codegen::normpool {

namespace {

/// What the shared text calls, on the host. The device text defines the same members.
struct HostResizeMathPrimitives {
  static double add(double a, double b) { return a + b; }
  static double sub(double a, double b) { return a - b; }
  static double mul(double a, double b) { return a * b; }
  static double div(double a, double b) { return a / b; }
  static double floorOf(double v) { return std::floor(v); }
  static double fabsOf(double v) { return std::fabs(v); }
  static double rintOf(double v) { return std::nearbyint(v); } // half to even: the default mode
  static double ldexpOf(double v, int e) { return std::ldexp(v, e); }
  static int ilogbOf(double v) { return std::ilogb(v); }
  static double copysignOf(double v, double sign) { return std::copysign(v, sign); }
  static double infinity() { return std::numeric_limits<double>::infinity(); }
  static double quietNaN() { return std::numeric_limits<double>::quiet_NaN(); }
};

// Device primitives: no contraction, IEEE round-to-nearest, as the host computes.
constexpr std::string_view kDevicePrimitives = R"CUDA(
  static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
  static __device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
  static __device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
  static __device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }
  static __device__ __forceinline__ double floorOf(double v) { return floor(v); }
  static __device__ __forceinline__ double fabsOf(double v) { return fabs(v); }
  static __device__ __forceinline__ double rintOf(double v) { return rint(v); }
  static __device__ __forceinline__ double ldexpOf(double v, int e) { return ldexp(v, e); }
  static __device__ __forceinline__ int ilogbOf(double v) { return ilogb(v); }
  static __device__ __forceinline__ double copysignOf(double v, double sign) { return copysign(v, sign); }
  static __device__ __forceinline__ double infinity() { return __longlong_as_double(0x7ff0000000000000LL); }
  static __device__ __forceinline__ double quietNaN() { return __longlong_as_double(0x7ff8000000000000LL); }
)CUDA";

/// Compiles the members in a host struct and keeps their text (comments are gone by the time a
/// macro argument is stringified; no preprocessor lines or literals with quotes may appear).
#define KILN_RZ_FN static
#define KILN_NP_RESIZE_TAP_SOURCE(...)                                                         \
  struct HostResizeMath : HostResizeMathPrimitives {                                           \
    __VA_ARGS__                                                                                \
  };                                                                                           \
  constexpr std::string_view kResizeTapSource = #__VA_ARGS__;

KILN_NP_RESIZE_TAP_SOURCE(
  enum { kNearest = 0, kLinear = 1, kCubic = 2 };
  enum { kHalfPixel = 0, kHalfPixelSymmetric = 1, kPytorchHalfPixel = 2, kAlignCorners = 3, kAsymmetric = 4,
         kTfCropAndResize = 5, kTfHalfPixelForNn = 6 };
  enum { kRoundPreferFloor = 0, kRoundPreferCeil = 1, kFloor = 2, kCeil = 3 };
  // What an output position along an axis is: a weighted sum of taps, its input position
  // unchanged (the interpreter skips identity axes), the extrapolation value (tf_crop_and_resize
  // outside the input), or undefined (a scale that is not positive and finite, a non-finite
  // source coordinate): the kernel writes NaN.
  enum { kTaps = 0, kIdentity = 1, kExtrapolated = 2, kInvalid = 3 };

  // The compile-time facts of one axis. roiPrecision 0: no rounding (f64 roi, or no roi).
  struct Axis {
    int mode, transform, nearestMode;
    double cubicA;
    int excludeOutside;
    long long inSize, outSize;
    int hasRoi;
    int roiPrecision, roiMinExponent;
    double roiLargest;
    int roiHasInfinity;
  };
  struct Tap {
    int kind;
    long long index[4];
    double weight[4];
  };

  // roundToDType: the reference does roi arithmetic in the roi's element type.
  KILN_RZ_FN double roundRoi(const Axis &a, double v) {
    if (a.roiPrecision == 0 || v != v || v == 0.0)
      return v;
    if (fabsOf(v) == infinity())
      return a.roiHasInfinity ? v : quietNaN();
    int exponent = ilogbOf(v);
    if (exponent < a.roiMinExponent)
      exponent = a.roiMinExponent;
    const double quantum = ldexpOf(1.0, exponent - (a.roiPrecision - 1));
    const double rounded = mul(rintOf(div(v, quantum)), quantum);
    if (fabsOf(rounded) > a.roiLargest)
      return a.roiHasInfinity ? copysignOf(infinity(), v) : quietNaN();
    return rounded;
  }

  // Python's math.isclose with its default tolerance.
  KILN_RZ_FN bool isClose(double x, double y) {
    const double ax = fabsOf(x), ay = fabsOf(y);
    return fabsOf(sub(x, y)) <= mul(1e-9, ax > ay ? ax : ay);
  }

  KILN_RZ_FN int tapCount(const Axis &a) { return a.mode == kCubic ? 4 : 2; }

  // The taps of output position y along axis a (resizeTaps in the interpreter).
  KILN_RZ_FN Tap tap(const Axis &a, double scale, double roiBegin, double roiEnd, long long y) {
    Tap t;
    t.kind = kTaps;
    for (int m = 0; m < 4; ++m) {
      t.index[m] = 0;
      t.weight[m] = 0.0;
    }
    if (!(scale > 0.0) || scale == infinity()) {
      t.kind = kInvalid;
      return t;
    }
    if (isClose(scale, 1.0) && a.outSize == a.inSize &&
        (!a.hasRoi || (roiBegin == 0.0 && isClose(roiEnd, 1.0)))) {
      t.kind = kIdentity;
      t.index[0] = y;
      t.weight[0] = 1.0;
      return t;
    }
    const double outWidth = mul(scale, (double)a.inSize);
    const double last = (double)(a.inSize - 1);
    const double x = (double)y;
    double xOri = 0.0;
    if (a.transform == kAlignCorners) {
      xOri = outWidth == 1.0 ? 0.0 : div(mul(x, last), sub(outWidth, 1.0));
    } else if (a.transform == kAsymmetric) {
      xOri = div(x, scale);
    } else if (a.transform == kTfCropAndResize) {
      const double extent = roundRoi(a, sub(roiEnd, roiBegin));
      xOri = outWidth == 1.0 ? roundRoi(a, div(roundRoi(a, mul(extent, last)), 2.0))
                             : div(mul(mul(x, extent), last), sub(outWidth, 1.0));
      xOri = add(xOri, roundRoi(a, mul(roiBegin, last)));
      if (xOri < 0.0 || xOri > last) {
        t.kind = kExtrapolated;
        return t;
      }
    } else if (a.transform == kPytorchHalfPixel) {
      xOri = outWidth == 1.0 ? -0.5 : sub(div(add(x, 0.5), scale), 0.5);
    } else if (a.transform == kHalfPixelSymmetric) {
      const double adjustment = div((double)a.outSize, outWidth);
      const double center = div((double)a.inSize, 2.0);
      const double offset = mul(center, sub(1.0, adjustment));
      xOri = sub(add(offset, div(add(x, 0.5), scale)), 0.5);
    } else if (a.transform == kTfHalfPixelForNn) {
      xOri = div(add(x, 0.5), scale);
    } else {
      xOri = sub(div(add(x, 0.5), scale), 0.5);
    }
    if (sub(xOri, xOri) != 0.0) {
      t.kind = kInvalid;
      return t;
    }
    const double xOriInt = floorOf(xOri);
    const double ratio = xOri == xOriInt ? 1.0 : sub(xOri, xOriInt);
    double c[4] = {0.0, 0.0, 0.0, 0.0};
    if (a.mode == kNearest) {
      if (ratio == floorOf(ratio)) {
        c[1] = 1.0;
      } else if (a.nearestMode == kRoundPreferFloor) {
        c[0] = ratio <= 0.5 ? 1.0 : 0.0;
        c[1] = ratio > 0.5 ? 1.0 : 0.0;
      } else if (a.nearestMode == kRoundPreferCeil) {
        c[0] = ratio < 0.5 ? 1.0 : 0.0;
        c[1] = ratio >= 0.5 ? 1.0 : 0.0;
      } else if (a.nearestMode == kFloor) {
        c[0] = 1.0;
      } else {
        c[1] = 1.0;
      }
    } else if (a.mode == kLinear) {
      c[0] = sub(1.0, ratio);
      c[1] = ratio;
    } else {
      const double ca = a.cubicA, r1 = add(ratio, 1.0), s = sub(1.0, ratio), s1 = add(s, 1.0);
      c[0] = sub(mul(add(mul(sub(mul(ca, r1), mul(5.0, ca)), r1), mul(8.0, ca)), r1), mul(4.0, ca));
      c[1] = add(mul(mul(sub(mul(add(ca, 2.0), ratio), add(ca, 3.0)), ratio), ratio), 1.0);
      c[2] = add(mul(mul(sub(mul(add(ca, 2.0), s), add(ca, 3.0)), s), s), 1.0);
      c[3] = sub(mul(add(mul(sub(mul(ca, s1), mul(5.0, ca)), s1), mul(8.0, ca)), s1), mul(4.0, ca));
    }
    // The n neighbours nearest to xOri, ties to the left, in edge-padded coordinates.
    const long long n = tapCount(a);
    const long long pad = (n + 1) / 2;
    const double xPadded = add(xOri, (double)pad);
    const double pPadded = floorOf(xPadded);
    const long long first =
        (long long)pPadded + (sub(xPadded, pPadded) == 0.0 ? -(n / 2) : -(n / 2) + 1) - pad;
    double sum = 0.0;
    for (long long m = 0; m < n; ++m) {
      const long long index = first + m;
      double w = c[m];
      if (a.excludeOutside && (index < 0 || index >= a.inSize))
        w = 0.0;
      sum = add(sum, w);
      t.index[m] = index < 0 ? 0 : (index > a.inSize - 1 ? a.inSize - 1 : index);
      t.weight[m] = w;
    }
    if (a.excludeOutside && sum != 0.0)
      for (long long m = 0; m < n; ++m)
        t.weight[m] = div(t.weight[m], sum);
    return t;
  }
)

#undef KILN_NP_RESIZE_TAP_SOURCE
#undef KILN_RZ_FN

int modeCode(const std::string &mode) { return mode == "nearest" ? 0 : mode == "linear" ? 1 : 2; }

int transformCode(const std::string &t) {
  if (t == "half_pixel_symmetric")
    return 1;
  if (t == "pytorch_half_pixel")
    return 2;
  if (t == "align_corners")
    return 3;
  if (t == "asymmetric")
    return 4;
  if (t == "tf_crop_and_resize")
    return 5;
  if (t == "tf_half_pixel_for_nn")
    return 6;
  return 0; // half_pixel
}

int nearestModeCode(const std::string &m) {
  return m == "round_prefer_ceil" ? 1 : m == "floor" ? 2 : m == "ceil" ? 3 : 0;
}

/// The format of the roi element type, as roundToDType (NormPoolResize.cpp) rounds to it.
struct RoiRounding {
  int precision = 0, minExponent = 0;
  double largest = 0;
  bool hasInfinity = true;
};

RoiRounding roiRounding(std::optional<DType> type) {
  if (!type)
    return {};
  switch (*type) {
  case DType::F32: return {24, -126, std::numeric_limits<float>::max(), true};
  case DType::F16: return {11, -14, 65504.0, true};
  case DType::BF16: return {8, -126, 0x1.fep127, true};
  case DType::F8E4M3FN: return {4, -6, 448.0, false};
  default: return {}; // f64: no rounding
  }
}

HostResizeMath::Axis axisFacts(const ResizeAxisParams &p, int64_t inSize, int64_t outSize, bool hasRoi) {
  RoiRounding r = roiRounding(p.roiType);
  HostResizeMath::Axis a;
  a.mode = modeCode(p.mode);
  a.transform = transformCode(p.transform);
  a.nearestMode = nearestModeCode(p.nearestMode);
  a.cubicA = p.cubicA;
  a.excludeOutside = p.excludeOutside;
  a.inSize = inSize;
  a.outSize = outSize;
  a.hasRoi = hasRoi;
  a.roiPrecision = r.precision;
  a.roiMinExponent = r.minExponent;
  a.roiLargest = r.largest;
  a.roiHasInfinity = r.hasInfinity;
  return a;
}

std::string doubleText(double v) {
  if (std::isnan(v))
    return "__longlong_as_double(0x7ff8000000000000LL)";
  if (std::isinf(v))
    return v > 0 ? "__longlong_as_double(0x7ff0000000000000LL)" : "__longlong_as_double(0xfff0000000000000LL)";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string text = buf;
  if (text.find_first_of(".en") == std::string::npos)
    text += ".0";
  return text;
}

/// `Axis` as a brace initializer (member order of the struct above).
std::string axisInitializer(const HostResizeMath::Axis &a) {
  std::ostringstream os;
  os << "{" << a.mode << ", " << a.transform << ", " << a.nearestMode << ", " << doubleText(a.cubicA) << ", "
     << a.excludeOutside << ", " << literalInt(a.inSize) << ", " << literalInt(a.outSize) << ", " << a.hasRoi << ", "
     << a.roiPrecision << ", " << a.roiMinExponent << ", " << doubleText(a.roiLargest) << ", " << a.roiHasInfinity
     << "}";
  return os.str();
}

/// The shared text for the device: KILN_RZ_FN spelled out, a line per statement for readable
/// NVRTC messages (the text holds no literals a newline could split).
std::string deviceTapSource() {
  std::string out;
  std::string_view text = kResizeTapSource;
  const std::string_view marker = "KILN_RZ_FN";
  for (size_t pos = 0; pos < text.size();) {
    if (text.compare(pos, marker.size(), marker) == 0) {
      out += "static __device__ __forceinline__";
      pos += marker.size();
      continue;
    }
    char ch = text[pos++];
    out.push_back(ch);
    if (ch == ';' || ch == '{' || ch == '}')
      out.push_back('\n');
  }
  return out;
}

/// The nested tap sums, level k over axis k - 1 (axis 0 innermost, as the interpreter resamples
/// axis 0 first); `v<k>` is the value interpolated along axes [0, k) at offset `o<k+1>`. Levels
/// whose loops would unroll into more than kMaxUnrolled bodies stay rolled.
void emitRuntimeTapSum(std::ostringstream &os, const std::vector<int64_t> &strides, int taps, size_t level,
                       const std::string &extrapolation, const std::string &indent) {
  constexpr int64_t kMaxUnrolled = 64;
  std::string k = std::to_string(level), t = "t" + std::to_string(level - 1);
  int64_t bodies = 1;
  for (size_t l = 0; l < level && bodies <= kMaxUnrolled; ++l)
    bodies *= taps;
  os << indent << "double v" << k << " = 0.0;\n"
     << indent << "if (" << t << ".kind == M::kExtrapolated) {\n"
     << indent << "  v" << k << " = " << extrapolation << ";\n"
     << indent << "} else {\n"
     << indent << (bodies <= kMaxUnrolled ? "#pragma unroll\n" : "#pragma unroll 1\n")
     << indent << "  for (int m" << k << " = 0; m" << k << " < " << taps << "; ++m" << k << ") {\n"
     << indent << "    const double w" << k << " = " << t << ".weight[m" << k << "];\n"
     // A zero weight never turns an inf or NaN neighbour into NaN.
     << indent << "    if (w" << k << " == 0.0)\n"
     << indent << "      continue;\n"
     << indent << "    const kiln_i64 o" << k << " = o" << level + 1 << " + " << t << ".index[m" << k << "] * "
     << literalInt(strides[level - 1]) << ";\n";
  if (level == 1)
    os << indent << "    const double v0 = (double)kiln_ld(x, o1);\n";
  else
    emitRuntimeTapSum(os, strides, taps, level - 1, extrapolation, indent + "    ");
  // An identity axis passes the value through untouched (the interpreter skips it: -0 stays -0).
  os << indent << "    v" << k << " = " << t << ".kind == M::kIdentity ? v" << level - 1 << " : M::add(v" << k
     << ", M::mul(w" << k << ", v" << level - 1 << "));\n"
     << indent << "  }\n"
     << indent << "}\n";
}

} // namespace

DeviceResizeTap deviceResizeTap(const ResizeAxisParams &params, int64_t inSize, int64_t outSize, double scale,
                                bool hasRoi, double roiBegin, double roiEnd, int64_t position) {
  HostResizeMath::Axis a = axisFacts(params, inSize, outSize, hasRoi);
  HostResizeMath::Tap t = HostResizeMath::tap(a, scale, roiBegin, roiEnd, position);
  DeviceResizeTap out;
  out.kind = static_cast<DeviceResizeTap::Kind>(t.kind);
  if (t.kind == HostResizeMath::kTaps || t.kind == HostResizeMath::kIdentity) {
    int n = t.kind == HostResizeMath::kIdentity ? 1 : HostResizeMath::tapCount(a);
    out.tap.index.assign(t.index, t.index + n);
    out.tap.weight.assign(t.weight, t.weight + n);
  }
  out.tap.extrapolated = t.kind == HostResizeMath::kExtrapolated;
  return out;
}

double deviceRoundRoi(double value, DType roiType) {
  ResizeAxisParams p;
  p.roiType = roiType;
  return HostResizeMath::roundRoi(axisFacts(p, 1, 1, true), value);
}

StatusOr<EmittedKernels> emitRuntimeResize(const OpDesc &op, const EmitContext &context,
                                           const ResizeAxisParams &params, double extrapolationValue) {
  const TensorDesc &x = *op.operands[0];
  const TensorDesc &y = op.results[0];
  const std::optional<TensorDesc> &scales = op.operands[1], &roi = op.operands[2];
  const bool runtimeScales = scales && !scales->floats, runtimeRoi = roi && !roi->floats;
  int64_t rank = static_cast<int64_t>(x.shape.size());
  EmittedKernels out;
  int64_t total = y.numElements();
  if (total == 0)
    return out;
  for (int64_t d = 0; d < rank; ++d)
    if (x.shape[d] == 0)
      return op.error("cannot resize the empty axis " + std::to_string(d) + " to " + std::to_string(y.shape[d]));

  std::string fn = context.symbol + "resize", math = fn + "_math";
  std::string t = storageType(x.dtype);
  std::ostringstream os;
  os << "struct " << math << " {" << kDevicePrimitives << deviceTapSource() << "};\n";
  os << "extern \"C\" __global__ void " << fn << "(const " << t << " *__restrict__ x, ";
  std::vector<KernelArg> args = {KernelArg::operand(0)};
  if (runtimeScales) {
    os << "const float *__restrict__ scales, ";
    args.push_back(KernelArg::operand(1));
  }
  if (runtimeRoi) {
    os << "const " << storageType(roi->dtype) << " *__restrict__ roi, ";
    args.push_back(KernelArg::operand(2));
  }
  os << t << " *__restrict__ y) {\n"
     << "  typedef " << math << " M;\n";
  // Per axis: its facts, and its scale and roi (the same for every thread; read once).
  for (int64_t d = 0; d < rank; ++d) {
    std::string s = std::to_string(d);
    int64_t inSize = x.shape[d], outSize = y.shape[d];
    os << "  const M::Axis a" << s << " = " << axisInitializer(axisFacts(params, inSize, outSize, roi.has_value()))
       << ";\n";
    os << "  const double s" << s << " = ";
    if (runtimeScales)
      os << "(double)scales[" << d << "];\n";
    else if (scales)
      os << doubleText((*scales->floats)[d]) << ";\n";
    else
      os << doubleText((double)outSize / (double)inSize) << ";\n";
    for (auto [name, index, fallback] : {std::tuple{"rb", d, 0.0}, std::tuple{"re", d + rank, 1.0}}) {
      os << "  const double " << name << s << " = ";
      if (runtimeRoi)
        os << "(double)kiln_ld(roi, " << literalInt(index) << ");\n";
      else if (roi)
        os << doubleText((*roi->floats)[index]) << ";\n";
      else
        os << doubleText(fallback) << ";\n";
    }
  }
  os << "  for (kiln_i64 i = blockIdx.x * (kiln_i64)blockDim.x + threadIdx.x; i < " << literalInt(total)
     << "; i += (kiln_i64)gridDim.x * blockDim.x) {\n";
  if (rank == 0) {
    os << "    kiln_st(y, i, kiln_ld(x, i));\n"; // a scalar: nothing to resample
  } else {
    os << "    kiln_i64 r = i;\n";
    for (int64_t d = rank - 1; d >= 0; --d) {
      std::string s = std::to_string(d);
      if (d == 0) {
        os << "    const kiln_i64 c0 = r;\n";
        break;
      }
      os << "    const kiln_i64 c" << s << " = r % " << literalInt(y.shape[d]) << ";\n"
         << "    r /= " << literalInt(y.shape[d]) << ";\n";
    }
    os << "    bool invalid = false;\n";
    for (int64_t d = 0; d < rank; ++d) {
      std::string s = std::to_string(d);
      os << "    const M::Tap t" << s << " = M::tap(a" << s << ", s" << s << ", rb" << s << ", re" << s << ", c" << s
         << ");\n"
         << "    invalid |= t" << s << ".kind == M::kInvalid;\n";
    }
    os << "    if (invalid) {\n"
       << "      kiln_np_st(y, i, M::quietNaN());\n"
       << "      continue;\n"
       << "    }\n"
       << "    const kiln_i64 o" << rank + 1 << " = 0;\n";
    emitRuntimeTapSum(os, rowMajorStrides(x.shape), params.mode == "cubic" ? 4 : 2, static_cast<size_t>(rank),
                      literal(DType::F64, extrapolationValue), "    ");
    os << "    kiln_np_st(y, i, v" << rank << ");\n";
  }
  os << "  }\n}\n";
  out.source = os.str();
  args.push_back(KernelArg::result(0));
  out.launches.push_back(gridStrideLaunch(fn, total, std::move(args)));
  return out;
}

} // namespace kiln::codegen::normpool
