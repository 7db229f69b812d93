//===- ValueError.cpp - how far one evaluation of a value is from another --===//

#include "ValueError.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kiln::cli {

ValueError measureError(llvm::ArrayRef<double> a, llvm::ArrayRef<double> b) {
  ValueError e;
  double aMax = 0, dot = 0, aa = 0, bb = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    double x = a[k], y = b[k];
    if (!std::isfinite(x) || !std::isfinite(y)) {
      // inf - inf would be NaN: the same non-finite value on both sides matches, anything else
      // is an error of its own, made to show as one (the only way maxAbs becomes infinite).
      if (!((std::isnan(x) && std::isnan(y)) || x == y))
        e.maxAbs = INFINITY;
      continue;
    }
    e.maxAbs = std::max(e.maxAbs, std::fabs(y - x));
    aMax = std::max(aMax, std::fabs(x));
    dot += x * y;
    aa += x * x;
    bb += y * y;
  }
  e.maxRel = aMax > 0 ? e.maxAbs / aMax : e.maxAbs;
  if (std::isinf(e.maxAbs))
    e.cosine = 0;
  else
    e.cosine = aa > 0 && bb > 0 ? dot / std::sqrt(aa * bb) : (aa == bb ? 1.0 : 0.0);
  return e;
}

const char *alignmentName(Alignment alignment) {
  switch (alignment) {
  case Alignment::Same: return "same";
  case Alignment::BChannelsLast: return "b channels last";
  case Alignment::AChannelsLast: return "a channels last";
  case Alignment::Mismatch: return "shapes differ";
  }
  return "?";
}

namespace {

std::vector<int64_t> channelsLastShape(const std::vector<int64_t> &s) { return {s[0], s[2], s[3], s[1]}; }

/// `values` of a 4-d tensor of `shape` permuted: NCHW->NHWC (toLast) or NHWC->NCHW.
std::vector<double> permuted(const std::vector<double> &values, const std::vector<int64_t> &shape, bool toLast) {
  std::vector<double> out(values.size());
  int64_t n = shape[0], d1 = shape[1], d2 = shape[2], d3 = shape[3];
  // Source [n][d1][d2][d3] -> destination: toLast [n][d2][d3][d1], else [n][d3][d1][d2].
  for (int64_t a = 0; a < n; ++a)
    for (int64_t i = 0; i < d1; ++i)
      for (int64_t j = 0; j < d2; ++j)
        for (int64_t k = 0; k < d3; ++k) {
          int64_t src = ((a * d1 + i) * d2 + j) * d3 + k;
          int64_t dst = toLast ? ((a * d2 + j) * d3 + k) * d1 + i : ((a * d3 + k) * d1 + i) * d2 + j;
          out[dst] = values[src];
        }
  return out;
}

} // namespace

Alignment alignToA(std::vector<double> &b, const std::vector<int64_t> &aShape, const std::vector<int64_t> &bShape) {
  if (aShape == bShape)
    return Alignment::Same;
  if (aShape.size() != 4 || bShape.size() != 4)
    return Alignment::Mismatch;
  if (bShape == channelsLastShape(aShape)) {
    b = permuted(b, bShape, /*toLast=*/false);
    return Alignment::BChannelsLast;
  }
  if (aShape == channelsLastShape(bShape)) {
    b = permuted(b, bShape, /*toLast=*/true);
    return Alignment::AChannelsLast;
  }
  return Alignment::Mismatch;
}

double errorBroughtByInputs(const std::vector<std::string> &inputs,
                            const std::function<const ErrorEdge *(const std::string &)> &lookup) {
  std::map<std::string, double> carried; // uncompared values already followed
  std::function<double(const std::string &, int)> errorOf = [&](const std::string &name, int depth) -> double {
    const ErrorEdge *edge = lookup(name);
    if (!edge)
      return 0.0; // a graph input or a constant
    if (edge->maxRel)
      return *edge->maxRel;
    if (auto it = carried.find(name); it != carried.end())
      return it->second;
    double worst = 0;
    if (depth < 64)
      for (const std::string &input : edge->inputs)
        worst = std::max(worst, errorOf(input, depth + 1));
    carried[name] = worst;
    return worst;
  };
  double worst = 0;
  for (const std::string &input : inputs)
    worst = std::max(worst, errorOf(input, 0));
  return worst;
}

} // namespace kiln::cli
