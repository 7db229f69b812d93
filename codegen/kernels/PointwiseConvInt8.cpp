//===- PointwiseConvInt8.cpp - INT8 1x1 convolutions as a kernel of our own ---===//
//
// Layouts of the mma.m16n8k32 .s8 fragments: PTX ISA, "Matrix Fragments for mma.m16n8k32".
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/PointwiseConvInt8.h"

#include "codegen/kernels/KernelSource.h"
#include "codegen/kernels/NormPoolKernels.h"

#include <algorithm>

namespace kiln::codegen {

namespace {

// A block takes 64 pixels x 256 output channels at a time with 8 warps of 16 x 128.
constexpr int64_t kBlockPixels = 64, kBlockChannels = 256, kThreads = 256;
// Shared memory for the weight slice and two tiles: C up to 256 fits (137 KB of 227).
constexpr int64_t kMaxChannels = 256;
// Blocks per output-channel slice: two per SM of an H100/H200 (132 SMs), persistent over the
// tiles. Any grid computes the same result; this one fills those GPUs.
constexpr int64_t kResidentBlocks = 2 * 132;

constexpr std::string_view kSource = R"CUDA(
// 16 bytes from global to shared memory, in flight until cp.async.wait_group; zero-filled past
// the last pixel.
__device__ __forceinline__ void @FN@_copy16(signed char *dst, const signed char *src, bool inside) {
  unsigned dstAddress = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dstAddress), "l"(src), "r"(inside ? 16 : 0));
}

// One tile into shared rows (padded by 16 bytes so fragment loads hit 32 distinct banks): 64
// pixels of x, and of the residual the block's 256 channels.
__device__ __forceinline__ void @FN@_load(signed char *sA, signed char *sR, const signed char *x,
                                          const signed char *residual, kiln_i64 p0, int n0) {
  constexpr int kC = @C@, kRowA = kC + 16, kRowR = 256 + 16;
  for (int i = threadIdx.x; i < 64 * kC / 16; i += 256) {
    int row = i / (kC / 16), col = (i % (kC / 16)) * 16;
    bool inside = p0 + row < @PIXELS@;
    @FN@_copy16(sA + row * kRowA + col, x + (inside ? p0 + row : 0) * kC + col, inside);
  }
@LOAD_RESIDUAL@}

