//===- NormPoolNorms.cpp - batch/instance/layer/group normalization kernels ===//
//
// kiln.batch_norm (inference) is elementwise: one thread per element, per-channel statistics
// read from the operands. instance_norm, layer_norm and group_norm all normalize contiguous
// rows -- an (n, c) plane, the trailing axes from `axis`, an (n, group) block of channels -- so
// they share one kernel: mean, then mean squared deviation (two passes, as the interpreter
// computes them), then (x - mean) / sqrt(var + epsilon) * scale + bias. Rows up to 1024
// elements get one warp each (BERT/ViT rows of 768: 24 values a lane, kept in registers);
// longer rows one block each, values kept in registers up to 16 a thread and re-read from
// global memory beyond that. Statistics accumulate in float (double for f64) with
// deterministic shuffle/shared-memory reductions.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/NormPoolKernels.h"

namespace kiln::codegen::normpool {
namespace {

/// ODS default of every norm's epsilon (F32Attr "1e-5f"), as the f32 value it is.
const double kDefaultEpsilon = static_cast<double>(1e-5f);

constexpr std::string_view kBatchNormKernel = R"CUDA(
extern "C" __global__ void @FN@(const @T@ *__restrict__ x, const @ST@ *__restrict__ scale,
                               const @BT@ *__restrict__ bias, const @MT@ *__restrict__ mean,
                               const @VT@ *__restrict__ var, @T@ *__restrict__ y) {
  for (kiln_i64 i = blockIdx.x * (kiln_i64)blockDim.x + threadIdx.x; i < @TOTAL@;
       i += (kiln_i64)gridDim.x * blockDim.x) {
    const kiln_i64 c = (i / @INNER@) % @C@;
    const @CT@ stdDev = sqrt((@CT@)kiln_ld(var, c) + @EPS@);
    kiln_st(y, i, ((@CT@)kiln_ld(x, i) - (@CT@)kiln_ld(mean, c)) / stdDev * (@CT@)kiln_ld(scale, c) +
                      (@CT@)kiln_ld(bias, c));
  }
}
)CUDA";

/// Checks a per-channel operand: floating point of shape [C].
Status requireChannelVector(const OpDesc &op, const TensorDesc &tensor, int64_t channels, const std::string &role) {
  KILN_NP_TRY(requireFloat(op, tensor, role));
  if (tensor.shape != std::vector<int64_t>{channels})
    return op.error("the " + role + " must have shape [" + std::to_string(channels) + "] (one value per channel), got " +
                    formatShape(tensor.shape));
  return Status::ok();
}

} // namespace

StatusOr<EmittedKernels> emitBatchNorm(const OpDesc &op, const EmitContext &context) {
  KILN_NP_TRY(checkArity(op, 5, 1));
  const char *roles[] = {"input", "scale", "bias", "mean", "variance"};
  const TensorDesc *t[5];
  for (size_t k = 0; k < 5; ++k) {
    auto operand = requireOperand(op, k, roles[k]);
    if (!operand.isOk())
      return operand.status();
    t[k] = operand.value();
  }
  const TensorDesc &x = *t[0];
  KILN_NP_TRY(requireFloat(op, x, "input"));
  if (x.shape.size() < 2)
    return op.error("the input must be [N, C, ...], got shape " + formatShape(x.shape));
  int64_t channels = x.shape[1];
  for (size_t k = 1; k < 5; ++k)
    KILN_NP_TRY(requireChannelVector(op, *t[k], channels, roles[k]));
  KILN_NP_TRY(requireResult(op, x.dtype, x.shape));

  EmittedKernels out;
  int64_t total = x.numElements();
  if (total == 0)
    return out;
  std::string fn = context.symbol + "batch_norm";
  out.source = fill(kBatchNormKernel,
                    {{"FN", fn},
                     {"T", storageType(x.dtype)},
                     {"ST", storageType(t[1]->dtype)},
                     {"BT", storageType(t[2]->dtype)},
                     {"MT", storageType(t[3]->dtype)},
                     {"VT", storageType(t[4]->dtype)},
                     {"CT", computeType(x.dtype)},
                     {"TOTAL", literalInt(total)},
                     {"INNER", literalInt(product(std::vector<int64_t>(x.shape.begin() + 2, x.shape.end())))},
                     {"C", literalInt(channels)},
                     {"EPS", literal(x.dtype, op.attrFloat("epsilon", kDefaultEpsilon))}});
  out.launches.push_back(gridStrideLaunch(fn, total,
                                          {KernelArg::operand(0), KernelArg::operand(1), KernelArg::operand(2),
                                           KernelArg::operand(3), KernelArg::operand(4), KernelArg::result(0)}));
  return out;
}

