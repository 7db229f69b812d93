//===- PlanValidate.cpp - structural checks of a plan ----------------------===//
//
// validatePlan is the line between "bytes from somewhere" and "something the engine may act on":
// after it, every index is in range, every buffer lies inside its memory space, and every
// library call's shapes fit the buffers it reads and writes, so the engine never hands cuBLASLt
// or cuDNN a pointer range that is too short. It runs on every plan read and before every write.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/Plan.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <set>

namespace kiln::plan {
namespace {

constexpr std::string_view kFix = "recompile the model with `kiln compile`";

// CUDA's launch limits (every architecture since sm_30).
constexpr uint32_t kMaxThreadsPerBlock = 1024;
constexpr std::array<uint32_t, 3> kMaxBlockDim = {1024, 1024, 64};
constexpr std::array<uint32_t, 3> kMaxGridDim = {2147483647u, 65535u, 65535u};

bool isKnown(DType t) { return dtypeBytes(t) != 0; }
bool isKnown(MemorySpace s) { return s == MemorySpace::Arena || s == MemorySpace::Weights; }
bool isKnown(MathMode m) { return m == MathMode::StrictF32 || m == MathMode::TF32; }
bool isKnown(Activation a) { return a == Activation::None || a == Activation::Relu || a == Activation::Gelu; }

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

/// Bytes of a dense tensor; nullopt for a negative dimension or a size that does not fit 64 bits.
std::optional<uint64_t> denseBytes(std::span<const int64_t> shape, DType dtype) {
  std::optional<uint64_t> total = dtypeBytes(dtype);
  for (int64_t dim : shape) {
    if (dim < 0 || !total)
      return std::nullopt;
    total = mulChecked(*total, static_cast<uint64_t>(dim));
  }
  return total;
}

/// Shortest decimal that reads back as the same float.
std::string floatString(float value) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof(buffer), value).ptr);
}

