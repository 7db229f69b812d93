//===- RangeHistogram.cpp - activation statistics for 8-bit calibration ---===//

#include "passes/RangeHistogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln {

namespace {

/// The smallest power of two above `a` (> 0): bins of a span that is a power of two, like
/// kBins, have edges that are exact in double, so a value's bin is exact.
double powerOfTwoAbove(double a) {
  int exponent = 0;
  std::frexp(a, &exponent); // a = m * 2^exponent, m in [0.5, 1)
  return std::ldexp(1.0, exponent);
}

/// Replaces zero counts with `eps` and takes their total off the others, so a KL divergence
/// is finite (as MXNet's and onnxruntime's entropy calibration smooth); false when the
/// nonzero counts cannot give that much.
bool smooth(std::vector<double> &counts, double eps = 1e-4) {
  size_t zeros = std::count(counts.begin(), counts.end(), 0.0), nonzeros = counts.size() - zeros;
  if (nonzeros == 0)
    return false;
  double take = eps * (double)zeros / (double)nonzeros;
  for (double &c : counts) {
    if (c == 0) {
      c = eps;
    } else {
      c -= take;
      if (c <= 0)
        return false;
    }
  }
  return true;
}

double klDivergence(const std::vector<double> &p, const std::vector<double> &q) {
  double sumP = 0, sumQ = 0;
  for (size_t k = 0; k < p.size(); ++k) {
    sumP += p[k];
    sumQ += q[k];
  }
  double kl = 0;
  for (size_t k = 0; k < p.size(); ++k) {
    double pk = p[k] / sumP, qk = q[k] / sumQ;
    kl += pk * std::log(pk / qk);
  }
  return kl;
}

} // namespace

void RangeHistogram::add(llvm::ArrayRef<double> values) {
  double largest = 0;
  for (double v : values) {
    if (!std::isfinite(v)) {
      ++nonFinite_;
      continue;
    }
    if (count_ == 0) {
      min_ = max_ = v;
    } else {
      min_ = std::min(min_, v);
      max_ = std::max(max_, v);
    }
    ++count_;
    largest = std::max(largest, std::fabs(v));
  }
  if (largest > 0 && largest >= range_)
    growTo(powerOfTwoAbove(largest));
  double perUnit = range_ > 0 ? (double)kBins / range_ : 0;
  for (double v : values)
    if (std::isfinite(v))
      ++bins_[std::min<int64_t>(kBins - 1, (int64_t)(std::fabs(v) * perUnit))];
}

void RangeHistogram::growTo(double range) {
  if (range <= range_)
    return;
  if (range_ > 0) {
    // Both spans are powers of two: each new bin is exactly `factor` old ones.
    int64_t factor = (int64_t)std::llround(range / range_);
    std::vector<uint64_t> merged(kBins, 0);
    for (int64_t k = 0; k < kBins; ++k)
      merged[k / factor] += bins_[k];
    bins_ = std::move(merged);
  }
  range_ = range; // from 0: only zeros so far, in bin 0 whatever the span
}

void RangeHistogram::merge(const RangeHistogram &other) {
  if (other.count_) {
    min_ = count_ ? std::min(min_, other.min_) : other.min_;
    max_ = count_ ? std::max(max_, other.max_) : other.max_;
  }
  count_ += other.count_;
  nonFinite_ += other.nonFinite_;
  growTo(other.range_);
  int64_t factor = other.range_ > 0 ? (int64_t)std::llround(range_ / other.range_) : kBins;
  for (int64_t k = 0; k < kBins; ++k)
    bins_[k / factor] += other.bins_[k];
}

double RangeHistogram::absMax() const { return std::max(std::fabs(min()), std::fabs(max())); }

double RangeHistogram::percentileThreshold(double percent) const {
  if (count_ == 0)
    return 0;
  double wanted = percent / 100.0 * (double)count_, width = range_ / kBins;
  uint64_t seen = 0;
  for (int64_t k = 0; k < kBins; ++k) {
    seen += bins_[k];
    if ((double)seen >= wanted)
      return std::min(absMax(), (double)(k + 1) * width);
  }
  return absMax();
}

double RangeHistogram::entropyThreshold(int64_t levels) const {
  int64_t used = kBins;
  while (used > 0 && bins_[used - 1] == 0)
    --used;
  if (used <= levels)
    return absMax();
  // The zeros of a ReLU output (half its values or more) would make keeping bin 0 apart from
  // its neighbours worth more than anything else, and clip the rest hard: bin 0 counts as
  // bin 1 does (as pytorch-quantization's entropy calibration does).
  std::vector<double> counts(bins_.begin(), bins_.begin() + used);
  counts[0] = counts[1];
  double best = std::numeric_limits<double>::infinity();
  int64_t bestBins = used;
  for (int64_t kept = levels; kept <= used; ++kept) {
    // P: the first `kept` bins, the values beyond them clipped into the last one.
    std::vector<double> p(counts.begin(), counts.begin() + kept);
    for (int64_t k = kept; k < used; ++k)
      p[kept - 1] += counts[k];
    // Q: the unclipped bins quantized to `levels` even levels (bin k in level k * levels /
    // kept), each level's count spread evenly over its bins that are not empty.
    std::vector<double> levelCount(levels, 0.0), levelBins(levels, 0.0), q(kept, 0.0);
    for (int64_t k = 0; k < kept; ++k)
      if (counts[k] != 0) {
        levelCount[k * levels / kept] += counts[k];
        levelBins[k * levels / kept] += 1;
      }
    for (int64_t k = 0; k < kept; ++k)
      if (counts[k] != 0)
        q[k] = levelCount[k * levels / kept] / levelBins[k * levels / kept];
    if (!smooth(p) || !smooth(q))
      continue;
    double kl = klDivergence(p, q);
    if (kl < best) {
      best = kl;
      bestBins = kept;
    }
  }
  return std::min(absMax(), (double)bestBins * range_ / kBins);
}

} // namespace kiln