namespace {

//===-- Row normalization (instance, layer, group) ----------------------===//

/// A normalization over `rows` contiguous rows of `size` elements of operand 0; scale is
/// operand 1 and bias operand 2 (absent for a layer_norm without bias).
struct RowNorm {
  std::string function;
  int64_t rows = 0, size = 0;
  /// C expressions (of `row` and `col`) of the scale and bias elements for an element.
  std::string scaleIndex, biasIndex;
  bool hasBias = true;
};

/// Cached: each thread keeps its @ITEMS@ values in registers between the passes.
constexpr std::string_view kRowNormCached = R"CUDA(
extern "C" __global__ void __launch_bounds__(@BLOCK@) @FN@(const @T@ *__restrict__ x, const @ST@ *__restrict__ scale,@BIAS_PARAM@
                               @T@ *__restrict__ y) {
  constexpr kiln_i64 kSize = @SIZE@;
  constexpr int kItems = @ITEMS@;
@SETUP@
  @ROW_LOOP@ {
    const kiln_i64 base = row * kSize;
    @CT@ v[kItems];
    @CT@ acc = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const kiln_i64 col = @FIRST@ + (kiln_i64)@STEP@ * k;
      v[k] = col < kSize ? (@CT@)kiln_ld(x, base + col) : (@CT@)0;
      acc += v[k];
    }
    const @CT@ mean = @REDUCE@ / (@CT@)kSize;
    acc = 0;
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const kiln_i64 col = @FIRST@ + (kiln_i64)@STEP@ * k;
      const @CT@ d = v[k] - mean;
      acc += col < kSize ? d * d : (@CT@)0;
    }
    const @CT@ stdDev = sqrt(@REDUCE@ / (@CT@)kSize + @EPS@);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const kiln_i64 col = @FIRST@ + (kiln_i64)@STEP@ * k;
      if (col < kSize)
        kiln_st(y, base + col, (v[k] - mean) / stdDev * (@CT@)kiln_ld(scale, @SCALE_INDEX@)@BIAS_TERM@);
    }
  }
}
)CUDA";

/// Streaming: rows too long for registers are read three times (the later reads mostly hit L2).
constexpr std::string_view kRowNormStreaming = R"CUDA(
extern "C" __global__ void __launch_bounds__(@BLOCK@) @FN@(const @T@ *__restrict__ x, const @ST@ *__restrict__ scale,@BIAS_PARAM@
                               @T@ *__restrict__ y) {
  constexpr kiln_i64 kSize = @SIZE@;
@SETUP@
  @ROW_LOOP@ {
    const kiln_i64 base = row * kSize;
    @CT@ acc = 0;
    for (kiln_i64 col = @FIRST@; col < kSize; col += @STEP@)
      acc += (@CT@)kiln_ld(x, base + col);
    const @CT@ mean = @REDUCE@ / (@CT@)kSize;
    acc = 0;
    for (kiln_i64 col = @FIRST@; col < kSize; col += @STEP@) {
      const @CT@ d = (@CT@)kiln_ld(x, base + col) - mean;
      acc += d * d;
    }
    const @CT@ stdDev = sqrt(@REDUCE@ / (@CT@)kSize + @EPS@);
    for (kiln_i64 col = @FIRST@; col < kSize; col += @STEP@)
      kiln_st(y, base + col,
              ((@CT@)kiln_ld(x, base + col) - mean) / stdDev * (@CT@)kiln_ld(scale, @SCALE_INDEX@)@BIAS_TERM@);
  }
}
)CUDA";

constexpr int64_t kWarpRowLimit = 1024;
constexpr int64_t kMaxCachedItems = 16;

