//===- CalibrationTest.cpp - RangeHistogram and the calibration file -------===//

#include "passes/CalibrationTable.h"
#include "passes/RangeHistogram.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace kiln;

namespace {

std::vector<double> gaussianWithOutliers(size_t n, size_t outliers, double outlier, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> values(n);
  for (double &v : values)
    v = normal(rng);
  for (size_t k = 0; k < outliers; ++k)
    values[k * (n / outliers)] = k % 2 ? outlier : -outlier;
  return values;
}

TEST(RangeHistogram, BinsAreExactIntervalsOfAPowerOfTwoSpan) {
  RangeHistogram h;
  h.add({0.5});
  EXPECT_EQ(h.range(), 1.0);
  EXPECT_EQ(h.bins()[1024], 1u);
  h.add({-3.0, 0.1});
  EXPECT_EQ(h.range(), 4.0);
  // 0.5 moved with its bin when the span doubled twice: [0.5, 0.5 + 4/2048).
  EXPECT_EQ(h.bins()[256], 1u);
  EXPECT_EQ(h.bins()[1536], 1u); // |-3| * 2048 / 4
  EXPECT_EQ(h.bins()[51], 1u);   // floor(0.1 * 512)
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.min(), -3.0);
  EXPECT_EQ(h.max(), 0.5);
  EXPECT_EQ(h.absMax(), 3.0);
  // A power of two itself lands in the next span: 4 is not below 4.
  h.add({4.0});
  EXPECT_EQ(h.range(), 8.0);
  EXPECT_EQ(h.bins()[1024], 1u);
}

TEST(RangeHistogram, ZerosAndNonFiniteValues) {
  RangeHistogram h;
  h.add({0.0, 0.0, -0.0});
  EXPECT_EQ(h.range(), 0.0);
  EXPECT_EQ(h.absMax(), 0.0);
  h.add({NAN, INFINITY, 1.5});
  EXPECT_EQ(h.nonFinite(), 2u);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.range(), 2.0);
  EXPECT_EQ(h.bins()[0], 3u);
  EXPECT_EQ(h.absMax(), 1.5);
}

TEST(RangeHistogram, MergingInAnyOrderGivesTheSameHistogram) {
  std::vector<double> values = gaussianWithOutliers(30000, 6, 37.0, 1);
  RangeHistogram whole;
  whole.add(values);
  llvm::ArrayRef<double> all(values);
  RangeHistogram a, b, c;
  a.add(all.slice(0, 100)); // small span first: grows when merged
  b.add(all.slice(100, 20000));
  c.add(all.slice(20100));
  RangeHistogram forward = a, backward = c;
  forward.merge(b);
  forward.merge(c);
  backward.merge(b);
  backward.merge(a);
  for (const RangeHistogram *h : {&forward, &backward}) {
    EXPECT_EQ(h->bins(), whole.bins());
    EXPECT_EQ(h->range(), whole.range());
    EXPECT_EQ(h->count(), whole.count());
    EXPECT_EQ(h->min(), whole.min());
    EXPECT_EQ(h->max(), whole.max());
  }
}

TEST(RangeHistogram, PercentileThreshold) {
  RangeHistogram h;
  std::vector<double> values;
  for (int k = 1; k <= 100; ++k)
    values.push_back(k % 2 ? k : -k);
  h.add(values);
  // Span 128, bins 1/16 wide: 50 values are at most 50, the 50th in [50, 50 + 1/16).
  EXPECT_DOUBLE_EQ(h.percentileThreshold(50), 50.0625);
  EXPECT_DOUBLE_EQ(h.percentileThreshold(99), 99.0625);
  EXPECT_EQ(h.percentileThreshold(100), 100.0); // never beyond the largest |x|
  EXPECT_EQ(RangeHistogram().percentileThreshold(99.9), 0.0);
}

TEST(RangeHistogram, EntropyClipsOutliersButNotTheBulk) {
  RangeHistogram gaussian;
  gaussian.add(gaussianWithOutliers(200000, 20, 60.0, 2));
  double t = gaussian.entropyThreshold();
  EXPECT_EQ(gaussian.absMax(), 60.0);
  // Most of the 128 levels go to the bulk (|x| < 4.5 for all but ~7 of 200000 normal
  // values), not to 20 outliers at 60.
  EXPECT_GT(t, 2.0) << t;
  EXPECT_LT(t, 15.0) << t;

  // Uniform values leave nothing worth clipping.
  RangeHistogram uniform;
  std::vector<double> values;
  for (int k = 0; k < 100000; ++k)
    values.push_back(-1.0 + 2.0 * k / 100000.0);
  uniform.add(values);
  EXPECT_GT(uniform.entropyThreshold(), 0.9);
  EXPECT_LE(uniform.entropyThreshold(), 1.0);

  // A ReLU output: half zeros, half |normal|. The zeros must not pull the threshold into the
  // bulk (clipping at 1 would clip a third of the positive values).
  RangeHistogram relu;
  std::vector<double> rectified = gaussianWithOutliers(200000, 2, 6.0, 3);
  for (double &v : rectified)
    v = std::max(v, 0.0);
  relu.add(rectified);
  EXPECT_GT(relu.entropyThreshold(), 2.5) << relu.entropyThreshold();

  // Values in no more bins than levels: nothing to choose.
  RangeHistogram few;
  few.add({0.25, 0.5, 0.75});
  EXPECT_EQ(few.entropyThreshold(), 0.75);
}

