//===- NormPoolPooling.cpp - max/avg pooling and global pooling kernels ----===//
//
// kiln.max_pool / kiln.avg_pool: one thread per output element walks its window (1 to 3
// spatial axes, padded to 3 with unit axes as the interpreter does, so one kernel shape serves
// all). kiln.global_avg_pool / kiln.global_max_pool: one (n, c) plane per warp when the plane
// is small (ResNet-50's 7x7), per block otherwise, reduced with shuffles -- deterministic.
// With `channels_last` the same windows run over [N, D1..Dk, C] in NormPoolPoolingChannelsLast.cpp.
//
// Semantics follow ir/Interpreter/DenseEval.cpp: taps outside the image are skipped (never
// read as a value); avg divides by the taps inside the image, or with count_include_pad by the
// taps inside the padded image (a ceil_mode window running past the end padding counts only
// the part inside it); max propagates NaN; i8/ui8 max starts at the type's lowest value.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/NormPoolKernels.h"

#include <limits>

namespace kiln::codegen::normpool {

/// Window geometry of a pool whose shapes are given channels first ([N, C, D1..Dk]).
static StatusOr<PoolGeometry> poolGeometry(const OpDesc &op, const std::vector<int64_t> &input,
                                           const std::vector<int64_t> &result) {
  int64_t rank = static_cast<int64_t>(input.size()), spatial = rank - 2;
  if (spatial < 1 || spatial > 3)
    return op.error("pooling supports 1 to 3 spatial axes ([N, C, D1..D3]), got input shape " +
                    formatShape(op.operands[0]->shape));
  if (result.size() != input.size() || result[0] != input[0] || result[1] != input[1])
    return op.error("the result shape " + formatShape(op.results[0].shape) + " does not keep the input's N and C " +
                    formatShape(op.operands[0]->shape));
  for (const char *name : {"kernel_shape", "strides", "dilations", "pads"})
    if (!op.hasAttr(name))
      return op.error(std::string("missing attribute '") + name + "'; the importer always sets it");
  std::vector<int64_t> kernel = op.attrInts("kernel_shape"), strides = op.attrInts("strides");
  std::vector<int64_t> dilations = op.attrInts("dilations"), pads = op.attrInts("pads");
  if ((int64_t)kernel.size() != spatial || (int64_t)strides.size() != spatial ||
      (int64_t)dilations.size() != spatial || (int64_t)pads.size() != 2 * spatial)
    return op.error("kernel_shape, strides and dilations need " + std::to_string(spatial) + " values and pads " +
                    std::to_string(2 * spatial) + " (begins then ends) for input shape " +
                    formatShape(op.operands[0]->shape));
  PoolGeometry g;
  int64_t lead = 3 - spatial;
  for (int64_t a = 0; a < 3; ++a) {
    if (a < lead) {
      g.image[a] = g.positions[a] = g.kernel[a] = g.stride[a] = g.dilation[a] = 1;
      g.padBegin[a] = g.padEnd[a] = 0;
      continue;
    }
    int64_t s = a - lead;
    g.image[a] = input[s + 2];
    g.positions[a] = result[s + 2];
    g.kernel[a] = kernel[s];
    g.stride[a] = strides[s];
    g.dilation[a] = dilations[s];
    g.padBegin[a] = pads[s];
    g.padEnd[a] = pads[s + spatial];
    if (g.kernel[a] < 1 || g.stride[a] < 1 || g.dilation[a] < 1 || g.padBegin[a] < 0 || g.padEnd[a] < 0)
      return op.error("kernel_shape, strides and dilations must be positive and pads non-negative");
  }
  return g;
}

std::vector<std::pair<std::string, std::string>> poolValues(const std::string &fn, DType dtype,
                                                            const PoolGeometry &g) {
  std::vector<std::pair<std::string, std::string>> values = {
      {"FN", fn}, {"T", storageType(dtype)}, {"CT", computeType(dtype)}};
  for (int a = 0; a < 3; ++a) {
    std::string n = std::to_string(a);
    values.push_back({"P" + n, literalInt(g.positions[a])});
    values.push_back({"I" + n, literalInt(g.image[a])});
    values.push_back({"K" + n, literalInt(g.kernel[a])});
    values.push_back({"S" + n, literalInt(g.stride[a])});
    values.push_back({"D" + n, literalInt(g.dilation[a])});
    values.push_back({"PB" + n, literalInt(g.padBegin[a])});
    values.push_back({"PE" + n, literalInt(g.padEnd[a])});
  }
  return values;
}

namespace {

/// [N, D1..Dk, C] as [N, C, D1..Dk].
std::vector<int64_t> channelsFirst(const std::vector<int64_t> &shape) {
  std::vector<int64_t> out = shape;
  if (shape.size() >= 2) {
    out[1] = shape.back();
    std::copy(shape.begin() + 1, shape.end() - 1, out.begin() + 2);
  }
  return out;
}

// The window loop nest shared by max and avg: @VISIT@ sees `src` offset `tap`.
constexpr std::string_view kPoolKernel = R"CUDA(
extern "C" __global__ void @FN@(const @T@ *__restrict__ x, @T@ *__restrict__ y) {
  for (kiln_i64 i = blockIdx.x * (kiln_i64)blockDim.x + threadIdx.x; i < @TOTAL@;
       i += (kiln_i64)gridDim.x * blockDim.x) {
    kiln_i64 r = i;
    const kiln_i64 o2 = r % @P2@;
    r /= @P2@;
    const kiln_i64 o1 = r % @P1@;
    r /= @P1@;
    const kiln_i64 o0 = r % @P0@;
    const @T@ *src = x + (r / @P0@) * @IMAGE@;
    const kiln_i64 b0 = o0 * @S0@ - @PB0@, b1 = o1 * @S1@ - @PB1@, b2 = o2 * @S2@ - @PB2@;
@INIT@
    for (kiln_i64 k0 = 0; k0 < @K0@; ++k0) {
      const kiln_i64 x0 = b0 + k0 * @D0@;
      if (x0 < 0 || x0 >= @I0@)
        continue;
      for (kiln_i64 k1 = 0; k1 < @K1@; ++k1) {
        const kiln_i64 x1 = b1 + k1 * @D1@;
        if (x1 < 0 || x1 >= @I1@)
          continue;
        for (kiln_i64 k2 = 0; k2 < @K2@; ++k2) {
          const kiln_i64 x2 = b2 + k2 * @D2@;
          if (x2 < 0 || x2 >= @I2@)
            continue;
          const kiln_i64 tap = (x0 * @I1@ + x1) * @I2@ + x2;
@VISIT@
        }
      }
    }
@FINISH@
  }
}
)CUDA";

// Taps inside the padded image along each axis, for count_include_pad.
constexpr std::string_view kPaddedCount = R"CUDA(
    kiln_i64 padded = 1;
    {
      kiln_i64 c0 = 0, c1 = 0, c2 = 0;
      for (kiln_i64 k = 0; k < @K0@; ++k) c0 += (b0 + k * @D0@ >= -@PB0@ && b0 + k * @D0@ < @I0@ + @PE0@);
      for (kiln_i64 k = 0; k < @K1@; ++k) c1 += (b1 + k * @D1@ >= -@PB1@ && b1 + k * @D1@ < @I1@ + @PE1@);
      for (kiln_i64 k = 0; k < @K2@; ++k) c2 += (b2 + k * @D2@ >= -@PB2@ && b2 + k * @D2@ < @I2@ + @PE2@);
      padded = c0 * c1 * c2;
    })CUDA";