std::string shapeString(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

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

  bool checkMetadata() {
    const Metadata &m = plan_.metadata;
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
      if (std::holds_alternative<ConvStep>(step.params) && m.cudnnVersion == 0)
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
      if (!isKnown(b.space))
        return fail(bufferLabel(i) + ": unknown memory space " + std::to_string(static_cast<int>(b.space)) +
                    " (1=arena, 2=weights)");
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
      if (!isKnown(t.dtype))
        return fail(label + ": unknown dtype value " + std::to_string(static_cast<int>(t.dtype)));
      if (t.buffer >= plan_.buffers.size())
        return fail(label + ": buffer index " + std::to_string(t.buffer) + " is out of range (the plan has " +
                    std::to_string(plan_.buffers.size()) + " buffers)");
      const Buffer &b = plan_.buffers[t.buffer];
      if (b.space != MemorySpace::Arena)
        return fail(label + ": " + bufferLabel(t.buffer) + " is in the weights, not in the arena");
      std::optional<uint64_t> bytes = denseBytes(t.shape, t.dtype);
      if (!bytes)
        return fail(label + ": shape " + shapeString(t.shape) + " has a negative dimension or overflows");
      if (*bytes != b.bytes)
        return fail(label + ": " + std::string(dtypeName(t.dtype)) + shapeString(t.shape) + " is " +
                    std::to_string(*bytes) + " bytes but " + bufferLabel(t.buffer) + " has " + std::to_string(b.bytes));
    }
    return true;
  }

  bool checkImages() {
    for (size_t i = 0; i < plan_.images.size(); ++i) {
      const KernelImage &image = plan_.images[i];
      std::string label = "image " + std::to_string(i) + " '" + image.name + "'";
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
      bool ok = std::visit(
          [&](const auto &params) {
            using T = std::decay_t<decltype(params)>;
            if constexpr (std::is_same_v<T, KernelStep>)
              return checkKernel(where, params);
            else if constexpr (std::is_same_v<T, GemmStep>)
              return checkGemm(where, params);
            else if constexpr (std::is_same_v<T, ConvStep>)
              return checkConv(where, params);
            else
              return checkCopy(where, params);
          },
          step.params);
      if (!ok)
        return false;
    }
    return true;
  }

  /// Buffer `index`, used as `role` by the step `where`: in range, at least `needed` bytes, and
  /// in the arena when the step writes it (the weights are read-only and shared by contexts).
  bool checkOperand(const std::string &where, const std::string &role, uint32_t index,
                    std::optional<uint64_t> needed, bool written) {
    if (index >= plan_.buffers.size())
      return fail(where + ": " + role + " buffer index " + std::to_string(index) + " is out of range (the plan has " +
                  std::to_string(plan_.buffers.size()) + " buffers)");
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

  bool checkKernel(const std::string &where, const KernelStep &k) {
    if (k.image >= plan_.images.size())
      return fail(where + ": image index " + std::to_string(k.image) + " is out of range (the plan has " +
                  std::to_string(plan_.images.size()) + " images)");
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
    for (size_t a = 0; a < k.args.size(); ++a)
      // A kernel argument is only a base pointer (its extent is compiled into the kernel), so
      // nothing more than the index can be checked; kernels write only arena buffers by
      // construction, which the plan does not record per argument.
      if (k.args[a] >= plan_.buffers.size())
        return fail(where + ": argument " + std::to_string(a) + " names buffer " + std::to_string(k.args[a]) +
                    ", out of range (the plan has " + std::to_string(plan_.buffers.size()) + " buffers)");
    return true;
  }

  static std::string dims(const std::array<uint32_t, 3> &d) {
    return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
  }

  /// Bytes of `batch` matrices of `rows` x `cols` elements `stride` elements apart.
  static std::optional<uint64_t> batchedBytes(const GemmStep &g, int64_t rows, int64_t cols, int64_t stride) {
    std::optional<uint64_t> matrix = mulChecked(rows, cols);
    std::optional<uint64_t> skip = mulChecked(g.batch - 1, stride);
    if (!matrix || !skip)
      return std::nullopt;
    std::optional<uint64_t> elements = addChecked(*skip, *matrix);
    return elements ? mulChecked(*elements, dtypeBytes(g.dtype)) : std::nullopt;
  }

  bool checkGemm(const std::string &where, const GemmStep &g) {
    if (!isKnown(g.dtype))
      return fail(where + ": unknown dtype value " + std::to_string(static_cast<int>(g.dtype)));
    if (!isKnown(g.math))
      return fail(where + ": unknown math mode " + std::to_string(static_cast<int>(g.math)));
    if (!isKnown(g.activation))
      return fail(where + ": unknown activation " + std::to_string(static_cast<int>(g.activation)));
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
    uint64_t eb = dtypeBytes(g.dtype);
    return checkOperand(where, "A", g.a, batchedBytes(g, g.m, g.k, g.strideA), false) &&
           checkOperand(where, "B", g.b, batchedBytes(g, g.k, g.n, g.strideB), false) &&
           (!g.c || checkOperand(where, "C", *g.c, batchedBytes(g, g.m, g.n, g.strideC), false)) &&
           checkOperand(where, "D", g.d, batchedBytes(g, g.m, g.n, g.strideD), true) &&
           (!g.bias || checkOperand(where, "bias", *g.bias, mulChecked(g.n, eb), false));
  }

  bool checkConv(const std::string &where, const ConvStep &c) {
    if (!isKnown(c.dtype))
      return fail(where + ": unknown dtype value " + std::to_string(static_cast<int>(c.dtype)));
    if (!isKnown(c.math))
      return fail(where + ": unknown math mode " + std::to_string(static_cast<int>(c.math)));
    if (c.activation != Activation::None && c.activation != Activation::Relu)
      return fail(where + ": convolutions fuse only no activation or relu, not activation " +
                  std::to_string(static_cast<int>(c.activation)));
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
    uint64_t eb = dtypeBytes(c.dtype);
    return checkOperand(where, "x", c.x, denseBytes(c.xShape, c.dtype), false) &&
           checkOperand(where, "w", c.w, denseBytes(c.wShape, c.dtype), false) &&
           checkOperand(where, "y", c.y, denseBytes(c.yShape, c.dtype), true) &&
           (!c.bias || checkOperand(where, "bias", *c.bias, mulChecked(c.yShape[1], eb), false));
  }

  bool checkCopy(const std::string &where, const CopyStep &c) {
    return checkOperand(where, "src", c.src, c.bytes, false) && checkOperand(where, "dst", c.dst, c.bytes, true);
  }

  const Plan &plan_;
  std::string error_;
};

} // namespace

Status validatePlan(const Plan &plan) { return Validator(plan).run(); }

} // namespace kiln::plan
