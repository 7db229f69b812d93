//===- DevicePeaks.h - a GPU's peak arithmetic and memory rates -*- C++ -*-===//
//
// What `kiln profile` measures steps against: dense tensor-core and CUDA-core FLOP rates at the
// GPU's peak SM clock and the DRAM bandwidth, both from the device's attributes (SM count,
// clocks, bus width) and a per-architecture table of FLOPs per clock per SM. They are peaks:
// a step at 70% of one is doing well. Architectures not in the table report no FLOP peaks.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_DEVICEPEAKS_H
#define KILN_RUNTIME_ENGINE_DEVICEPEAKS_H

#include "runtime/Runtime.h"

namespace kiln::runtime {

/// The device attributes the peaks follow from.
struct DeviceFacts {
  int computeCapability = 0; // major*10+minor
  int smCount = 0;
  int smClockKHz = 0;     // peak SM clock
  int memoryClockKHz = 0; // peak memory clock
  int memoryBusBits = 0;
};

/// Peaks from the facts (pure; unit-tested).
DevicePeaks peaksFor(const DeviceFacts &facts);

/// The facts of CUDA device `ordinal`.
StatusOr<DeviceFacts> queryDeviceFacts(int ordinal);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_DEVICEPEAKS_H
