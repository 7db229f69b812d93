// Can a kernel of our own beat cuDNN on ResNet-50's memory-bound INT8 1x1 convolutions with an
// int8 residual? For planning issue 13's ResNet-50 target (50k images/s at b256), not a test.
//
// In the INT8 plan on an H100, layer1's three expanding 1x1 convs (64 -> 256 channels at 56x56,
// b256, adding the block's int8 residual) take 0.379 ms each, at about 36% of DRAM bandwidth:
// cuDNN's best graph without the residual takes 0.196 ms, with it 0.375 (bench/conv8_probe.cpp).
// A 1x1 conv over NHWC is a GEMM [P, C] x [C, K] with a short reduction (C = 64), so its floor is
// memory: x (P * C bytes), the residual and y (P * K each).
//
// The kernel: persistent blocks of 256 threads, each keeping a 256-channel slice of the weights
// in shared memory and taking 64 pixels at a time; 8 warps of mma.sync m16n8k32 (s8 x s8 ->
// s32), each 16 pixels x 128 channels; the residual tile comes into shared memory with 16-byte
// loads, the epilogue (per-channel scale, bias, residual times its scale, ReLU, quantize with
// saturation) rewrites it in place, and the tile leaves with 16-byte stores. Shared rows are
// padded by 16 bytes so the fragment loads hit 32 distinct banks. Two variants: "simple" loads,
// computes and stores each tile in turn; "pipelined" keeps two tile buffers and has the next
// tile's loads in flight (cp.async) while it computes and stores this one.
//
// Checks the outputs of every 37th pixel and of the last tile against a CPU reference (at most
// one int8 step apart: the GPU contracts the epilogue into FMAs) and prints the median time of
// 20 runs, the bytes moved and the rate. tools/gpu-box/probe_8bit.sh conv1x1 runs it beside
// cuDNN's graphs of the same shapes (bench/conv8_probe.cpp).
// Layouts of mma.m16n8k32 .s8 fragments: PTX ISA, "Matrix Fragments for mma.m16n8k32".
//   nvcc -std=c++17 -O2 -arch=sm_90 bench/conv1x1_int8_probe.cu -o conv1x1_int8_probe
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>
#include <random>
#include <vector>

#include "kernel_probe.h"

namespace {

constexpr int kBlockPixels = 64, kBlockChannels = 256, kThreads = 256;

/// 16 bytes from global to shared memory: cp.async (asynchronous, zero-filled past the
/// pixels) when `async`, else through registers.
template <bool async>
__device__ __forceinline__ void copy16(int8_t *dst, const int8_t *src, bool inside) {
  if constexpr (async) {
    unsigned dstAddress = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dstAddress), "l"(src),
                 "r"(inside ? 16 : 0));
  } else {
    *reinterpret_cast<int4 *>(dst) = inside ? *reinterpret_cast<const int4 *>(src) : make_int4(0, 0, 0, 0);
  }
}

/// One tile's input (64 pixels of x) and residual (64 pixels x 256 channels) into shared rows.
template <int C, bool async>
__device__ __forceinline__ void loadTile(int8_t *sA, int8_t *sR, const int8_t *x, const int8_t *residual,
                                         int p0, int n0, int pixels, int channels) {
  constexpr int kRowA = C + 16, kRowR = kBlockChannels + 16;
  for (int i = threadIdx.x; i < kBlockPixels * C / 16; i += kThreads) {
    int row = i / (C / 16), col = (i % (C / 16)) * 16;
    bool inside = p0 + row < pixels;
    copy16<async>(sA + row * kRowA + col, x + static_cast<size_t>(inside ? p0 + row : 0) * C + col, inside);
  }
  if (residual)
    for (int i = threadIdx.x; i < kBlockPixels * kBlockChannels / 16; i += kThreads) {
      int row = i / (kBlockChannels / 16), col = (i % (kBlockChannels / 16)) * 16;
      bool inside = p0 + row < pixels;
      copy16<async>(sR + row * kRowR + col,
                    residual + static_cast<size_t>(inside ? p0 + row : 0) * channels + n0 + col, inside);
    }
}

