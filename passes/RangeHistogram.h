//===- RangeHistogram.h - activation statistics for 8-bit calibration -*- C++ -*-===//
//
// What `kiln calibrate` collects per activation: its exact min and max and a histogram of |x|,
// and the three clipping thresholds an 8-bit scale is derived from (scale = threshold / 127 for
// symmetric int8): min-max (the largest |x|), a percentile of |x|, and entropy (the threshold
// whose 128-level quantization loses the least information, KL divergence, as TensorRT's
// entropy calibrator chooses).
//
// The histogram spans [0, range) in kBins equal bins with `range` a power of two, grown by
// merging bins when a larger value arrives. Every bin then holds exactly the values in its
// interval whatever order they came in and however they were split before merging, so a
// calibration over several threads is deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_RANGEHISTOGRAM_H
#define KILN_PASSES_RANGEHISTOGRAM_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace kiln {

class RangeHistogram {
public:
  static constexpr int64_t kBins = 2048;

  /// Adds finite values; NaN and infinities are only counted (nonFinite()).
  void add(llvm::ArrayRef<double> values);
  /// Adds everything `other` holds (exact: the result does not depend on the order of merges).
  void merge(const RangeHistogram &other);

  uint64_t count() const { return count_; }
  uint64_t nonFinite() const { return nonFinite_; }
  /// The smallest and largest finite value added (0 when none).
  double min() const { return count_ ? min_ : 0.0; }
  double max() const { return count_ ? max_ : 0.0; }
  double absMax() const;
  /// The histogram's span, a power of two (0 while only zeros were added).
  double range() const { return range_; }
  /// Values with |x| in [k, k + 1) * range / kBins.
  const std::vector<uint64_t> &bins() const { return bins_; }

  /// The smallest bin edge at or below which `percent` % of |x| lie (at most absMax()).
  double percentileThreshold(double percent) const;
  /// The clipping threshold whose quantization to `levels` uniform levels keeps the
  /// distribution of |x| closest in KL divergence (at most absMax(); absMax() when the
  /// values occupy no more than `levels` bins). At least levels * range / kBins: an
  /// activation with outliers 16x its bulk or more is clipped no lower than 1/16 of them.
  double entropyThreshold(int64_t levels = 128) const;

private:
  /// Widens the span to `range` (a larger power of two), merging bins.
  void growTo(double range);

  std::vector<uint64_t> bins_ = std::vector<uint64_t>(kBins, 0);
  double range_ = 0;
  double min_ = 0, max_ = 0;
  uint64_t count_ = 0, nonFinite_ = 0;
};

} // namespace kiln

#endif // KILN_PASSES_RANGEHISTOGRAM_H
