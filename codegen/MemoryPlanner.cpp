//===- MemoryPlanner.cpp - arena offsets from liveness --------------------===//

#include "codegen/MemoryPlanner.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace kiln::codegen {
namespace {

uint64_t alignUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

bool overlapInTime(const MemoryRequest &a, const MemoryRequest &b) {
  return a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
}

} // namespace

MemoryPlan planMemory(const std::vector<MemoryRequest> &requests, uint64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);

  // Lower bound: the most bytes live at any one step (sweep over range starts and ends).
  std::map<int64_t, int64_t> delta;
  for (const MemoryRequest &r : requests) {
    if (r.bytes == 0)
      continue;
    delta[r.firstStep] += static_cast<int64_t>(alignUp(r.bytes, alignment));
    delta[r.lastStep + 1] -= static_cast<int64_t>(alignUp(r.bytes, alignment));
  }
  int64_t live = 0;
  for (auto &[step, change] : delta) {
    live += change;
    plan.lowerBound = std::max<uint64_t>(plan.lowerBound, static_cast<uint64_t>(live));
  }

  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes)
      return requests[a].bytes > requests[b].bytes;
    return requests[a].firstStep < requests[b].firstStep;
  });

  std::vector<size_t> placed;
  for (size_t index : order) {
    const MemoryRequest &request = requests[index];
    uint64_t size = alignUp(request.bytes, alignment);
    if (size == 0)
      continue;
    // The placed tensors this one meets in time, by offset.
    std::vector<std::pair<uint64_t, uint64_t>> busy; // [offset, end)
    for (size_t other : placed)
      if (overlapInTime(request, requests[other]))
        busy.push_back({plan.offsets[other], plan.offsets[other] + alignUp(requests[other].bytes, alignment)});
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds it; else after the last busy range.
    uint64_t bestOffset = 0, bestGap = UINT64_MAX, cursor = 0;
    bool found = false;
    for (auto [start, end] : busy) {
      if (start > cursor && start - cursor >= size && start - cursor < bestGap) {
        bestGap = start - cursor;
        bestOffset = cursor;
        found = true;
      }
      cursor = std::max(cursor, end);
    }
    plan.offsets[index] = found ? bestOffset : cursor;
    plan.peakBytes = std::max(plan.peakBytes, plan.offsets[index] + size);
    placed.push_back(index);
  }
  return plan;
}

bool isValidMemoryPlan(const std::vector<MemoryRequest> &requests, const MemoryPlan &plan, uint64_t alignment) {
  if (plan.offsets.size() != requests.size())
    return false;
  for (size_t a = 0; a < requests.size(); ++a) {
    if (plan.offsets[a] % alignment != 0 || plan.offsets[a] + requests[a].bytes > plan.peakBytes)
      return false;
    for (size_t b = a + 1; b < requests.size(); ++b) {
      if (requests[a].bytes == 0 || requests[b].bytes == 0 || !overlapInTime(requests[a], requests[b]))
        continue;
      bool disjoint = plan.offsets[a] + requests[a].bytes <= plan.offsets[b] ||
                      plan.offsets[b] + requests[b].bytes <= plan.offsets[a];
      if (!disjoint)
        return false;
    }
  }
  return true;
}

} // namespace kiln::codegen
