//===- NormPoolPoolingChannelsLast.cpp - pooling over [N, D1..Dk, C] -------===//
//
// Pools with `channels_last` (kiln-convert-layout sets it): the channel axis is innermost, so
// neighbouring threads take neighbouring channels and every load is coalesced; each thread moves
// a vector of V channels (16 bytes: 4 f32, 8 f16/bf16, 2 f64, 16 f8/i8) when C allows, else
// fewer, down to one.
//
// kiln.max_pool / kiln.avg_pool: one thread per (output position, channel vector) walks the
// window exactly as the channels-first kernel does (NormPoolPooling.cpp, the same PoolBody), so
// each lane sees the same taps in the same order and rounds once: the results are bit-identical
// to the channels-first kernel's on the transposed tensor.
//
// kiln.global_avg_pool / kiln.global_max_pool: a block of 256 threads takes TX channel vectors of
// one image (x) by 256/TX rows of the spatial range (y); each thread folds its rows in the
// compute type (f32 for half types, as the channels-first kernel), the block folds its rows in a
// fixed tree in shared memory. When N * C / V is too small to fill the GPU (MobileNetV3's SE
// blocks at batch 1: [1, H, W, C] with small C and H*W up to 112*112) the spatial range is also
// split across blocks: partials go to scratch and a second kernel folds them in a fixed order.
// Every order is fixed, so results are deterministic; they differ from the channels-first
// kernel's (which folds a plane lane-strided) only by the order of f32 additions.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/NormPoolKernels.h"

#include <algorithm>
#include <limits>

namespace kiln::codegen::normpool {

int64_t channelVectorWidth(DType dtype, int64_t channels) {
  int64_t width = std::max<int64_t>(16 / static_cast<int64_t>(plan::dtypeBytes(dtype)), 1);
  while (width > 1 && channels % width != 0)
    width /= 2;
  return width;
}

namespace {

// Output i = (n, o0, o1, o2) * CV + channel vector; it is also the index of its vector in y.
constexpr std::string_view kPoolKernel = R"CUDA(
extern "C" __global__ void @FN@(const @T@ *__restrict__ x, @YT@ *__restrict__ y) {
  typedef kiln_np_vec<@T@, @V@> vec;
  typedef kiln_np_vec<@YT@, @V@> yvec;
  for (kiln_i64 i = blockIdx.x * (kiln_i64)blockDim.x + threadIdx.x; i < @TOTAL@;
       i += (kiln_i64)gridDim.x * blockDim.x) {
    kiln_i64 r = i / @CV@;
    const kiln_i64 c = (i - r * @CV@) * @V@;
    const kiln_i64 o2 = r % @P2@;
    r /= @P2@;
    const kiln_i64 o1 = r % @P1@;
    r /= @P1@;
    const kiln_i64 o0 = r % @P0@;
    const @T@ *src = x + (r / @P0@) * @IMAGE@ + c;
    const kiln_i64 b0 = o0 * @S0@ - @PB0@, b1 = o1 * @S1@ - @PB1@, b2 = o2 * @S2@ - @PB2@;
    @CT@ @NAME@[@V@];
#pragma unroll
    for (int j = 0; j < @V@; ++j)
      @NAME@[j] = @IDENTITY@;
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
          const vec t = *reinterpret_cast<const vec *>(src + ((x0 * @I1@ + x1) * @I2@ + x2) * @C@);
          @TAP@
#pragma unroll
          for (int j = 0; j < @V@; ++j) {
            const @CT@ v = kiln_ld(t.v, j);
            @LANE@
          }
        }
      }
    }
@PADDED@
    yvec out;
#pragma unroll
    for (int j = 0; j < @V@; ++j) {
@STORE@
    }
    reinterpret_cast<yvec *>(y)[i] = out;
  }
}
)CUDA";

// Taps inside the padded image along each axis, for count_include_pad (as NormPoolPooling.cpp).
constexpr std::string_view kPaddedCount = R"CUDA(
    kiln_i64 padded = 1;
    {
      kiln_i64 c0 = 0, c1 = 0, c2 = 0;
      for (kiln_i64 k = 0; k < @K0@; ++k) c0 += (b0 + k * @D0@ >= -@PB0@ && b0 + k * @D0@ < @I0@ + @PE0@);
      for (kiln_i64 k = 0; k < @K1@; ++k) c1 += (b1 + k * @D1@ >= -@PB1@ && b1 + k * @D1@ < @I1@ + @PE1@);
      for (kiln_i64 k = 0; k < @K2@; ++k) c2 += (b2 + k * @D2@ >= -@PB2@ && b2 + k * @D2@ < @I2@ + @PE2@);
      padded = c0 * c1 * c2;
    })CUDA";

} // namespace