StatusOr<EmittedKernels> emitRowNorm(const OpDesc &op, const RowNorm &norm) {
  const TensorDesc &x = *op.operands[0];
  const TensorDesc &scale = *op.operands[1];
  EmittedKernels out;
  if (norm.rows == 0 || norm.size == 0)
    return out;
  std::string ct = computeType(x.dtype);
  bool perWarp = norm.size <= kWarpRowLimit;
  int64_t threads = perWarp ? 32 : norm.size <= 4096 ? 256 : norm.size <= 8192 ? 512 : 1024;
  int64_t items = (norm.size + threads - 1) / threads;
  bool cached = perWarp || items <= kMaxCachedItems;
  std::vector<std::pair<std::string, std::string>> values = {
      {"FN", norm.function},
      {"T", storageType(x.dtype)},
      {"ST", storageType(scale.dtype)},
      {"CT", ct},
      {"SIZE", literalInt(norm.size)},
      {"ITEMS", std::to_string(items)},
      // Blocks of up to 1024 threads launch only if the compiler keeps registers within bounds.
      {"BLOCK", perWarp ? "256" : std::to_string(threads)},
      {"EPS", literal(x.dtype, op.attrFloat("epsilon", kDefaultEpsilon))},
      {"SCALE_INDEX", norm.scaleIndex},
      {"BIAS_PARAM", norm.hasBias ? " const " + storageType(op.operands[2]->dtype) + " *__restrict__ bias," : ""},
      {"BIAS_TERM", norm.hasBias ? " + (" + ct + ")kiln_ld(bias, " + norm.biasIndex + ")" : ""},
  };
  if (perWarp) {
    values.push_back({"SETUP", "  const int lane = threadIdx.x & 31;\n  const kiln_i64 warps = blockDim.x >> 5;"});
    values.push_back({"ROW_LOOP", "for (kiln_i64 row = blockIdx.x * warps + (threadIdx.x >> 5); row < " +
                                      literalInt(norm.rows) + "; row += (kiln_i64)gridDim.x * warps)"});
    values.push_back({"FIRST", "lane"});
    values.push_back({"STEP", "32"});
    values.push_back({"REDUCE", "kiln_np_warp_sum(acc)"});
  } else {
    values.push_back({"SETUP", "  __shared__ " + ct + " shared[32];"});
    values.push_back({"ROW_LOOP", "for (kiln_i64 row = blockIdx.x; row < " + literalInt(norm.rows) +
                                      "; row += gridDim.x)"});
    values.push_back({"FIRST", "(kiln_i64)threadIdx.x"});
    values.push_back({"STEP", std::to_string(threads)});
    values.push_back({"REDUCE", "kiln_np_block_sum(acc, shared)"});
  }
  out.source = fill(cached ? kRowNormCached : kRowNormStreaming, values);
  std::vector<KernelArg> args = {KernelArg::operand(0), KernelArg::operand(1)};
  if (norm.hasBias)
    args.push_back(KernelArg::operand(2));
  args.push_back(KernelArg::result(0));
  out.launches.push_back(perWarp ? warpPerRowLaunch(norm.function, norm.rows, std::move(args))
                                 : blockPerRowLaunch(norm.function, norm.rows, static_cast<uint32_t>(threads),
                                                     std::move(args)));
  return out;
}

/// Operands input, scale and bias (bias optional only where `biasOptional`), all floating point.
Status checkNormOperands(const OpDesc &op, bool biasOptional) {
  KILN_NP_TRY(checkArity(op, 3, 1));
  for (size_t k = 0; k < 3; ++k) {
    const char *role = k == 0 ? "input" : k == 1 ? "scale" : "bias";
    if (k == 2 && biasOptional && !op.operands[2])
      continue;
    auto operand = requireOperand(op, k, role);
    if (!operand.isOk())
      return operand.status();
    KILN_NP_TRY(requireFloat(op, *operand.value(), role));
  }
  const TensorDesc &x = *op.operands[0];
  return requireResult(op, x.dtype, x.shape);
}

} // namespace