CalibrationTable sampleTable() {
  CalibrationTable table;
  table.model = "tiny.onnx";
  table.compiler = "test";
  table.samples = 3;
  table.measuredOn = "NVIDIA H200";
  table.method = CalibrationMethod::Percentile;
  table.percent = 99.9;
  ActivationRange a;
  a.name = "conv1_out";
  a.count = 1000;
  a.nonFinite = 1;
  a.min = -1.25;
  a.max = 3.0000000000000004;
  a.minmax = 3.0000000000000004;
  a.percentile = 2.5;
  a.entropy = 1.875;
  table.activations.push_back(a);
  table.weights.push_back({"conv1", "kiln.conv", 0, {0.5, 0.1, 1e-30}});
  return table;
}

TEST(CalibrationTable, RoundTripsExactly) {
  CalibrationTable table = sampleTable();
  std::string text = llvm::formatv("{0:2}", toJSON(table)).str();
  auto parsed = parseCalibrationTable(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->model, "tiny.onnx");
  EXPECT_EQ(parsed->samples, 3u);
  EXPECT_EQ(parsed->measuredOn, "NVIDIA H200");
  EXPECT_EQ(parsed->method, CalibrationMethod::Percentile);
  EXPECT_EQ(parsed->percent, 99.9);
  ASSERT_EQ(parsed->activations.size(), 1u);
  const ActivationRange *a = parsed->activation("conv1_out");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->max, 3.0000000000000004); // doubles survive the text exactly
  EXPECT_EQ(a->nonFinite, 1u);
  EXPECT_EQ(a->threshold(CalibrationMethod::Entropy), 1.875);
  EXPECT_EQ(a->threshold(CalibrationMethod::Percentile), 2.5);
  EXPECT_EQ(parsed->activation("nope"), nullptr);
  ASSERT_EQ(parsed->weights.size(), 1u);
  EXPECT_EQ(parsed->weights[0].absMax, (std::vector<double>{0.5, 0.1, 1e-30}));
  // Printing again gives the same bytes.
  EXPECT_EQ(llvm::formatv("{0:2}", toJSON(*parsed)).str(), text);
}

TEST(CalibrationTable, FilesWithoutADeviceWereMeasuredByTheInterpreter) {
  // Calibration files from before `kiln calibrate --device` have no "measured_on".
  std::string text = llvm::formatv("{0}", toJSON(sampleTable())).str();
  size_t at = text.find("\"measured_on\":\"NVIDIA H200\",");
  ASSERT_NE(at, std::string::npos) << text;
  text.erase(at, std::strlen("\"measured_on\":\"NVIDIA H200\","));
  auto parsed = parseCalibrationTable(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->measuredOn, "interpreter");
}

TEST(CalibrationTable, RejectsOtherFilesWithTheField) {
  auto other = parseCalibrationTable(R"({"format": "something-else"})");
  ASSERT_FALSE(bool(other));
  EXPECT_NE(llvm::toString(other.takeError()).find("format"), std::string::npos);

  std::string text = llvm::formatv("{0}", toJSON(sampleTable())).str();
  std::string broken = text;
  broken.replace(broken.find("\"method\":\"percentile\""), 21, "\"method\":\"median\"");
  auto badMethod = parseCalibrationTable(broken);
  ASSERT_FALSE(bool(badMethod));
  EXPECT_NE(llvm::toString(badMethod.takeError()).find("minmax, percentile or entropy"), std::string::npos);

  broken = text;
  broken.replace(broken.find("\"entropy\":1.875"), 15, "\"entropy\":\"x\"");
  auto badThreshold = parseCalibrationTable(broken);
  ASSERT_FALSE(bool(badThreshold));
  EXPECT_NE(llvm::toString(badThreshold.takeError()).find("entropy"), std::string::npos);

  EXPECT_FALSE(bool(parseCalibrationTable("{not json")));
}

} // namespace