/// What max or avg does per window (both layouts).
PoolBody poolBody(const OpDesc &op, DType dtype, bool isMax) {
  PoolBody body;
  if (isMax) {
    // The padding never wins: floats start at -inf, i8/ui8 at the type's lowest value.
    bool isInt = dtype == DType::I8 || dtype == DType::U8;
    std::string lowest = isInt ? literal(dtype, dtype == DType::I8 ? -128.0 : 0.0)
                               : literal(dtype, -std::numeric_limits<double>::infinity());
    body.name = "best";
    body.identity = lowest;
    body.lane = isInt ? "best@L@ = v > best@L@ ? v : best@L@;"
                      // A NaN tap sticks: nothing compares greater than it afterwards.
                      : "best@L@ = (v > best@L@ || v != v) ? v : best@L@;";
    body.result = "best@L@";
  } else {
    body.includePad = op.attrInt("count_include_pad", 0) != 0;
    body.name = "sum";
    body.identity = "0";
    body.init = "kiln_i64 inside = 0;";
    body.tap = "++inside;";
    body.lane = "sum@L@ += v;";
    body.result = body.includePad ? "sum@L@ / (@CT@)padded" : "sum@L@ / (@CT@)inside";
  }
  return body;
}

} // namespace

StatusOr<EmittedKernels> emitPool(const OpDesc &op, const EmitContext &context, bool isMax,
                                  const PoolEpilogue *epilogue) {
  KILN_NP_TRY(checkArity(op, 1, 1));
  auto input = requireOperand(op, 0, "input");
  if (!input.isOk())
    return input.status();
  const TensorDesc &x = *input.value();
  bool isInt = x.dtype == DType::I8 || x.dtype == DType::U8;
  if (!(isMax && isInt))
    KILN_NP_TRY(requireFloat(op, x, isMax ? "input (or i8/ui8)" : "input"));
  if (op.results[0].dtype != x.dtype)
    return op.error("the result element type differs from the input's");
  bool last = op.attrInt("channels_last", 0) != 0;
  if (last && (x.shape.size() < 3 || op.results[0].shape.size() < 3))
    return op.error("channels_last pooling needs [N, D1..Dk, C] with k >= 1, got input shape " +
                    formatShape(x.shape));
  auto geometry = last ? poolGeometry(op, channelsFirst(x.shape), channelsFirst(op.results[0].shape))
                       : poolGeometry(op, x.shape, op.results[0].shape);
  if (!geometry.isOk())
    return geometry.status();
  const PoolGeometry &g = geometry.value();

  EmittedKernels out;
  int64_t total = op.results[0].numElements();
  if (total == 0)
    return out; // nothing to compute
  PoolBody body = poolBody(op, x.dtype, isMax);
  if (last)
    return emitChannelsLastPool(op, context, isMax, g, body, epilogue);
  if (epilogue)
    return op.error("internal: only a channels_last pool takes an epilogue (a pool fusion group)");

  std::string fn = context.symbol + (isMax ? "max_pool" : "avg_pool");
  std::vector<std::pair<std::string, std::string>> values = poolValues(fn, x.dtype, g);
  values.push_back({"TOTAL", literalInt(total)});
  values.push_back({"IMAGE", literalInt(g.image[0] * g.image[1] * g.image[2])});
  values.push_back({"L", ""}); // one lane: scalar accumulators
  std::string init = "    @CT@ " + body.name + " = " + body.identity + ";\n    " + body.init;
  std::string visit = "          const @CT@ v = kiln_ld(src, tap);\n          " + body.tap + "\n          " + body.lane;
  std::string finish = (body.includePad ? std::string(kPaddedCount) + "\n" : "") + "    kiln_st(y, i, " +
                       body.result + ");";
  values.push_back({"INIT", fill(init, values)});
  values.push_back({"VISIT", fill(visit, values)});
  values.push_back({"FINISH", fill(finish, values)});
  out.source = fill(kPoolKernel, values);
  out.launches.push_back(gridStrideLaunch(fn, total, {KernelArg::operand(0), KernelArg::result(0)}));
  return out;
}

