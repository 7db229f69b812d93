//===- DevicePeaks.cpp - a GPU's peak arithmetic and memory rates ---------===//

#include "runtime/engine/DevicePeaks.h"

#include <cuda_runtime.h>

namespace kiln::runtime {

namespace {

/// Dense FLOPs per clock per SM (a multiply-add is two) with fp32 accumulation: CUDA-core
/// fp32, TF32 tensor cores, bf16/fp16 tensor cores, 8-bit tensor cores (int8; Hopper's fp8 at
/// the same rate). From NVIDIA's architecture whitepapers: A100 19.5/156/312/624 TFLOP/s at
/// 108 SMs x 1.41 GHz; H100 SXM 67/495/989/1979 at 132 SMs x 1.83 GHz.
struct FlopsPerClock {
  int computeCapability;
  double fp32, tf32, half, eight;
};
constexpr FlopsPerClock kFlopsPerClock[] = {
    {80, 128, 1024, 2048, 4096}, // A100
    {90, 256, 2048, 4096, 8192}, // H100, H200
};

} // namespace

DevicePeaks peaksFor(const DeviceFacts &facts) {
  DevicePeaks peaks;
  peaks.smCount = facts.smCount;
  peaks.smClockGHz = facts.smClockKHz / 1e6;
  // Double data rate: two transfers per memory clock over the whole bus.
  peaks.memoryGBs = 2.0 * facts.memoryClockKHz * 1e3 * (facts.memoryBusBits / 8.0) / 1e9;
  for (const FlopsPerClock &row : kFlopsPerClock) {
    if (row.computeCapability != facts.computeCapability)
      continue;
    double clocksPerSecond = facts.smCount * (facts.smClockKHz * 1e3);
    peaks.fp32Tflops = row.fp32 * clocksPerSecond / 1e12;
    peaks.tf32Tflops = row.tf32 * clocksPerSecond / 1e12;
    peaks.halfTflops = row.half * clocksPerSecond / 1e12;
    peaks.eightBitTflops = row.eight * clocksPerSecond / 1e12;
  }
  return peaks;
}

StatusOr<DeviceFacts> queryDeviceFacts(int ordinal) {
  DeviceFacts facts;
  int major = 0, minor = 0;
  struct Query {
    cudaDeviceAttr attr;
    int *into;
  } queries[] = {{cudaDevAttrComputeCapabilityMajor, &major},
                 {cudaDevAttrComputeCapabilityMinor, &minor},
                 {cudaDevAttrMultiProcessorCount, &facts.smCount},
                 {cudaDevAttrClockRate, &facts.smClockKHz},
                 {cudaDevAttrMemoryClockRate, &facts.memoryClockKHz},
                 {cudaDevAttrGlobalMemoryBusWidth, &facts.memoryBusBits}};
  for (const Query &q : queries)
    if (cudaError_t err = cudaDeviceGetAttribute(q.into, q.attr, ordinal); err != cudaSuccess)
      return Status(StatusCode::kDeviceError,
                    std::string("cannot read the device's attributes: ") + cudaGetErrorString(err));
  facts.computeCapability = major * 10 + minor;
  return facts;
}

} // namespace kiln::runtime