/// `pipelined`: two tile buffers, the next tile's loads (cp.async) in flight while this one
/// computes and stores; else one buffer, loaded, computed and stored in turn.
template <int C, bool pipelined>
__global__ void __launch_bounds__(kThreads, 2)
    conv1x1Int8(const int8_t *__restrict__ x, const int8_t *__restrict__ w, const float *__restrict__ scale,
                const float *__restrict__ bias, const int8_t *__restrict__ residual, float residualScale,
                float yScale, int8_t *__restrict__ y, int pixels, int channels) {
  constexpr int kRowA = C + 16, kRowR = kBlockChannels + 16; // padded shared rows, in bytes
  constexpr int kTileBytes = kBlockPixels * kRowA + kBlockPixels * kRowR;
  extern __shared__ __align__(16) unsigned char shared[];
  int8_t *sW = reinterpret_cast<int8_t *>(shared); // kBlockChannels x kRowA, then the tile buffers:
  int8_t *tiles = sW + kBlockChannels * kRowA;     // kBlockPixels x kRowA of x, kBlockPixels x kRowR
  const int n0 = blockIdx.y * kBlockChannels, tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int group = lane >> 2, quad = lane & 3, wm = warp & 3, wn = warp >> 2;
  for (int i = tid; i < kBlockChannels * C / 16; i += kThreads) {
    int row = i / (C / 16), col = (i % (C / 16)) * 16;
    *reinterpret_cast<int4 *>(sW + row * kRowA + col) =
        *reinterpret_cast<const int4 *>(w + static_cast<size_t>(n0 + row) * C + col);
  }
  if constexpr (pipelined) {
    loadTile<C, true>(tiles, tiles + kBlockPixels * kRowA, x, residual, blockIdx.x * kBlockPixels, n0, pixels,
                      channels);
    asm volatile("cp.async.commit_group;\n" ::);
  }
  int buffer = 0;
  for (int tile = blockIdx.x; tile * kBlockPixels < pixels; tile += gridDim.x, buffer ^= 1) {
    const int p0 = tile * kBlockPixels;
    int8_t *sA = tiles + (pipelined ? buffer * kTileBytes : 0), *sR = sA + kBlockPixels * kRowA;
    __syncthreads(); // every thread is done with the buffer the next loads overwrite
    if constexpr (pipelined) {
      const int next = tile + gridDim.x;
      if (next * kBlockPixels < pixels) {
        int8_t *nA = tiles + (buffer ^ 1) * kTileBytes;
        loadTile<C, true>(nA, nA + kBlockPixels * kRowA, x, residual, next * kBlockPixels, n0, pixels, channels);
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::);
      } else {
        asm volatile("cp.async.wait_group 0;\n" ::);
      }
    } else {
      loadTile<C, false>(sA, sR, x, residual, p0, n0, pixels, channels);
    }
    __syncthreads();
    int acc[16][4];
#pragma unroll
    for (int nt = 0; nt < 16; ++nt)
      acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0;
#pragma unroll
    for (int k = 0; k < C; k += 32) {
      // A fragment (16 x 32, row-major): rows group and group + 8, bytes quad * 4 (+ 16).
      const int8_t *a = sA + (wm * 16) * kRowA + k + quad * 4;
      uint32_t a0 = *reinterpret_cast<const uint32_t *>(a + group * kRowA);
      uint32_t a1 = *reinterpret_cast<const uint32_t *>(a + (group + 8) * kRowA);
      uint32_t a2 = *reinterpret_cast<const uint32_t *>(a + group * kRowA + 16);
      uint32_t a3 = *reinterpret_cast<const uint32_t *>(a + (group + 8) * kRowA + 16);
#pragma unroll
      for (int nt = 0; nt < 16; ++nt) {
        // B fragment (32 x 8, column-major): column = output channel group, its bytes quad * 4 (+ 16).
        const int8_t *b = sW + (wn * 128 + nt * 8 + group) * kRowA + k + quad * 4;
        uint32_t b0 = *reinterpret_cast<const uint32_t *>(b), b1 = *reinterpret_cast<const uint32_t *>(b + 16);
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+r"(acc[nt][0]), "+r"(acc[nt][1]), "+r"(acc[nt][2]), "+r"(acc[nt][3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      }
    }
    // Accumulator (16 x 8): rows group (+ 8), columns quad * 2 (+ 1).
#pragma unroll
    for (int nt = 0; nt < 16; ++nt) {
      const int col = wn * 128 + nt * 8 + quad * 2;
      const float s[2] = {scale[n0 + col], scale[n0 + col + 1]}, b[2] = {bias[n0 + col], bias[n0 + col + 1]};
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int8_t *r = sR + (wm * 16 + group + h * 8) * kRowR + col;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          float v = static_cast<float>(acc[nt][h * 2 + j]) * s[j] + b[j];
          if (residual)
            v += residualScale * static_cast<float>(r[j]);
          v = fminf(fmaxf(rintf(fmaxf(v, 0.0f) / yScale), -128.0f), 127.0f);
          r[j] = static_cast<int8_t>(v);
        }
      }
    }
    __syncthreads();
    for (int i = tid; i < kBlockPixels * kBlockChannels / 16; i += kThreads) {
      int row = i / (kBlockChannels / 16), col = (i % (kBlockChannels / 16)) * 16;
      if (p0 + row < pixels)
        *reinterpret_cast<int4 *>(y + static_cast<size_t>(p0 + row) * channels + n0 + col) =
            *reinterpret_cast<const int4 *>(sR + row * kRowR + col);
    }
  }
}

struct Shape {
  const char *name;
  int pixels, c, k;
  bool residual;
};