namespace {

// Global pools: one row = one (n, c) plane. @ACC@ folds value `v` into `acc`.
constexpr std::string_view kGlobalPoolWarp = R"CUDA(
extern "C" __global__ void @FN@(const @T@ *__restrict__ x, @T@ *__restrict__ y) {
  const int lane = threadIdx.x & 31;
  const kiln_i64 warps = blockDim.x >> 5;
  for (kiln_i64 row = blockIdx.x * warps + (threadIdx.x >> 5); row < @ROWS@; row += (kiln_i64)gridDim.x * warps) {
    const @T@ *src = x + row * @SIZE@;
    @CT@ acc = @IDENTITY@;
    for (kiln_i64 k = lane; k < @SIZE@; k += 32) {
      const @CT@ v = kiln_ld(src, k);
      acc = @ACC@;
    }
    acc = @WARP_REDUCE@(acc);
    if (lane == 0)
      kiln_st(y, row, @RESULT@);
  }
}
)CUDA";

constexpr std::string_view kGlobalPoolBlock = R"CUDA(
extern "C" __global__ void __launch_bounds__(@THREADS@) @FN@(const @T@ *__restrict__ x, @T@ *__restrict__ y) {
  __shared__ @CT@ shared[32];
  for (kiln_i64 row = blockIdx.x; row < @ROWS@; row += gridDim.x) {
    const @T@ *src = x + row * @SIZE@;
    @CT@ acc = @IDENTITY@;
    for (kiln_i64 k = threadIdx.x; k < @SIZE@; k += @THREADS@) {
      const @CT@ v = kiln_ld(src, k);
      acc = @ACC@;
    }
    acc = @BLOCK_REDUCE@(acc, shared);
    if (threadIdx.x == 0)
      kiln_st(y, row, @RESULT@);
  }
}
)CUDA";