StatusOr<EmittedKernels> emitInstanceNorm(const OpDesc &op, const EmitContext &context) {
  KILN_NP_TRY(checkNormOperands(op, /*biasOptional=*/false));
  const TensorDesc &x = *op.operands[0];
  if (x.shape.size() < 2)
    return op.error("the input must be [N, C, ...], got shape " + formatShape(x.shape));
  int64_t channels = x.shape[1];
  KILN_NP_TRY(requireChannelVector(op, *op.operands[1], channels, "scale"));
  KILN_NP_TRY(requireChannelVector(op, *op.operands[2], channels, "bias"));
  RowNorm norm;
  norm.function = context.symbol + "instance_norm";
  norm.rows = x.shape[0] * channels;
  norm.size = product(std::vector<int64_t>(x.shape.begin() + 2, x.shape.end()));
  norm.scaleIndex = norm.biasIndex = "(row % " + literalInt(std::max<int64_t>(channels, 1)) + ")";
  return emitRowNorm(op, norm);
}

StatusOr<EmittedKernels> emitGroupNorm(const OpDesc &op, const EmitContext &context) {
  KILN_NP_TRY(checkNormOperands(op, /*biasOptional=*/false));
  const TensorDesc &x = *op.operands[0];
  if (x.shape.size() < 2)
    return op.error("the input must be [N, C, ...], got shape " + formatShape(x.shape));
  if (!op.hasAttr("num_groups"))
    return op.error("missing attribute 'num_groups'; the importer always sets it");
  int64_t channels = x.shape[1], groups = op.attrInt("num_groups", 0);
  if (groups < 1 || channels % groups != 0)
    return op.error("num_groups (" + std::to_string(groups) + ") must be positive and divide the " +
                    std::to_string(channels) + " channels");
  KILN_NP_TRY(requireChannelVector(op, *op.operands[1], channels, "scale"));
  KILN_NP_TRY(requireChannelVector(op, *op.operands[2], channels, "bias"));
  int64_t inner = product(std::vector<int64_t>(x.shape.begin() + 2, x.shape.end()));
  RowNorm norm;
  norm.function = context.symbol + "group_norm";
  norm.rows = x.shape[0] * groups;
  norm.size = channels / groups * inner;
  // Channel of element `col` of group row: the group's first channel plus col / inner.
  norm.scaleIndex = norm.biasIndex = "((row % " + literalInt(groups) + ") * " + literalInt(channels / groups) +
                                     " + col / " + literalInt(std::max<int64_t>(inner, 1)) + ")";
  return emitRowNorm(op, norm);
}

StatusOr<EmittedKernels> emitLayerNorm(const OpDesc &op, const EmitContext &context) {
  KILN_NP_TRY(checkNormOperands(op, /*biasOptional=*/true));
  const TensorDesc &x = *op.operands[0];
  if (!op.hasAttr("axis"))
    return op.error("missing attribute 'axis'; the importer always sets it");
  int64_t rank = static_cast<int64_t>(x.shape.size()), axis = op.attrInt("axis", 0);
  if (axis < 0 || axis >= rank)
    return op.error("axis " + std::to_string(axis) + " is out of range for input shape " + formatShape(x.shape) +
                    " (the importer normalizes it to [0, rank))");
  std::vector<int64_t> normalized(x.shape.begin() + axis, x.shape.end());
  // scale and bias broadcast (numpy, right-aligned) to the normalized axes.
  auto indexOf = [&](const TensorDesc &t, const std::string &role) -> StatusOr<std::string> {
    bool fits = t.shape.size() <= normalized.size();
    for (size_t d = 0; fits && d < t.shape.size(); ++d) {
      int64_t target = normalized[normalized.size() - t.shape.size() + d];
      fits = t.shape[d] == 1 || t.shape[d] == target;
    }
    if (!fits)
      return op.error("the " + role + " shape " + formatShape(t.shape) + " does not broadcast to the normalized axes " +
                      formatShape(normalized));
    return broadcastOffset(t.shape, normalized, "col");
  };
  RowNorm norm;
  norm.function = context.symbol + "layer_norm";
  norm.size = product(normalized);
  norm.rows = norm.size == 0 ? 0 : x.numElements() / norm.size;
  auto scaleIndex = indexOf(*op.operands[1], "scale");
  if (!scaleIndex.isOk())
    return scaleIndex.status();
  norm.scaleIndex = scaleIndex.value();
  norm.hasBias = op.operands[2].has_value();
  if (norm.hasBias) {
    auto biasIndex = indexOf(*op.operands[2], "bias");
    if (!biasIndex.isOk())
      return biasIndex.status();
    norm.biasIndex = biasIndex.value();
  }
  return emitRowNorm(op, norm);
}

} // namespace kiln::codegen::normpool