extern "C" __global__ void __launch_bounds__(256, 2) @FN@(@PARAMS@) {
  constexpr int kC = @C@, kK = @K@, kRowA = kC + 16, kRowR = 256 + 16;
  constexpr int kTileBytes = 64 * kRowA + 64 * kRowR;
  constexpr kiln_i64 kPixels = @PIXELS@;
  extern __shared__ __align__(16) unsigned char kiln_shared[];
  signed char *sW = reinterpret_cast<signed char *>(kiln_shared); // 256 x kRowA, then two tiles
  signed char *tiles = sW + 256 * kRowA;
  const int n0 = blockIdx.y * 256, tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int group = lane >> 2, quad = lane & 3, wm = warp & 3, wn = warp >> 2;
  const float ys = yScale[0];
@RESIDUAL_SCALE@
  for (int i = tid; i < 256 * kC / 16; i += 256) {
    int row = i / (kC / 16), col = (i % (kC / 16)) * 16;
    *reinterpret_cast<int4 *>(sW + row * kRowA + col) =
        *reinterpret_cast<const int4 *>(w + static_cast<kiln_i64>(n0 + row) * kC + col);
  }
  @FN@_load(tiles, tiles + 64 * kRowA, x, @RESIDUAL_ARG@, (kiln_i64)blockIdx.x * 64, n0);
  asm volatile("cp.async.commit_group;\n" ::);
  int buffer = 0;
  for (kiln_i64 tile = blockIdx.x; tile * 64 < kPixels; tile += gridDim.x, buffer ^= 1) {
    const kiln_i64 p0 = tile * 64;
    signed char *sA = tiles + buffer * kTileBytes, *sR = sA + 64 * kRowA;
    __syncthreads(); // every thread is done with the buffer the next loads overwrite
    const kiln_i64 next = tile + gridDim.x;
    if (next * 64 < kPixels) {
      signed char *nA = tiles + (buffer ^ 1) * kTileBytes;
      @FN@_load(nA, nA + 64 * kRowA, x, @RESIDUAL_ARG@, next * 64, n0);
      asm volatile("cp.async.commit_group;\n" ::);
      asm volatile("cp.async.wait_group 1;\n" ::);
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::);
    }
    __syncthreads();
    int acc[16][4];
#pragma unroll
    for (int nt = 0; nt < 16; ++nt)
      acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0;
#pragma unroll
    for (int k = 0; k < kC; k += 32) {
      // A (16 x 32, row-major): rows group and group + 8, bytes quad * 4 (+ 16).
      const signed char *a = sA + (wm * 16) * kRowA + k + quad * 4;
      unsigned a0 = *reinterpret_cast<const unsigned *>(a + group * kRowA);
      unsigned a1 = *reinterpret_cast<const unsigned *>(a + (group + 8) * kRowA);
      unsigned a2 = *reinterpret_cast<const unsigned *>(a + group * kRowA + 16);
      unsigned a3 = *reinterpret_cast<const unsigned *>(a + (group + 8) * kRowA + 16);
#pragma unroll
      for (int nt = 0; nt < 16; ++nt) {
        // B (32 x 8, column-major): column = output channel, its bytes quad * 4 (+ 16).
        const signed char *b = sW + (wn * 128 + nt * 8 + group) * kRowA + k + quad * 4;
        unsigned b0 = *reinterpret_cast<const unsigned *>(b), b1 = *reinterpret_cast<const unsigned *>(b + 16);
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+r"(acc[nt][0]), "+r"(acc[nt][1]), "+r"(acc[nt][2]), "+r"(acc[nt][3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      }
    }
    // Accumulator (16 x 8): rows group (+ 8), columns quad * 2 (+ 1). The epilogue writes the
    // int8 result over the residual's place in the tile.
#pragma unroll
    for (int nt = 0; nt < 16; ++nt) {
      const int col = wn * 128 + nt * 8 + quad * 2;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        signed char *r = sR + (wm * 16 + group + h * 8) * kRowR + col;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int n = n0 + col + j;
          float v = (float)acc[nt][h * 2 + j] * scale[n]@BIAS_TERM@;
@RESIDUAL_TERM@@RELU@          v = fminf(fmaxf(rintf(v * ys), -128.0f), 127.0f);
          r[j] = (signed char)(int)v;
        }
      }
    }
    __syncthreads();
    for (int i = tid; i < 64 * 256 / 16; i += 256) {
      int row = i / 16, col = (i % 16) * 16;
      if (p0 + row < kPixels)
        *reinterpret_cast<int4 *>(y + (p0 + row) * kK + n0 + col) = *reinterpret_cast<const int4 *>(sR + row * kRowR + col);
    }
  }
}
)CUDA";

constexpr std::string_view kLoadResidual = R"CUDA(  for (int i = threadIdx.x; i < 64 * 256 / 16; i += 256) {
    int row = i / 16, col = (i % 16) * 16;
    bool inside = p0 + row < @PIXELS@;
    @FN@_copy16(sR + row * kRowR + col, residual + (inside ? p0 + row : 0) * @K@ + n0 + col, inside);
  }
)CUDA";

} // namespace

std::optional<std::string> whyNoPointwiseConvInt8Kernel(const plan::Plan &plan, const plan::ConvStep &step,
                                                        PointwiseConvInt8 &conv) {
  auto typeOf = [&](uint32_t buffer) { return plan.buffers[buffer].dtype; };
  if (!step.channelsLast || step.transpose || step.xShape.size() != 4)
    return std::string("not a channels-last 2-d convolution");
  if (typeOf(step.x) != DType::I8 || typeOf(step.w) != DType::I8 || typeOf(step.y) != DType::I8 || !step.scale ||
      !step.yScale || step.yQuantized)
    return std::string("not an INT8 convolution writing int8 alone");
  if (step.wShape[2] != 1 || step.wShape[3] != 1 || step.groups != 1 ||
      std::any_of(step.strides.begin(), step.strides.end(), [](int64_t s) { return s != 1; }) ||
      std::any_of(step.pads.begin(), step.pads.end(), [](int64_t p) { return p != 0; }))
    return std::string("not a 1x1 convolution of stride 1 without padding in one group");
  int64_t c = step.xShape[1], k = step.yShape[1];
  if (c % 32 != 0 || c > kMaxChannels)
    return "C = " + std::to_string(c) + " is not a multiple of 32 up to " + std::to_string(kMaxChannels);
  if (k % kBlockChannels != 0)
    return "K = " + std::to_string(k) + " is not a multiple of " + std::to_string(kBlockChannels);
  if (step.residual && (typeOf(*step.residual) != DType::I8 || !step.residualScale))
    return std::string("its residual is not int8 with a scale");
  if (step.activation != plan::Activation::None && step.activation != plan::Activation::Relu)
    return std::string("its activation is neither ReLU nor none");
  if (step.bias && typeOf(*step.bias) != DType::F32 && typeOf(*step.bias) != DType::BF16 &&
      typeOf(*step.bias) != DType::F16)
    return std::string("its bias is not f32, bf16 or f16");
  conv.pixels = step.xShape[0] * step.xShape[2] * step.xShape[3];
  conv.channels = c;
  conv.outputs = k;
  conv.bias = step.bias ? std::optional<DType>(typeOf(*step.bias)) : std::nullopt;
  conv.residual = step.residual.has_value();
  conv.relu = step.activation == plan::Activation::Relu;
  return std::nullopt;
}