/// Planes up to this size are reduced by one warp each.
constexpr int64_t kWarpPlaneLimit = 1024;

StatusOr<EmittedKernels> emitGlobalPool(const OpDesc &op, const EmitContext &context, bool isMax) {
  KILN_NP_TRY(checkArity(op, 1, 1));
  auto input = requireOperand(op, 0, "input");
  if (!input.isOk())
    return input.status();
  const TensorDesc &x = *input.value();
  KILN_NP_TRY(requireFloat(op, x, "input"));
  bool last = op.attrInt("channels_last", 0) != 0;
  if (x.shape.size() < (last ? 3u : 2u))
    return op.error(std::string("the input must be ") + (last ? "[N, D1..Dk, C]" : "[N, C, D1..Dk]") +
                    ", got shape " + formatShape(x.shape));
  std::vector<int64_t> resultShape(x.shape.size(), 1);
  resultShape[0] = x.shape[0];
  resultShape[last ? x.shape.size() - 1 : 1] = x.shape[last ? x.shape.size() - 1 : 1];
  KILN_NP_TRY(requireResult(op, x.dtype, resultShape));
  if (last)
    return emitChannelsLastGlobalPool(op, context, isMax);

  EmittedKernels out;
  int64_t rows = x.shape[0] * x.shape[1];
  int64_t size = product(std::vector<int64_t>(x.shape.begin() + 2, x.shape.end()));
  if (rows == 0)
    return out;
  std::string fn = context.symbol + (isMax ? "global_max_pool" : "global_avg_pool");
  std::string ct = computeType(x.dtype);
  bool perWarp = size <= kWarpPlaneLimit;
  uint32_t threads = size <= 16384 ? 256 : 512;
  std::vector<std::pair<std::string, std::string>> values = {
      {"FN", fn},
      {"T", storageType(x.dtype)},
      {"CT", ct},
      {"ROWS", literalInt(rows)},
      {"SIZE", literalInt(size)},
      {"THREADS", std::to_string(threads)},
      // An empty plane: the mean is 0/0 = NaN and the max -inf, as in the interpreter.
      {"IDENTITY", isMax ? literal(x.dtype, -std::numeric_limits<double>::infinity()) : "(" + ct + ")0"},
      {"ACC", isMax ? "kiln_np_max_nan(acc, v)" : "acc + v"},
      {"WARP_REDUCE", isMax ? "kiln_np_warp_max_nan" : "kiln_np_warp_sum"},
      {"BLOCK_REDUCE", isMax ? "kiln_np_block_max_nan" : "kiln_np_block_sum"},
      {"RESULT", isMax ? "acc" : "acc / (" + ct + ")" + literalInt(size)},
  };
  out.source = fill(perWarp ? kGlobalPoolWarp : kGlobalPoolBlock, values);
  std::vector<KernelArg> args = {KernelArg::operand(0), KernelArg::result(0)};
  out.launches.push_back(perWarp ? warpPerRowLaunch(fn, rows, std::move(args))
                                 : blockPerRowLaunch(fn, rows, threads, std::move(args)));
  return out;
}

} // namespace

StatusOr<EmittedKernels> emitMaxPool(const OpDesc &op, const EmitContext &context) {
  return emitPool(op, context, /*isMax=*/true);
}
StatusOr<EmittedKernels> emitAvgPool(const OpDesc &op, const EmitContext &context) {
  return emitPool(op, context, /*isMax=*/false);
}
StatusOr<EmittedKernels> emitGlobalAvgPool(const OpDesc &op, const EmitContext &context) {
  return emitGlobalPool(op, context, /*isMax=*/false);
}
StatusOr<EmittedKernels> emitGlobalMaxPool(const OpDesc &op, const EmitContext &context) {
  return emitGlobalPool(op, context, /*isMax=*/true);
}

} // namespace kiln::codegen::normpool