template <int C, bool pipelined> void run(const Shape &s, int sms) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> q(-127, 127);
  std::vector<int8_t> x(static_cast<size_t>(s.pixels) * C), w(static_cast<size_t>(s.k) * C),
      r(static_cast<size_t>(s.pixels) * s.k);
  for (auto &v : x) v = static_cast<int8_t>(q(rng) / 2); // activations after a ReLU-ish spread
  for (auto &v : w) v = static_cast<int8_t>(q(rng));
  for (auto &v : r) v = static_cast<int8_t>(q(rng));
  std::vector<float> scale(s.k), bias(s.k);
  for (int n = 0; n < s.k; ++n) {
    scale[n] = 1.0f / (64.0f * C) * (0.5f + (n % 7) / 7.0f);
    bias[n] = ((n % 11) - 5) * 0.05f;
  }
  const float residualScale = 1.0f / 127.0f, yScale = 1.0f / 64.0f;
  int8_t *dx, *dw, *dr, *dy;
  float *ds, *db;
  CHECK(cudaMalloc(&dx, x.size()));
  CHECK(cudaMalloc(&dw, w.size()));
  CHECK(cudaMalloc(&dr, r.size()));
  CHECK(cudaMalloc(&dy, r.size()));
  CHECK(cudaMalloc(&ds, s.k * sizeof(float)));
  CHECK(cudaMalloc(&db, s.k * sizeof(float)));
  CHECK(cudaMemcpy(dx, x.data(), x.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dw, w.data(), w.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dr, r.data(), r.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(ds, scale.data(), s.k * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, bias.data(), s.k * sizeof(float), cudaMemcpyHostToDevice));
  const size_t tileBytes = kBlockPixels * (C + 16) + kBlockPixels * (kBlockChannels + 16);
  const size_t sharedBytes = kBlockChannels * (C + 16) + (pipelined ? 2 : 1) * tileBytes;
  CHECK(cudaFuncSetAttribute(conv1x1Int8<C, pipelined>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             int(sharedBytes)));
  const int tiles = (s.pixels + kBlockPixels - 1) / kBlockPixels, groups = s.k / kBlockChannels;
  const dim3 grid(std::min(tiles, std::max(1, 2 * sms / groups)), groups);
  auto launch = [&] {
    conv1x1Int8<C, pipelined><<<grid, kThreads, sharedBytes>>>(dx, dw, ds, db, s.residual ? dr : nullptr, residualScale,
                                                      yScale, dy, s.pixels, s.k);
  };
  launch();
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::vector<int8_t> y(r.size());
  CHECK(cudaMemcpy(y.data(), dy, y.size(), cudaMemcpyDeviceToHost));
  size_t off = 0, far = 0, checked = 0;
  for (int p = 0; p < s.pixels; p = (p + kBlockPixels >= s.pixels) ? p + 1 : p + 37)
    for (int n = 0; n < s.k; ++n, ++checked) {
      int acc = 0;
      for (int c = 0; c < C; ++c)
        acc += int(x[size_t(p) * C + c]) * int(w[size_t(n) * C + c]);
      float v = float(acc) * scale[n] + bias[n];
      if (s.residual)
        v += residualScale * float(r[size_t(p) * s.k + n]);
      int want = int(std::fmin(std::fmax(std::rint(std::fmax(v, 0.0f) / yScale), -128.0f), 127.0f));
      int d = std::abs(want - int(y[size_t(p) * s.k + n]));
      off += d > 0;
      far += d > 1;
    }
  const double ms = medianMs(launch);
  const double bytes = double(s.pixels) * C + double(s.pixels) * s.k * (s.residual ? 2 : 1) + double(w.size());
  std::printf("%-34s %-9s %8.1f us  %6.0f GB/s  grid %ux%u, %zu B shared  %s (%zu of %zu checked outputs one step off, "
              "%zu more)\n",
              s.name, pipelined ? "pipelined" : "simple", ms * 1e3, bytes / (ms * 1e-3) / 1e9, grid.x, grid.y, sharedBytes, far ? "WRONG" : "ok", off - far,
              checked, far);
  cudaFree(dx);
  cudaFree(dw);
  cudaFree(dr);
  cudaFree(dy);
  cudaFree(ds);
  cudaFree(db);
}

} // namespace

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs; int8 x, w, residual, y; per-channel scale, bias, ReLU; b256 NHWC\n", prop.name,
              prop.multiProcessorCount);
  const int sms = prop.multiProcessorCount;
  const Shape l1res = {"l1 1x1 64->256 @56 +res(int8)", 256 * 56 * 56, 64, 256, true};
  const Shape l1 = {"l1 1x1 64->256 @56", 256 * 56 * 56, 64, 256, false};
  const Shape l2res = {"l2 1x1 128->512 @28 +res(int8)", 256 * 28 * 28, 128, 512, true};
  run<64, false>(l1res, sms);
  run<64, true>(l1res, sms);
  run<64, false>(l1, sms);
  run<64, true>(l1, sms);
  run<128, false>(l2res, sms);
  run<128, true>(l2res, sms);
  return 0;
}