StatusOr<EmittedKernels> emitPointwiseConvInt8(const PointwiseConvInt8 &conv, const EmitContext &context) {
  if (conv.channels % 32 != 0 || conv.channels <= 0 || conv.channels > kMaxChannels ||
      conv.outputs % kBlockChannels != 0 || conv.outputs <= 0 || conv.pixels <= 0)
    return Status(StatusCode::kInvalidArgument,
                  "internal: an INT8 1x1 convolution kernel of C = " + std::to_string(conv.channels) +
                      ", K = " + std::to_string(conv.outputs) + " over " + std::to_string(conv.pixels) + " pixels");
  const std::string fn = context.symbol + "conv1x1_int8";
  KernelLaunch launch;
  launch.function = fn;
  std::string params = "const signed char *__restrict__ x, const signed char *__restrict__ w, "
                       "const float *__restrict__ scale";
  uint32_t operand = 0;
  for (int i = 0; i < 3; ++i)
    launch.args.push_back(KernelArg::operand(operand++));
  std::string biasTerm;
  if (conv.bias) {
    params += ", const " + storageType(*conv.bias) + " *__restrict__ bias";
    biasTerm = " + (float)kiln_ld(bias, n)";
    launch.args.push_back(KernelArg::operand(operand++));
  }
  std::string residualScale, residualTerm, residualArg = "nullptr", loadResidual;
  if (conv.residual) {
    params += ", const signed char *__restrict__ residual, const float *__restrict__ residualScale";
    residualScale = "  const float rs = residualScale[0];\n";
    residualTerm = "          v += (float)r[j] * rs;\n";
    residualArg = "residual";
    loadResidual = std::string(kLoadResidual);
    launch.args.push_back(KernelArg::operand(operand++));
    launch.args.push_back(KernelArg::operand(operand++));
  }
  params += ", const float *__restrict__ yScale, signed char *__restrict__ y";
  launch.args.push_back(KernelArg::operand(operand++));
  launch.args.push_back(KernelArg::result(0));

  std::string text = normpool::fill(kSource, {{"LOAD_RESIDUAL", loadResidual}});
  EmittedKernels out;
  out.source = normpool::fill(text, {{"FN", fn},
                                     {"C", std::to_string(conv.channels)},
                                     {"K", std::to_string(conv.outputs)},
                                     {"PIXELS", literalInt(conv.pixels)},
                                     {"PARAMS", params},
                                     {"RESIDUAL_SCALE", residualScale},
                                     {"RESIDUAL_ARG", residualArg},
                                     {"BIAS_TERM", biasTerm},
                                     {"RESIDUAL_TERM", residualTerm},
                                     {"RELU", conv.relu ? "          v = fmaxf(v, 0.0f);\n" : ""}});
  const int64_t tiles = (conv.pixels + kBlockPixels - 1) / kBlockPixels, slices = conv.outputs / kBlockChannels;
  launch.grid = {static_cast<uint32_t>(std::min(tiles, std::max<int64_t>(1, kResidentBlocks / slices))),
                 static_cast<uint32_t>(slices), 1};
  launch.block = {static_cast<uint32_t>(kThreads), 1, 1};
  const int64_t rowA = conv.channels + 16, rowR = kBlockChannels + 16;
  launch.sharedBytes = static_cast<uint32_t>(kBlockChannels * rowA + 2 * (kBlockPixels * rowA + kBlockPixels * rowR));
  out.launches.push_back(std::move(launch));
  return out;
}

} // namespace kiln::codegen
