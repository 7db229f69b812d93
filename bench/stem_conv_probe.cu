// Can a kernel of our own beat cuDNN on ResNet-50's space-to-depth stem? For planning issue
// 13's ResNet-50 target (50k images/s at b256), not a test.
//
// Plans run the 7x7 stride-2 stem as 4x4 taps over the image's 2x2 blocks zero-padded to 16
// channels (kiln-space-to-depth-convs): x [N, 115, 115, 16] bf16 -> y [N, 112, 112, 64] bf16 with
// bias and ReLU. cuDNN's best engine takes 0.718 ms at b256 on an H100, the largest single step
// of the INT8 plan (12%), at about a fifth of both its tensor-core bound (105 GFLOP) and its
// memory bound (108 MB in, 411 MB out).
//
// The kernel: an implicit GEMM, one block of 7 warps per output row (112 pixels x 64 channels),
// persistent over the rows; the 4 input rows the row's taps read (4 x 115 pixels x 32 bytes)
// come into shared memory with 16-byte loads, the weights (64 x 256, padded rows) stay resident.
// Each warp computes 16 pixels x 64 channels with mma.sync m16n8k16 (bf16 x bf16 -> f32): one
// k-step per tap, its 16 channels; the epilogue adds the bias, applies ReLU, rounds to bf16 into
// shared memory (pixels padded by 16 bytes, so a warp's stores hit distinct banks), and the row
// (14 KB, contiguous in NHWC) leaves with 16-byte stores.
//
// Checks every 97th output row against a CPU reference (bf16 products summed in f32 in another
// order: within 2 bf16 ulps of the reference's rounding) and prints the median of 20 runs.
// tools/gpu-box/probe_8bit.sh stem runs it beside cuDNN's graph of the same conv.
// Layouts of mma.m16n8k16 .bf16 fragments: PTX ISA, "Matrix Fragments for mma.m16n8k16".
//   nvcc -std=c++17 -O2 -arch=sm_90 bench/stem_conv_probe.cu -o stem_conv_probe
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <random>
#include <vector>

#include "kernel_probe.h"

