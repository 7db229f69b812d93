//===- PlanValidate.cpp - structural checks of a plan ----------------------===//
//
// validatePlan is the line between "bytes from somewhere" and "something the engine may act on":
// after it, every index is in range, every buffer lies inside its memory space, and every
// library call's shapes fit the buffers it reads and writes, so the engine never hands cuBLASLt
// or cuDNN a pointer range that is too short. It runs on every plan read and before every write.
//
// What every field of a kind must satisfy (enum values known, buffer and image indices in
// range, tensor types known and non-negative) is checked generically from the visitFields
// lists (FieldChecks.h); what fields mean together (shapes against buffer sizes, operand
// types, launch limits) is written out below, per record (attention in AttentionChecks.cpp).
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/AttentionChecks.h"
#include "runtime/plan/FieldChecks.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <set>

namespace kiln::plan {
namespace {
using detail::shapeString;

constexpr std::string_view kFix = "recompile the model with `kiln compile`";

// CUDA's launch limits (every architecture since sm_30).
constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr std::array<uint32_t, 3> kMaxBlockDim = {1024, 1024, 64};
constexpr std::array<uint32_t, 3> kMaxGridDim = {2147483647u, 65535u, 65535u};

std::optional<uint64_t> mulChecked(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

std::optional<uint64_t> addChecked(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// Shortest decimal that reads back as the same float.
std::string floatString(float value) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof(buffer), value).ptr);
}

std::string typeString(DType dtype, std::span<const int64_t> shape) {
  return std::string(dtypeName(dtype)) + shapeString(shape);
}

/// The element types cuBLASLt and cuDNN steps take; they accumulate in fp32 for all three.
bool isLibraryType(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

/// Output length of a forward convolution along one dimension (ONNX/cuDNN floor rule), or
/// nullopt when the (dilated) kernel does not fit the padded input.
/// Inputs are positive (pad non-negative) but may be huge in a damaged plan, hence the checks.
std::optional<int64_t> convOutput(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation) {
  int64_t span, padded;
  if (__builtin_mul_overflow(dilation, kernel - 1, &span) || __builtin_add_overflow(span, 1, &span) ||
      __builtin_mul_overflow(pad, 2, &padded) || __builtin_add_overflow(padded, in, &padded) || padded < span)
    return std::nullopt;
  return (padded - span) / stride + 1;
}

/// Runs the checks in order and keeps the first failure. Each check returns false after fail().
class Validator {
public:
  explicit Validator(const Plan &plan) : plan_(plan) {}

  Status run() {
    if (checkMetadata() && checkBuffers() && checkBindings(plan_.inputs, "input") &&
        checkBindings(plan_.outputs, "output") && checkImages() && checkSteps())
      return Status::ok();
    return Status(runtime::StatusCode::kInvalidPlan, error_ + ": " + std::string(kFix));
  }

private:
  bool fail(std::string message) {
    error_ = std::move(message);
    return false;
  }

  /// The rules of each field's kind (FieldChecks.h).
  template <PlanRecord T> bool checkFields(const std::string &where, const T &record) {
    std::optional<std::string> error = detail::checkFieldKinds(plan_, where, record);
    return !error || fail(*error);
  }

  //===-- What the fields of each record mean together ------------------------===//

  bool checkMetadata() {
    const Metadata &m = plan_.metadata;
    if (!checkFields("metadata", m))
      return false;
    if (m.computeCapability == 0)
      return fail("metadata: the target compute capability is 0");
    if (m.arenaLowerBound > m.arenaBytes)
      return fail("metadata: the arena lower bound (" + std::to_string(m.arenaLowerBound) +
                  " bytes) is larger than the arena (" + std::to_string(m.arenaBytes) + " bytes)");
    // checkCompatibility reads a version of 0 as "this plan does not use that library", so a
    // plan that does use it must say which version it was built against.
    if (!plan_.images.empty() && m.cudaVersion == 0)
      return fail("metadata: the plan has kernel images but records no CUDA version");
    for (const Step &step : plan_.steps) {
      if (std::holds_alternative<GemmStep>(step.params) && m.cublasLtVersion == 0)
        return fail("metadata: the plan has cuBLASLt steps (e.g. '" + step.name + "') but records no cuBLASLt version");
      bool cudnn = std::holds_alternative<ConvStep>(step.params) || std::holds_alternative<AttentionStep>(step.params);
      if (cudnn && m.cudnnVersion == 0)
        return fail("metadata: the plan has cuDNN steps (e.g. '" + step.name + "') but records no cuDNN version");
    }
    return true;
  }

  std::string bufferLabel(uint32_t index) const {
    return "buffer " + std::to_string(index) + " '" + plan_.buffers[index].name + "'";
  }

  bool checkBuffers() {
    for (uint32_t i = 0; i < plan_.buffers.size(); ++i) {
      const Buffer &b = plan_.buffers[i];
      if (!checkFields(bufferLabel(i), b))
        return false;
      std::optional<uint64_t> typeBytes = denseBytes(b.shape, b.dtype);
      if (!typeBytes)
        return fail(bufferLabel(i) + ": " + typeString(b.dtype, b.shape) + " does not fit in 64 bits");
      if (*typeBytes != b.bytes)
        return fail(bufferLabel(i) + ": " + typeString(b.dtype, b.shape) + " is " + std::to_string(*typeBytes) +
                    " bytes but the buffer has " + std::to_string(b.bytes));
      if (b.offset % kBufferAlignment != 0)
        return fail(bufferLabel(i) + ": offset " + std::to_string(b.offset) + " is not a multiple of " +
                    std::to_string(kBufferAlignment));
      bool arena = b.space == MemorySpace::Arena;
      uint64_t spaceBytes = arena ? plan_.metadata.arenaBytes : plan_.weights.size();
      std::optional<uint64_t> end = addChecked(b.offset, b.bytes);
      if (!end || *end > spaceBytes)
        return fail(bufferLabel(i) + ": bytes [" + std::to_string(b.offset) + ", " + std::to_string(b.offset) + "+" +
                    std::to_string(b.bytes) + ") lie outside the " + (arena ? "arena" : "weights blob") + " of " +
                    std::to_string(spaceBytes) + " bytes");
    }
    return true;
  }

  bool checkBindings(const std::vector<TensorBinding> &bindings, const char *kind) {
    std::set<std::string_view> names;
    for (size_t i = 0; i < bindings.size(); ++i) {
      const TensorBinding &t = bindings[i];
      std::string label = std::string(kind) + " " + std::to_string(i) + " '" + t.name + "'";
      if (t.name.empty())
        return fail(std::string(kind) + " " + std::to_string(i) + " has no name");
      if (!names.insert(t.name).second)
        return fail(label + ": another " + kind + " has the same name");
      if (!checkFields(label, t))
        return false;
      const Buffer &b = plan_.buffers[t.buffer];
      if (b.space != MemorySpace::Arena)
        return fail(label + ": " + bufferLabel(t.buffer) + " is in the weights, not in the arena");
      if (t.dtype != b.dtype || t.shape != b.shape)
        return fail(label + ": " + typeString(t.dtype, t.shape) + " but " + bufferLabel(t.buffer) + " holds " +
                    typeString(b.dtype, b.shape));
    }
    return true;
  }

  bool checkImages() {
    for (size_t i = 0; i < plan_.images.size(); ++i) {
      const KernelImage &image = plan_.images[i];
      std::string label = "image " + std::to_string(i) + " '" + image.name + "'";
      if (!checkFields(label, image))
        return false;
      if (image.cubin.empty() && image.ptx.empty())
        return fail(label + " has neither a cubin nor PTX");
      // The engine loads a cubin when the device matches the plan's compute capability, so
      // every cubin must be for that one.
      if (!image.cubin.empty() && image.smVersion != plan_.metadata.computeCapability)
        return fail(label + ": its cubin is for sm_" + std::to_string(image.smVersion) + " but the plan targets sm_" +
                    std::to_string(plan_.metadata.computeCapability));
    }
    return true;
  }

  bool checkSteps() {
    for (size_t i = 0; i < plan_.steps.size(); ++i) {
      const Step &step = plan_.steps[i];
      std::string where = "step " + std::to_string(i) + " '" + step.name + "' (" + step.op + ")";
      if (!checkFields(where, step))
        return false;
      if (step.values.size() != step.valueBuffers.size())
        return fail(where + ": names " + std::to_string(step.values.size()) + " ONNX values but gives " +
                    std::to_string(step.valueBuffers.size()) + " buffers for them");
      for (const std::string &value : step.values)
        if (value.empty())
          return fail(where + ": an ONNX value without a name");
      bool ok = std::visit([&](const auto &params) { return check(where, params); }, step.params);
      if (!ok)
        return false;
    }
    return true;
  }

  /// Buffer `index` (in range), used as `role` by the step `where`: at least `needed` bytes, and
  /// in the arena when the step writes it (the weights are read-only and shared by contexts).
  bool checkOperand(const std::string &where, const std::string &role, uint32_t index,
                    std::optional<uint64_t> needed, bool written) {
    const Buffer &b = plan_.buffers[index];
    if (!needed)
      return fail(where + ": the size of " + role + " overflows 64 bits");
    if (b.bytes < *needed)
      return fail(where + ": " + role + " needs " + std::to_string(*needed) + " bytes but " + bufferLabel(index) +
                  " has " + std::to_string(b.bytes));
    if (written && b.space != MemorySpace::Arena)
      return fail(where + ": writes " + role + " into " + bufferLabel(index) + ", which is in the read-only weights");
    return true;
  }

  DType typeOf(uint32_t index) const { return plan_.buffers[index].dtype; }

  /// Operand `role` (buffer `index`) must have type `expected`; `rule` says why.
  bool checkType(const std::string &where, const std::string &role, uint32_t index, DType expected,
                 const std::string &rule) {
    if (typeOf(index) == expected)
      return true;
    return fail(where + ": " + role + " (" + bufferLabel(index) + ") is " + std::string(dtypeName(typeOf(index))) +
                " but " + rule);
  }

  bool check(const std::string &where, const KernelStep &k) {
    if (k.function.empty())
      return fail(where + ": the kernel function name is empty");
    uint64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
      if (k.grid[d] == 0 || k.block[d] == 0)
        return fail(where + ": grid (" + dims(k.grid) + ") and block (" + dims(k.block) + ") must not be zero");
      if (k.grid[d] > kMaxGridDim[d] || k.block[d] > kMaxBlockDim[d])
        return fail(where + ": grid (" + dims(k.grid) + ") or block (" + dims(k.block) + ") exceeds CUDA's limits");
      threads *= k.block[d];
    }
    if (threads > kMaxThreadsPerBlock)
      return fail(where + ": block (" + dims(k.block) + ") has " + std::to_string(threads) + " threads, more than " +
                  std::to_string(kMaxThreadsPerBlock));
    // A kernel argument is only a base pointer (its extent is compiled into the kernel), so
    // nothing more than its index can be checked; kernels write only arena buffers by
    // construction, which the plan does not record per argument.
    return true;
  }

  static std::string dims(const std::array<uint32_t, 3> &d) {
    return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
  }

  /// Bytes of `batch` matrices of `rows` x `cols` elements of `type`, `stride` elements apart.
  static std::optional<uint64_t> batchedBytes(const GemmStep &g, DType type, int64_t rows, int64_t cols,
                                              int64_t stride) {
    std::optional<uint64_t> matrix = mulChecked(rows, cols);
    std::optional<uint64_t> skip = mulChecked(g.batch - 1, stride);
    if (!matrix || !skip)
      return std::nullopt;
    std::optional<uint64_t> elements = addChecked(*skip, *matrix);
    return elements ? mulChecked(*elements, dtypeBytes(type)) : std::nullopt;
  }

  /// A and B share f32, f16 or bf16; D has A's type or f32; C and bias have D's type. FP8 (E4M3)
  /// A and B give D in f32, f16 or bf16, in cuBLASLt's one FP8 layout: A row-major [m, k], B
  /// stored [n, k] (transB), k and n multiples of 16.
  bool checkGemmTypes(const std::string &where, const GemmStep &g) {
    DType a = typeOf(g.a), d = typeOf(g.d);
    bool fp8 = a == DType::F8E4M3FN;
    if (!isLibraryType(a) && !fp8)
      return fail(where + ": A (" + bufferLabel(g.a) + ") is " + std::string(dtypeName(a)) +
                  "; cuBLASLt steps take f32, f16, bf16 or f8e4m3fn operands");
    std::string aType(dtypeName(a)), dType(dtypeName(d));
    if (!checkType(where, "B", g.b, a, "A is " + aType + " and B must have A's type"))
      return false;
    if (g.scaleD && d != DType::F8E4M3FN)
      return fail(where + ": scaleD goes with an f8e4m3fn D only, D (" + bufferLabel(g.d) + ") is " + dType);
    if (fp8) {
      if (g.transA || !g.transB || g.k % 16 != 0 || g.n % 16 != 0)
        return fail(where + ": FP8 gemms run only with A [m, k] and B stored [n, k] (transA 0, transB 1), k and n "
                            "multiples of 16 (cuBLASLt on Hopper)");
      if (d == DType::F8E4M3FN) {
        // D rounds to E4M3 after scaleD; C and bias keep a 16-bit type of their own.
        if (!g.scaleD || !checkType(where, "scaleD", *g.scaleD, DType::F32, "an f8e4m3fn D is scaled by one f32") ||
            !checkOperand(where, "scaleD", *g.scaleD, std::optional<uint64_t>(4), false))
          return g.scaleD ? false : fail(where + ": an f8e4m3fn D needs scaleD (one f32)");
        std::optional<DType> wide;
        for (std::optional<uint32_t> operand : {g.c, g.bias})
          if (operand) {
            DType t = typeOf(*operand);
            if ((t != DType::BF16 && t != DType::F16) || (wide && t != *wide))
              return fail(where + ": with an f8e4m3fn D, C and bias are bf16 or f16, one type (" + bufferLabel(*operand) +
                          " is " + std::string(dtypeName(t)) + ")");
            wide = t;
          }
        return true;
      }
      if (!isLibraryType(d))
        return fail(where + ": D (" + bufferLabel(g.d) + ") is " + dType +
                    "; an FP8 gemm gives f32, f16, bf16, or f8e4m3fn with scaleD");
      // cuBLASLt's FP8 kernels writing f32 read their bias as bf16 (cublasLt.h, BIAS_DATA_TYPE);
      // an f32 bias there would be read as pairs of bf16 (seen on the H100: wrong values).
      if (d == DType::F32 && g.bias)
        return fail(where + ": an FP8 gemm writing f32 takes no bias (cuBLASLt reads it as bf16); the bias add "
                            "is an elementwise step");
    } else if (d != a && d != DType::F32) {
      return fail(where + ": D (" + bufferLabel(g.d) + ") is " + dType + " but must have A's type (" + aType +
                  ") or f32");
    }
    return (!g.c || checkType(where, "C", *g.c, d, "D is " + dType + " and C must have D's type")) &&
           (!g.bias || checkType(where, "bias", *g.bias, d, "D is " + dType + " and bias must have D's type"));
  }

  bool check(const std::string &where, const GemmStep &g) {
    if (g.activation != Activation::None && g.activation != Activation::Relu && g.activation != Activation::Gelu)
      return fail(where + ": gemms fuse only no activation, relu or gelu, not activation " +
                  std::to_string(static_cast<int>(g.activation)));
    if (g.batch < 1 || g.m < 1 || g.n < 1 || g.k < 1)
      return fail(where + ": batch, m, n, k (" + std::to_string(g.batch) + ", " + std::to_string(g.m) + ", " +
                  std::to_string(g.n) + ", " + std::to_string(g.k) + ") must all be at least 1");
    if (g.strideA < 0 || g.strideB < 0 || g.strideC < 0 || g.strideD < 0)
      return fail(where + ": batch strides must not be negative");
    // Batches of D written on top of each other would race.
    std::optional<uint64_t> outputElements = mulChecked(g.m, g.n);
    if (g.batch > 1 && (!outputElements || static_cast<uint64_t>(g.strideD) < *outputElements))
      return fail(where + ": strideD " + std::to_string(g.strideD) + " is smaller than one " + std::to_string(g.m) +
                  "x" + std::to_string(g.n) + " output matrix, so the batches overlap");
    if (!std::isfinite(g.alpha) || !std::isfinite(g.beta))
      return fail(where + ": alpha and beta must be finite");
    if (g.beta != 0.0f && !g.c)
      return fail(where + ": beta is " + floatString(g.beta) + " but there is no C buffer");
    if (!checkGemmTypes(where, g))
      return false;
    DType a = typeOf(g.a), d = typeOf(g.d);
    // C and bias have D's type, or their own 16-bit one beside an f8e4m3fn D.
    DType cb = g.c ? typeOf(*g.c) : g.bias ? typeOf(*g.bias) : d;
    return checkOperand(where, "A", g.a, batchedBytes(g, a, g.m, g.k, g.strideA), false) &&
           checkOperand(where, "B", g.b, batchedBytes(g, a, g.k, g.n, g.strideB), false) &&
           (!g.c || checkOperand(where, "C", *g.c, batchedBytes(g, cb, g.m, g.n, g.strideC), false)) &&
           checkOperand(where, "D", g.d, batchedBytes(g, d, g.m, g.n, g.strideD), true) &&
           (!g.bias || checkOperand(where, "bias", *g.bias, mulChecked(g.n, dtypeBytes(cb)), false));
  }

  /// x, w, y and bias share one of f32, f16, bf16; or (8-bit, channels last) x and w are both
  /// int8 or both f8e4m3fn, with their f32 scale, bias and residual float. Either kind of
  /// channels-last convolution may write y in 8 bits (int8 or f8e4m3fn) with its f32 yScale, or
  /// a float y and its 8-bit quantization (yQuantized).
  bool checkConvTypes(const std::string &where, const ConvStep &c) {
    DType x = typeOf(c.x);
    if (!checkResidualScale(where, c))
      return false;
    if (isQuantizedConvType(x))
      return checkQuantizedConvTypes(where, c) && checkConvOutputTypes(where, c);
    if (c.scale)
      return fail(where + ": scale goes with 8-bit (int8, f8e4m3fn) operands, and x (" + bufferLabel(c.x) + ") is " +
                  std::string(dtypeName(x)));
    if (!isLibraryType(x))
      return fail(where + ": x (" + bufferLabel(c.x) + ") is " + std::string(dtypeName(x)) +
                  "; cuDNN steps take f32, f16, bf16 or (channels last) int8 or f8e4m3fn operands");
    std::string rule = "x is " + std::string(dtypeName(x)) + " and a convolution's operands share one type";
    bool eightBitY = isQuantizedConvType(typeOf(c.y));
    bool quantizedY = eightBitY || c.yScale || c.yQuantized;
    if (quantizedY && !c.channelsLast)
      return fail(where + ": 8-bit outputs (yScale, yQuantized) are channels last (cuDNN graphs)");
    return checkType(where, "w", c.w, x, rule) && (eightBitY || checkType(where, "y", c.y, x, rule)) &&
           (!c.bias || checkType(where, "bias", *c.bias, x, rule)) &&
           (!c.residual || c.residualScale || checkType(where, "residual", *c.residual, x, rule)) &&
           (!quantizedY || checkConvOutputTypes(where, c));
  }

  /// An 8-bit residual (channels last) comes with its residualScale (one f32), and only it.
  bool checkResidualScale(const std::string &where, const ConvStep &c) {
    bool eightBitResidual = c.residual && isQuantizedConvType(typeOf(*c.residual));
    if (!c.residualScale) {
      if (eightBitResidual)
        return fail(where + ": an 8-bit residual (" + std::string(dtypeName(typeOf(*c.residual))) +
                    ") needs its residualScale (its quantization scale, one f32)");
      return true;
    }
    if (!eightBitResidual || !c.channelsLast)
      return fail(where + ": residualScale goes with an 8-bit residual of a channels-last convolution");
    return checkType(where, "residualScale", *c.residualScale, DType::F32, "the residual's scale is f32") &&
           checkOperand(where, "residualScale", *c.residualScale, 4, false);
  }

  /// y and its 8-bit forms: an 8-bit y with its yScale (1 / s_y, one f32), or a float y, alone
  /// or with its quantization yQuantized (int8 or f8e4m3fn, y's shape) and yScale.
  bool checkConvOutputTypes(const std::string &where, const ConvStep &c) {
    DType y = typeOf(c.y);
    bool eightBitY = isQuantizedConvType(y);
    if (c.yQuantized && (eightBitY || !c.yScale))
      return fail(where + ": yQuantized goes with a float y and a yScale");
    if (c.yQuantized) {
      DType q = typeOf(*c.yQuantized);
      if (!isQuantizedConvType(q))
        return fail(where + ": yQuantized (" + bufferLabel(*c.yQuantized) + ") is " + std::string(dtypeName(q)) +
                    " but y quantized is int8 or f8e4m3fn");
      if (!checkOperand(where, "yQuantized", *c.yQuantized, denseBytes(c.yShape, q), true))
        return false;
    }
    if (eightBitY || c.yQuantized) {
      if (!c.yScale)
        return fail(where + ": an 8-bit y needs its yScale (the reciprocal of its quantization scale, one f32)");
      if (!checkType(where, "yScale", *c.yScale, DType::F32, "y's scale is f32") ||
          !checkOperand(where, "yScale", *c.yScale, 4, false))
        return false;
    } else if (c.yScale) {
      return fail(where + ": yScale goes with an 8-bit y, and y (" + bufferLabel(c.y) + ") is " +
                  std::string(dtypeName(y)));
    }
    if (!eightBitY && !isLibraryType(y))
      return fail(where + ": y (" + bufferLabel(c.y) + ") is " + std::string(dtypeName(y)) +
                  "; a convolution writes int8, f8e4m3fn, f32, f16 or bf16");
    return true;
  }

  /// INT8 (int8 x and w, int32 sums) or FP8 (f8e4m3fn x and w, f32 sums): channels last, the
  /// weight of x's type, the K f32 scales, float bias and residual (or an 8-bit residual).
  bool checkQuantizedConvTypes(const std::string &where, const ConvStep &c) {
    DType x = typeOf(c.x);
    std::string kind = x == DType::I8 ? "int8" : "FP8";
    if (!c.channelsLast)
      return fail(where + ": " + kind + " convolutions are channels last (cuDNN's INT8 and FP8 kernels are NHWC)");
    if (!checkType(where, "w", c.w, x,
                   "x is " + std::string(dtypeName(x)) + " and so is an 8-bit convolution's weight"))
      return false;
    if (!c.scale)
      return fail(where + ": an " + kind +
                  " convolution needs its scale (K f32: x's scale times w's per output channel)");
    if (!checkType(where, "scale", *c.scale, DType::F32, "the dequantization scales are f32") ||
        !checkOperand(where, "scale", *c.scale, mulChecked(c.yShape[1], 4), false))
      return false;
    for (auto [role, buffer] : {std::pair<const char *, std::optional<uint32_t>>{"bias", c.bias},
                                {"residual", c.residual}})
      if (buffer && !isLibraryType(typeOf(*buffer)) && !(std::string_view(role) == "residual" && c.residualScale))
        return fail(where + ": the " + role + " (" + bufferLabel(*buffer) + ") is " +
                    std::string(dtypeName(typeOf(*buffer))) + "; an 8-bit convolution adds f32, f16 or bf16 ones, or "
                    "an 8-bit residual with its residualScale");
    return true;
  }

  /// What a channels-last step adds: 2-d forward only, its epilogue's activation and residual.
  bool checkConvEpilogue(const std::string &where, const ConvStep &c) {
    if (!c.channelsLast) {
      if (c.activation != Activation::None && c.activation != Activation::Relu)
        return fail(where + ": channels-first convolutions fuse only no activation or relu, not activation " +
                    std::to_string(static_cast<int>(c.activation)));
      if (c.residual)
        return fail(where + ": only channels-last convolutions add a residual");
      return true;
    }
    if (c.transpose || c.xShape.size() != 4)
      return fail(where + ": channels-last convolutions are 2-d forward convolutions (x " + shapeString(c.xShape) +
                  (c.transpose ? ", transposed" : "") + ")");
    if (c.activation == Activation::Gelu)
      return fail(where + ": convolutions do not fuse gelu");
    if (!std::isfinite(c.activationAlpha) || !std::isfinite(c.activationBeta))
      return fail(where + ": activation parameters must be finite");
    if (c.activation == Activation::Clip && !(c.activationAlpha <= c.activationBeta))
      return fail(where + ": clip bounds [" + floatString(c.activationAlpha) + ", " + floatString(c.activationBeta) +
                  "] are empty");
    return true;
  }

  bool check(const std::string &where, const ConvStep &c) {
    if (!checkConvEpilogue(where, c))
      return false;
    size_t rank = c.xShape.size();
    if (rank < 3 || c.wShape.size() != rank || c.yShape.size() != rank)
      return fail(where + ": x " + shapeString(c.xShape) + ", w " + shapeString(c.wShape) + " and y " +
                  shapeString(c.yShape) + " must have the same rank, at least 3 (N, C, spatial...)");
    size_t spatial = rank - 2;
    if (c.pads.size() != spatial || c.strides.size() != spatial || c.dilations.size() != spatial)
      return fail(where + ": pads, strides and dilations need " + std::to_string(spatial) + " values each, one per "
                  "spatial dimension");
    for (size_t d = 0; d < rank; ++d)
      if (c.xShape[d] < 1 || c.wShape[d] < 1 || c.yShape[d] < 1)
        return fail(where + ": x " + shapeString(c.xShape) + ", w " + shapeString(c.wShape) + ", y " +
                    shapeString(c.yShape) + " must have positive dimensions");
    for (size_t d = 0; d < spatial; ++d)
      if (c.pads[d] < 0 || c.strides[d] < 1 || c.dilations[d] < 1)
        return fail(where + ": pads " + shapeString(c.pads) + " must be >= 0, strides " + shapeString(c.strides) +
                    " and dilations " + shapeString(c.dilations) + " >= 1");
    if (c.groups < 1 || c.wShape[0] % c.groups != 0)
      return fail(where + ": groups " + std::to_string(c.groups) + " must be positive and divide w's first dimension " +
                  std::to_string(c.wShape[0]));
    // Forward: w is K, C/groups. Transposed (cuDNN backward-data): w is C, K/groups, and the
    // forward convolution of y gives x.
    const std::vector<int64_t> &in = c.transpose ? c.yShape : c.xShape;
    const std::vector<int64_t> &out = c.transpose ? c.xShape : c.yShape;
    int64_t inChannels, outChannels = c.wShape[0];
    if (__builtin_mul_overflow(c.wShape[1], c.groups, &inChannels))
      return fail(where + ": w " + shapeString(c.wShape) + " times groups " + std::to_string(c.groups) + " overflows");
    std::string geometry = std::string(c.transpose ? "transposed " : "") + "convolution of x " + shapeString(c.xShape) +
                           " with w " + shapeString(c.wShape) + " (groups " + std::to_string(c.groups) + ", pads " +
                           shapeString(c.pads) + ", strides " + shapeString(c.strides) + ", dilations " +
                           shapeString(c.dilations) + ")";
    bool matches = in[0] == out[0] && in[1] == inChannels && out[1] == outChannels;
    for (size_t d = 0; d < spatial && matches; ++d)
      matches = convOutput(in[2 + d], c.wShape[2 + d], c.pads[d], c.strides[d], c.dilations[d]) == out[2 + d];
    if (!matches)
      return fail(where + ": the " + geometry + " does not give y " + shapeString(c.yShape));
    if (!checkConvTypes(where, c))
      return false;
    return checkOperand(where, "x", c.x, denseBytes(c.xShape, typeOf(c.x)), false) &&
           checkOperand(where, "w", c.w, denseBytes(c.wShape, typeOf(c.w)), false) &&
           checkOperand(where, "y", c.y, denseBytes(c.yShape, typeOf(c.y)), true) &&
           (!c.bias ||
            checkOperand(where, "bias", *c.bias, mulChecked(c.yShape[1], dtypeBytes(typeOf(*c.bias))), false)) &&
           (!c.residual || checkOperand(where, "residual", *c.residual, denseBytes(c.yShape, typeOf(*c.residual)), false));
  }

  bool check(const std::string &where, const CopyStep &c) {
    return checkOperand(where, "src", c.src, c.bytes, false) && checkOperand(where, "dst", c.dst, c.bytes, true);
  }

  /// Strided views, cuDNN's limits, no overlap of the output (AttentionChecks.cpp).
  bool check(const std::string &where, const AttentionStep &a) {
    std::optional<std::string> error = detail::checkAttentionStep(plan_, where, a);
    return !error || fail(*error);
  }

  const Plan &plan_;
  std::string error_;
};

} // namespace

Status validatePlan(const Plan &plan) { return Validator(plan).run(); }

} // namespace kiln::plan
