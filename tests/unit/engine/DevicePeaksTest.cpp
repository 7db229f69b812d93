//===- DevicePeaksTest.cpp - peak rates from device attributes ------------===//

#include "runtime/engine/DevicePeaks.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

TEST(DevicePeaks, H100SxmMatchesItsDataSheet) {
  // H100 SXM5: 132 SMs, 1.83 GHz boost; 1979 dense int8/fp8 TFLOP/s, 989 bf16, 495 TF32, 67
  // fp32; HBM3 on a 5120-bit bus at 2.619 GHz: 3.35 TB/s.
  DevicePeaks peaks = peaksFor({90, 132, 1830000, 2619000, 5120});
  EXPECT_NEAR(peaks.eightBitTflops, 1979, 1);
  EXPECT_NEAR(peaks.halfTflops, 989, 1);
  EXPECT_NEAR(peaks.tf32Tflops, 495, 1);
  EXPECT_NEAR(peaks.fp32Tflops, 62, 1); // 67 at the 1.98 GHz max clock
  EXPECT_NEAR(peaks.memoryGBs, 3352, 1);
  EXPECT_EQ(peaks.smCount, 132);
  EXPECT_NEAR(peaks.smClockGHz, 1.83, 1e-9);
}

TEST(DevicePeaks, AnUnknownArchitectureHasBandwidthButNoFlopPeaks) {
  DevicePeaks peaks = peaksFor({75, 40, 1590000, 5001000, 256});
  EXPECT_EQ(peaks.eightBitTflops, 0);
  EXPECT_EQ(peaks.halfTflops, 0);
  EXPECT_EQ(peaks.tf32Tflops, 0);
  EXPECT_EQ(peaks.fp32Tflops, 0);
  EXPECT_NEAR(peaks.memoryGBs, 320, 0.1); // T4: 320 GB/s
}

} // namespace
} // namespace kiln::runtime