namespace {

constexpr int kIn = 115, kOut = 112, kC = 16, kK = 64, kTaps = 16, kWarps = 7, kThreads = kWarps * 32;
constexpr int kRowW = kTaps * kC + 8;     // bf16 a weight row in shared memory (padded: no bank conflicts)
constexpr int kInRow = kIn * kC;           // bf16 an input row
constexpr int kOutRow = kOut * kK;         // bf16 an output row
constexpr int kPixelY = kK + 8;            // bf16 an output pixel in shared memory (padded likewise)

__global__ void __launch_bounds__(kThreads)
    stemConv(const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ w,
             const float *__restrict__ bias, __nv_bfloat16 *__restrict__ y, int images) {
  extern __shared__ __align__(16) unsigned char shared[];
  __nv_bfloat16 *sW = reinterpret_cast<__nv_bfloat16 *>(shared);   // kK x kRowW
  __nv_bfloat16 *sX = sW + kK * kRowW;                               // 4 x kInRow
  __nv_bfloat16 *sY = sX + 4 * kInRow;                               // kOut x kPixelY
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, group = lane >> 2, quad = lane & 3;
  for (int i = tid; i < kK * kTaps * kC / 8; i += kThreads) {
    int n = i / (kTaps * kC / 8), k = (i % (kTaps * kC / 8)) * 8;
    *reinterpret_cast<int4 *>(sW + n * kRowW + k) = *reinterpret_cast<const int4 *>(w + n * kTaps * kC + k);
  }
  float b[8][2];
#pragma unroll
  for (int nt = 0; nt < 8; ++nt)
    b[nt][0] = bias[nt * 8 + quad * 2], b[nt][1] = bias[nt * 8 + quad * 2 + 1];
  for (int row = blockIdx.x; row < images * kOut; row += gridDim.x) {
    const int image = row / kOut, oy = row % kOut;
    __syncthreads(); // the previous row's tiles are consumed
    const __nv_bfloat16 *src = x + (static_cast<size_t>(image) * kIn + oy) * kInRow;
    for (int i = tid; i < 4 * kInRow / 8; i += kThreads)
      *reinterpret_cast<int4 *>(sX + i * 8) = *reinterpret_cast<const int4 *>(src + i * 8);
    __syncthreads();
    float acc[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
      acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
    const int px = warp * 16; // this warp's 16 output pixels of the row
#pragma unroll 4
    for (int tap = 0; tap < kTaps; ++tap) {
      const int ty = tap / 4, tx = tap % 4;
      // A (16 pixels x 16 channels of this tap, row-major): rows group (+ 8), channels quad * 2 (+ 8).
      const __nv_bfloat16 *a = sX + ty * kInRow + (px + tx) * kC + quad * 2;
      uint32_t a0 = *reinterpret_cast<const uint32_t *>(a + group * kC);
      uint32_t a1 = *reinterpret_cast<const uint32_t *>(a + (group + 8) * kC);
      uint32_t a2 = *reinterpret_cast<const uint32_t *>(a + group * kC + 8);
      uint32_t a3 = *reinterpret_cast<const uint32_t *>(a + (group + 8) * kC + 8);
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        // B (16 channels x 8 output channels, column-major): column group, rows quad * 2 (+ 8).
        const __nv_bfloat16 *bw = sW + (nt * 8 + group) * kRowW + tap * kC + quad * 2;
        uint32_t b0 = *reinterpret_cast<const uint32_t *>(bw), b1 = *reinterpret_cast<const uint32_t *>(bw + 8);
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(acc[nt][0]), "+f"(acc[nt][1]), "+f"(acc[nt][2]), "+f"(acc[nt][3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      }
    }
    // Accumulator (16 x 8): pixels group (+ 8), channels quad * 2 (+ 1).
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        __nv_bfloat162 v = __floats2bfloat162_rn(fmaxf(acc[nt][h * 2] + b[nt][0], 0.0f),
                                                 fmaxf(acc[nt][h * 2 + 1] + b[nt][1], 0.0f));
        *reinterpret_cast<__nv_bfloat162 *>(sY + (px + group + h * 8) * kPixelY + nt * 8 + quad * 2) = v;
      }
    __syncthreads();
    __nv_bfloat16 *dst = y + static_cast<size_t>(row) * kOutRow;
    for (int i = tid; i < kOutRow / 8; i += kThreads)
      *reinterpret_cast<int4 *>(dst + i * 8) =
          *reinterpret_cast<const int4 *>(sY + (i / (kK / 8)) * kPixelY + (i % (kK / 8)) * 8);
  }
}

float toFloat(__nv_bfloat16 v) {
  uint16_t bits;
  std::memcpy(&bits, &v, 2);
  uint32_t wide = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}

} // namespace

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int images = 256;
  std::printf("%s, %d SMs; ResNet-50's s2d stem: 4x4 taps over [%d, 115, 115, 16] bf16 -> 64 channels, bias, ReLU\n",
              prop.name, prop.multiProcessorCount, images);
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<__nv_bfloat16> x(size_t(images) * kIn * kInRow), w(size_t(kK) * kTaps * kC);
  for (auto &v : x) v = __float2bfloat16(normal(rng));
  for (auto &v : w) v = __float2bfloat16(normal(rng) * 0.06f);
  std::vector<float> bias(kK);
  for (int n = 0; n < kK; ++n) bias[n] = 0.1f * ((n % 9) - 4);
  __nv_bfloat16 *dx, *dw, *dy;
  float *db;
  const size_t yCount = size_t(images) * kOut * kOutRow;
  CHECK(cudaMalloc(&dx, x.size() * 2));
  CHECK(cudaMalloc(&dw, w.size() * 2));
  CHECK(cudaMalloc(&dy, yCount * 2));
  CHECK(cudaMalloc(&db, kK * sizeof(float)));
  CHECK(cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dw, w.data(), w.size() * 2, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, bias.data(), kK * sizeof(float), cudaMemcpyHostToDevice));
  const size_t sharedBytes = (size_t(kK) * kRowW + 4 * kInRow + kOut * kPixelY) * 2;
  CHECK(cudaFuncSetAttribute(stemConv, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)));
  int perSm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, stemConv, kThreads, sharedBytes));
  const int grid = std::min(images * kOut, std::max(1, perSm) * prop.multiProcessorCount);
  auto launch = [&] { stemConv<<<grid, kThreads, sharedBytes>>>(dx, dw, db, dy, images); };
  launch();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<__nv_bfloat16> y(yCount);
  CHECK(cudaMemcpy(y.data(), dy, yCount * 2, cudaMemcpyDeviceToHost));
  size_t checked = 0, wrong = 0;
  double worst = 0;
  for (int row = 0; row < images * kOut; row += 97) {
    const int image = row / kOut, oy = row % kOut;
    for (int ox = 0; ox < kOut; ++ox)
      for (int n = 0; n < kK; ++n, ++checked) {
        float sum = 0;
        for (int ty = 0; ty < 4; ++ty)
          for (int tx = 0; tx < 4; ++tx)
            for (int c = 0; c < kC; ++c)
              sum += toFloat(x[((size_t(image) * kIn + oy + ty) * kIn + ox + tx) * kC + c]) *
                     toFloat(w[(size_t(n) * kTaps + ty * 4 + tx) * kC + c]);
        float want = std::fmax(sum + bias[n], 0.0f), got = toFloat(y[(size_t(row) * kOut + ox) * kK + n]);
        double error = std::fabs(double(got) - want) / std::max(std::fabs(double(want)), 1e-2);
        worst = std::max(worst, error);
        wrong += error > 2.0 / 256; // two bf16 ulps
      }
  }
  const double ms = medianMs(launch);
  const double flops = 2.0 * images * kOut * kOut * kK * kTaps * kC;
  const double bytes = (double(x.size()) + double(yCount)) * 2;
  std::printf("stem s2d 4x4 16->64 @115 ours   %8.1f us  %5.0f TFLOP/s  %5.0f GB/s  grid %d (%d a SM), %zu B shared  "
              "%s (%zu of %zu checked outputs off by more than 2 bf16 ulps; worst relative %.2g)\n",
              ms * 1e3, flops / (ms * 1e-3) / 1e12, bytes / (ms * 1e-3) / 1e9, grid, perSm, sharedBytes,
              wrong ? "WRONG" : "ok", wrong, checked, worst);
  return wrong ? 1 : 0;
}
