//===- MemoryPlannerTest.cpp - arena offsets from liveness ----------------===//

#include "codegen/MemoryPlanner.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln::codegen {
namespace {

constexpr uint64_t kAlign = 256;

/// Independent of the planner's own check: every pair live at one step is disjoint.
void expectNoOverlap(const std::vector<MemoryRequest> &requests, const MemoryPlan &plan) {
  ASSERT_EQ(plan.offsets.size(), requests.size());
  for (size_t a = 0; a < requests.size(); ++a) {
    EXPECT_EQ(plan.offsets[a] % kAlign, 0u) << "request " << a;
    EXPECT_LE(plan.offsets[a] + requests[a].bytes, plan.peakBytes) << "request " << a;
    for (size_t b = 0; b < a; ++b) {
      bool liveTogether = requests[a].firstStep <= requests[b].lastStep && requests[b].firstStep <= requests[a].lastStep;
      if (!liveTogether || !requests[a].bytes || !requests[b].bytes)
        continue;
      bool disjoint = plan.offsets[a] + requests[a].bytes <= plan.offsets[b] ||
                      plan.offsets[b] + requests[b].bytes <= plan.offsets[a];
      EXPECT_TRUE(disjoint) << "requests " << a << " and " << b << " overlap";
    }
  }
}

TEST(MemoryPlanner, ChainPingPongsBetweenTwoSlots) {
  // t0 -> t1 -> t2 -> t3, each read only by the next step.
  std::vector<MemoryRequest> requests = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  MemoryPlan plan = planMemory(requests, kAlign);
  expectNoOverlap(requests, plan);
  EXPECT_EQ(plan.lowerBound, 2 * 1024u);
  EXPECT_EQ(plan.peakBytes, 2 * 1024u);
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]);
  EXPECT_EQ(plan.offsets[1], plan.offsets[3]);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
}

TEST(MemoryPlanner, LowerBoundIsTheBusiestStep) {
  std::vector<MemoryRequest> requests = {{512, 0, 5}, {256, 1, 1}, {1024, 2, 3}, {256, 3, 4}, {100, 6, 6}};
  MemoryPlan plan = planMemory(requests, kAlign);
  expectNoOverlap(requests, plan);
  EXPECT_EQ(plan.lowerBound, 512u + 1024u + 256u); // step 3
  EXPECT_GE(plan.peakBytes, plan.lowerBound);
}

TEST(MemoryPlanner, LaterTensorReusesAFreedGap) {
  // A big tensor dies at step 1; a smaller one born at step 2 lands in its bytes.
  std::vector<MemoryRequest> requests = {{4096, 0, 1}, {1024, 0, 4}, {2048, 2, 3}};
  MemoryPlan plan = planMemory(requests, kAlign);
  expectNoOverlap(requests, plan);
  EXPECT_EQ(plan.peakBytes, 4096u + 1024u);
  EXPECT_EQ(plan.offsets[2], plan.offsets[0]);
}

TEST(MemoryPlanner, ZeroByteRequestsTakeNoSpace) {
  std::vector<MemoryRequest> requests = {{0, 0, 3}, {300, 0, 3}};
  MemoryPlan plan = planMemory(requests, kAlign);
  EXPECT_EQ(plan.peakBytes, 512u);
  EXPECT_EQ(plan.lowerBound, 512u);
}

TEST(MemoryPlanner, RandomProgramsNeverOverlapAndAreDeterministic) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<MemoryRequest> requests;
    int steps = 1 + static_cast<int>(rng() % 60);
    int count = 1 + static_cast<int>(rng() % 80);
    for (int i = 0; i < count; ++i) {
      int64_t first = static_cast<int64_t>(rng() % steps);
      int64_t last = first + static_cast<int64_t>(rng() % (steps - first));
      requests.push_back({1 + rng() % 100000, first, last});
    }
    MemoryPlan plan = planMemory(requests, kAlign);
    expectNoOverlap(requests, plan);
    EXPECT_TRUE(isValidMemoryPlan(requests, plan, kAlign));
    EXPECT_GE(plan.peakBytes, plan.lowerBound);
    // Greedy by size stays near the bound on such programs; a regression that stops reusing
    // memory would blow far past it.
    EXPECT_LE(plan.peakBytes, plan.lowerBound * 2) << "trial " << trial;
    MemoryPlan again = planMemory(requests, kAlign);
    EXPECT_EQ(plan.offsets, again.offsets);
  }
}

TEST(MemoryPlanner, ValidatorCatchesAnOverlap) {
  std::vector<MemoryRequest> requests = {{1000, 0, 2}, {1000, 1, 3}};
  MemoryPlan plan = planMemory(requests, kAlign);
  ASSERT_TRUE(isValidMemoryPlan(requests, plan, kAlign));
  plan.offsets[1] = plan.offsets[0];
  EXPECT_FALSE(isValidMemoryPlan(requests, plan, kAlign));
}

} // namespace
} // namespace kiln::codegen
