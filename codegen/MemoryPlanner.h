//===- MemoryPlanner.h - arena offsets from liveness -----------*- C++ -*-===//
//
// Every intermediate tensor of a plan lives in one activation arena. Each tensor is live over
// an inclusive range of steps; two tensors may share bytes only when their ranges do not
// overlap. The planner places tensors greedily by size (largest first, each at the lowest
// offset whose gap fits among the already placed tensors it overlaps in time) -- the
// "greedy by size" strategy of TFLite's arena planner, which lands close to the lower bound
// on CNN and transformer graphs. No MLIR here, so it is tested on its own.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_MEMORYPLANNER_H
#define KILN_CODEGEN_MEMORYPLANNER_H

#include <cstdint>
#include <vector>

namespace kiln::codegen {

struct MemoryRequest {
  uint64_t bytes = 0;
  int64_t firstStep = 0; // live from the start of this step ...
  int64_t lastStep = 0;  // ... to the end of this one (inclusive)
};

struct MemoryPlan {
  std::vector<uint64_t> offsets; // one per request, multiples of the alignment
  uint64_t peakBytes = 0;        // arena size
  /// The largest total size of tensors live at one step: no placement can do better.
  uint64_t lowerBound = 0;
};

/// Deterministic: the same requests give the same offsets.
MemoryPlan planMemory(const std::vector<MemoryRequest> &requests, uint64_t alignment);

/// True when no two requests that are live at the same step overlap in the plan (for tests
/// and as a self-check of codegen).
bool isValidMemoryPlan(const std::vector<MemoryRequest> &requests, const MemoryPlan &plan, uint64_t alignment);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_MEMORYPLANNER_H
