//===- TestKernels.h - tiny NVRTC-compiled kernels for GPU tests -*- C++ -*-===//
//
// Real kernel images for KernelSteps, compiled by NVRTC for the test device: what codegen
// would emit, minus the generator.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_GPU_TESTKERNELS_H
#define KILN_TESTS_GPU_TESTKERNELS_H

#include "codegen/kernels/Nvrtc.h"
#include "tests/gpu/GpuTestSupport.h"

namespace kiln::gpu_test {

/// Element count of every test kernel's tensors.
inline constexpr int64_t kKernelElements = 1000;

/// affine(x, w, y):     y[i] = x[i] * w[i % 4] + 1   (w: 4 weights)
/// firstHalf(x, y):     y[i] = x[i] for i < 500 only  (leaves the rest unwritten)
/// slowCopy(x, y):      y[i] = x[i] after spinning ~1e9 clock cycles (about half a second)
inline const char *kTestKernelSource = R"(
extern "C" __global__ void affine(const float *x, const float *w, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 1000) y[i] = x[i] * w[i % 4] + 1.0f;
}
extern "C" __global__ void firstHalf(const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 500) y[i] = x[i];
}
extern "C" __global__ void slowCopy(const float *x, float *y) {
  long long start = clock64();
  while (clock64() - start < 1000000000LL) {}
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 1000) y[i] = x[i];
}
)";

/// Adds the test kernels as an image of `b`; returns its index (test fails on NVRTC errors).
inline uint32_t addTestKernels(PlanBuilder &b, uint32_t cc) {
  codegen::NvrtcOptions options;
  options.smVersion = cc;
  auto program = codegen::compileWithNvrtc(kTestKernelSource, "test_kernels.cu", options);
  EXPECT_TRUE(program.isOk()) << program.status().toString();
  if (!program.isOk())
    return 0;
  return b.image("test_kernels", program.value().cubin, program.value().ptx);
}

inline plan::KernelStep kernelStep(uint32_t image, const std::string &function, std::vector<uint32_t> args) {
  plan::KernelStep k;
  k.image = image;
  k.function = function;
  k.grid = {static_cast<uint32_t>((kKernelElements + 255) / 256), 1, 1};
  k.block = {256, 1, 1};
  k.args = std::move(args);
  return k;
}

} // namespace kiln::gpu_test

#endif // KILN_TESTS_GPU_TESTKERNELS_H