StatusOr<EmittedKernels> emitChannelsLastPool(const OpDesc &op, const EmitContext &context, bool isMax,
                                              const PoolGeometry &g, const PoolBody &body,
                                              const PoolEpilogue *epilogue) {
  const TensorDesc &x = *op.operands[0];
  int64_t channels = x.shape.back();
  int64_t width = channelVectorWidth(x.dtype, channels);
  int64_t vectors = op.results[0].numElements() / width;
  std::string fn = context.symbol + (isMax ? "max_pool" : "avg_pool");
  std::vector<std::pair<std::string, std::string>> values = poolValues(fn, x.dtype, g);
  values.push_back({"L", "[j]"}); // accumulators: one per lane
  values.push_back({"V", std::to_string(width)});
  values.push_back({"C", literalInt(channels)});
  values.push_back({"CV", literalInt(channels / width)});
  values.push_back({"TOTAL", literalInt(vectors)});
  values.push_back({"IMAGE", literalInt(g.image[0] * g.image[1] * g.image[2] * channels)});
  values.push_back({"NAME", body.name});
  values.push_back({"IDENTITY", body.identity});
  values.push_back({"INIT", fill(body.init, values)});
  values.push_back({"TAP", fill(body.tap, values)});
  values.push_back({"LANE", fill(body.lane, values)});
  values.push_back({"RESULT", fill(body.result, values)});
  values.push_back({"PADDED", body.includePad ? fill(kPaddedCount, values) : ""});
  values.push_back({"YT", storageType(epilogue ? epilogue->result : x.dtype)});
  // Each lane as the op stores it; with an epilogue, into v0 for the epilogue to read.
  values.push_back({"STORE", epilogue ? fill("      @T@ v0[1];\n      kiln_st(v0, 0, @RESULT@);\n      ", values) +
                                            epilogue->statements + "\n      out.v[j] = " + epilogue->value + ";"
                                      : fill("      kiln_st(out.v, j, @RESULT@);", values)});

  EmittedKernels out;
  out.source = fill(kPoolKernel, values);
  out.launches.push_back(gridStrideLaunch(fn, vectors, {KernelArg::operand(0), KernelArg::result(0)}));
  return out;
}

namespace {

// One unit = (image n, tile of TX channel vectors, part of the spatial range); the unit is
// uniform across the block, so the barriers are safe. red[j * 256 + thread] holds lane j of
// every thread's accumulator (consecutive threads, consecutive banks).
constexpr std::string_view kGlobalPoolKernel = R"CUDA(
__device__ __forceinline__ @CT@ @FN@_combine(@CT@ a, @CT@ b) { return @COMBINE@; }
extern "C" __global__ void __launch_bounds__(256) @FN@(const @T@ *__restrict__ x, @T@ *__restrict__ y@PARTIALPARAM@) {
  typedef kiln_np_vec<@T@, @V@> vec;
  __shared__ @CT@ red[256 * @V@];
  const int tx = threadIdx.x % @TX@, ty = threadIdx.x / @TX@;
  for (kiln_i64 unit = blockIdx.x; unit < @UNITS@; unit += gridDim.x) {
    const kiln_i64 part = unit % @SPLIT@, tile = unit / @SPLIT@;
    const kiln_i64 n = tile / @TILES@, cv = (tile % @TILES@) * @TX@ + tx;
    @CT@ acc[@V@];
#pragma unroll
    for (int j = 0; j < @V@; ++j)
      acc[j] = @IDENTITY@;
    if (cv < @CV@) {
      const @T@ *src = x + n * @PLANE@ + cv * @V@;
      const kiln_i64 end = part * @CHUNK@ + @CHUNK@ < @S@ ? part * @CHUNK@ + @CHUNK@ : @S@;
      for (kiln_i64 p = part * @CHUNK@ + ty; p < end; p += @TY@) {
        const vec t = *reinterpret_cast<const vec *>(src + p * @C@);
#pragma unroll
        for (int j = 0; j < @V@; ++j)
          acc[j] = @FN@_combine(acc[j], kiln_ld(t.v, j));
      }
    }
    // The TY rows of each channel fold pairwise, halving each step: a fixed order.
    __syncthreads();
#pragma unroll
    for (int j = 0; j < @V@; ++j)
      red[j * 256 + threadIdx.x] = acc[j];
    __syncthreads();
    for (int half = @TY@ / 2; half > 0; half >>= 1) {
      if (ty < half) {
#pragma unroll
        for (int j = 0; j < @V@; ++j)
          red[j * 256 + threadIdx.x] = @FN@_combine(red[j * 256 + threadIdx.x], red[j * 256 + threadIdx.x + half * @TX@]);
      }
      __syncthreads();
    }
    if (ty == 0 && cv < @CV@) {
@WRITE@
    }
  }
}
)CUDA";

constexpr std::string_view kWriteResult = R"CUDA(      vec out;
#pragma unroll
      for (int j = 0; j < @V@; ++j) {
        const @CT@ a = red[j * 256 + tx];
        kiln_st(out.v, j, @RESULT@);
      }
      *reinterpret_cast<vec *>(y + n * @C@ + cv * @V@) = out;)CUDA";

