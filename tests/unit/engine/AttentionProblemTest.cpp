//===- AttentionProblemTest.cpp - the attention step's host side in the engine ===//
//
// What AttentionProblem decides without a GPU: whether a step is accepted (validatePlan's rules,
// and whether this runtime has the cuDNN frontend at all) and the timing-cache key, which must
// tell apart every problem that may need another engine and nothing else.
//
//===----------------------------------------------------------------------===//

#include "runtime/engine/AttentionProblem.h"

#include "tests/unit/plan/AttentionFixtures.h"

#include <gtest/gtest.h>

namespace kiln::runtime {
namespace {

using plan::AttentionStep;
using plan::testing::makeAttentionPlan;

AttentionStep &attention(plan::Plan &p, size_t step) { return std::get<AttentionStep>(p.steps[step].params); }

std::string keyOf(const plan::Plan &p, size_t step) {
  auto problem = AttentionProblem::create(p, std::get<AttentionStep>(p.steps[step].params), "step");
  EXPECT_TRUE(problem.isOk()) << problem.status().toString();
  return problem.isOk() ? problem.value()->key(1 << 20) : "";
}

TEST(AttentionProblem, WithoutTheFrontendEveryStepIsRefusedWithTheFix) {
  if (AttentionProblem::available())
    GTEST_SKIP() << "this runtime has the cuDNN frontend";
  plan::Plan p = makeAttentionPlan();
  auto problem = AttentionProblem::create(p, attention(p, 0), "step 0 'packed' (kiln.attention)");
  ASSERT_FALSE(problem.isOk());
  EXPECT_EQ(problem.status().code(), StatusCode::kIncompatible);
  EXPECT_NE(problem.status().message().find("step 0 'packed' (kiln.attention): this runtime was built without the "
                                            "cuDNN frontend"),
            std::string::npos)
      << problem.status().toString();
  EXPECT_NE(problem.status().message().find("scripts/install-cudnn-frontend.sh"), std::string::npos);
}

TEST(AttentionProblem, KeyNamesWhatTheEngineChoiceDependsOn) {
  if (!AttentionProblem::available())
    GTEST_SKIP() << "this runtime was built without the cuDNN frontend";
  plan::Plan p = makeAttentionPlan();
  EXPECT_EQ(keyOf(p, 0), "sdpa fe=1.32 type=bf16 mask=bf16 b=2 h=3 sq=37 skv=37 d=64 dv=64 causal=0 "
                         "q=[21312,64,576,1] k=[21312,64,576,1] v=[21312,64,576,1] o=[7104,64,192,1] "
                         "m=[1369,0,37,1] wslimit=1048576");
  EXPECT_EQ(keyOf(p, 1), "sdpa fe=1.32 type=f16 mask=- b=1 h=2 sq=16 skv=16 d=64 dv=64 causal=1 "
                         "q=[2048,1024,64,1] k=[2048,1024,64,1] v=[2048,1024,64,1] o=[2048,1024,64,1] "
                         "wslimit=1048576");
  // The scale is a constant in the graph, not a reason for another engine; offsets only move
  // pointers (their alignment is checked).
  std::string before = keyOf(p, 0);
  attention(p, 0).scale = 0.5f;
  attention(p, 0).qOffset = 8;
  EXPECT_EQ(keyOf(p, 0), before);
}

TEST(AttentionProblem, RefusesWhatValidatePlanRefuses) {
  if (!AttentionProblem::available())
    GTEST_SKIP() << "this runtime was built without the cuDNN frontend";
  plan::Plan p = makeAttentionPlan();
  attention(p, 1).headDim = 60;
  auto problem = AttentionProblem::create(p, attention(p, 1), "step 1 'dense'");
  ASSERT_FALSE(problem.isOk());
  EXPECT_EQ(problem.status().code(), StatusCode::kInvalidPlan);
  EXPECT_NE(problem.status().message().find("step 1 'dense': head dims 60 (q, k)"), std::string::npos)
      << problem.status().toString();
  attention(p, 1).headDim = 64;
  attention(p, 1).mask = 42;
  problem = AttentionProblem::create(p, attention(p, 1), "step 1 'dense'");
  ASSERT_FALSE(problem.isOk());
  EXPECT_NE(problem.status().message().find("names buffer 42 but the plan has 7"), std::string::npos)
      << problem.status().toString();
}

} // namespace
} // namespace kiln::runtime