constexpr std::string_view kWritePartial = R"CUDA(#pragma unroll
      for (int j = 0; j < @V@; ++j)
        partial[part * @NC@ + n * @C@ + cv * @V@ + j] = red[j * 256 + tx];)CUDA";

// Folds the SPLIT partials of each (n, c) in order.
constexpr std::string_view kFoldKernel = R"CUDA(
extern "C" __global__ void @FN@_fold(const @CT@ *__restrict__ partial, @T@ *__restrict__ y) {
  for (kiln_i64 i = blockIdx.x * (kiln_i64)blockDim.x + threadIdx.x; i < @NC@;
       i += (kiln_i64)gridDim.x * blockDim.x) {
    @CT@ a = partial[i];
    for (kiln_i64 s = 1; s < @SPLIT@; ++s)
      a = @FN@_combine(a, partial[s * @NC@ + i]);
    kiln_st(y, i, @RESULT@);
  }
}
)CUDA";

/// Blocks that fill an H200 (132 SMs) about four deep, as the reductions aim for.
constexpr int64_t kFillBlocks = 2 * 264;
constexpr int64_t kThreads = 256;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace

StatusOr<EmittedKernels> emitChannelsLastGlobalPool(const OpDesc &op, const EmitContext &context, bool isMax) {
  const TensorDesc &x = *op.operands[0];
  EmittedKernels out;
  const int64_t images = x.shape[0], channels = x.shape.back();
  const int64_t size = product(std::vector<int64_t>(x.shape.begin() + 1, x.shape.end() - 1));
  if (images * channels == 0)
    return out;
  const int64_t width = channelVectorWidth(x.dtype, channels), vectors = channels / width;

  // Channel vectors across x: up to a warp's worth, fewer (down to 8, a 128-byte row of 16-byte
  // vectors) while the images have too few tiles to fill the GPU; the spatial range across y.
  int64_t tx = 1;
  while (tx < 32 && tx < vectors)
    tx *= 2;
  while (tx > 8 && images * ceilDiv(vectors, tx) < kFillBlocks)
    tx /= 2;
  const int64_t ty = kThreads / tx, tiles = ceilDiv(vectors, tx), units = images * tiles;
  int64_t split = 1;
  if (units < kFillBlocks / 2 && size >= ty * 8)
    split = std::min(ceilDiv(kFillBlocks, units), size / (ty * 4));
  split = std::max<int64_t>(split, 1);
  const int64_t chunk = std::max<int64_t>(ceilDiv(size, split), 1);
  split = std::max<int64_t>(ceilDiv(size, chunk), 1); // no empty parts

  std::string fn = context.symbol + (isMax ? "global_max_pool" : "global_avg_pool");
  std::string ct = computeType(x.dtype);
  std::vector<std::pair<std::string, std::string>> values = {
      {"FN", fn},
      {"T", storageType(x.dtype)},
      {"CT", ct},
      {"V", std::to_string(width)},
      {"C", literalInt(channels)},
      {"CV", literalInt(vectors)},
      {"NC", literalInt(images * channels)},
      {"S", literalInt(size)},
      {"PLANE", literalInt(size * channels)},
      {"TX", std::to_string(tx)},
      {"TY", std::to_string(ty)},
      {"TILES", literalInt(tiles)},
      {"SPLIT", literalInt(split)},
      {"UNITS", literalInt(units * split)},
      {"CHUNK", literalInt(chunk)},
      // An empty plane: the mean is 0/0 = NaN and the max -inf, as in the interpreter.
      {"IDENTITY", isMax ? literal(x.dtype, -std::numeric_limits<double>::infinity()) : "(" + ct + ")0"},
      {"COMBINE", isMax ? "kiln_np_max_nan(a, b)" : "a + b"},
      {"RESULT", isMax ? "a" : "a / (" + ct + ")" + literalInt(size)},
      {"PARTIALPARAM", split > 1 ? ", " + ct + " *__restrict__ partial" : ""},
  };
  values.push_back({"WRITE", fill(split > 1 ? kWritePartial : kWriteResult, values)});
  out.source = fill(kGlobalPoolKernel, values);

  KernelLaunch reduce;
  reduce.function = fn;
  reduce.grid = {static_cast<uint32_t>(std::clamp<int64_t>(units * split, 1, 65535)), 1, 1};
  reduce.block = {static_cast<uint32_t>(kThreads), 1, 1};
  reduce.args = {KernelArg::operand(0), KernelArg::result(0)};
  if (split > 1) {
    reduce.args.push_back(KernelArg::scratch(0));
    out.scratchBytes.push_back(static_cast<uint64_t>(split * images * channels) * (ct == "double" ? 8 : 4));
    out.source += fill(kFoldKernel, values);
  }
  out.launches.push_back(std::move(reduce));
  if (split > 1)
    out.launches.push_back(
        gridStrideLaunch(fn + "_fold", images * channels, {KernelArg::scratch(0), KernelArg::result(0)}));
  return out;
}

} // namespace kiln::codegen::normpool
