//===- StepWorkTest.cpp - FLOPs and bytes of plan steps -------------------===//
//
// The sample plans' steps worked out by hand (PlanFixtures.h lists the buffers and sizes).
//
//===----------------------------------------------------------------------===//

#include "AttentionFixtures.h"
#include "PlanFixtures.h"

#include "runtime/plan/StepWork.h"

#include <gtest/gtest.h>

namespace kiln::plan {
namespace {

TEST(StepWork, LibraryStepsCountTheirMultiplyAdds) {
  Plan plan = testing::makeSamplePlan();
  // conv 3->4, 3x3, 8x8 output: 256 outputs x 27 weights x 2.
  StepWork conv = stepWork(plan, plan.steps[0]);
  EXPECT_EQ(conv.flops, 2.0 * 256 * 27);
  EXPECT_EQ(conv.math, MathClass::Tf32);
  EXPECT_EQ(conv.bytes, 768u + 432 + 1024 + 16); // x, w, y, bias
  // fc 4x10x64.
  StepWork fc = stepWork(plan, plan.steps[2]);
  EXPECT_EQ(fc.flops, 2.0 * 4 * 10 * 64);
  EXPECT_EQ(fc.bytes, 1024u + 2560 + 160 + 40);
  // ConvTranspose scatters each of its 256 input elements over K/groups x 2x2 = 8 weights.
  EXPECT_EQ(stepWork(plan, plan.steps[4]).flops, 2.0 * 256 * 8);
  // The batched product: 2 batches of 4x4x4; C and D are one buffer, counted once.
  StepWork bmm = stepWork(plan, plan.steps[5]);
  EXPECT_EQ(bmm.flops, 2.0 * 2 * 4 * 4 * 4);
  EXPECT_EQ(bmm.bytes, 1024u + 64 + 2048);
}

TEST(StepWork, KernelsAndCopiesMoveBytesOnly) {
  Plan plan = testing::makeSamplePlan();
  StepWork relu = stepWork(plan, plan.steps[1]);
  EXPECT_EQ(relu.flops, 0);
  EXPECT_EQ(relu.math, MathClass::None);
  EXPECT_EQ(relu.bytes, 2048u);
  StepWork copy = stepWork(plan, plan.steps[3]);
  EXPECT_EQ(copy.bytes, 320u); // 160 read, 160 written
  EXPECT_EQ(copy.math, MathClass::None);
}

TEST(StepWork, HalfPrecisionAttentionCountsBothProductsAndHalvesCausal) {
  Plan plan = testing::makeAttentionPlan();
  const AttentionStep &packed = std::get<AttentionStep>(plan.steps[0].params);
  StepWork full = stepWork(plan, plan.steps[0]);
  EXPECT_EQ(full.math, MathClass::Half);
  EXPECT_EQ(full.flops, 2.0 * packed.batch * packed.heads * packed.seqQ * packed.seqKv *
                            (packed.headDim + packed.headDimV));
  const AttentionStep &dense = std::get<AttentionStep>(plan.steps[1].params);
  ASSERT_TRUE(dense.causal);
  EXPECT_EQ(stepWork(plan, plan.steps[1]).flops,
            1.0 * dense.batch * dense.heads * dense.seqQ * dense.seqKv * (dense.headDim + dense.headDimV));
}

TEST(StepWork, MathClassesHaveNames) {
  EXPECT_EQ(mathClassName(MathClass::Half), "half");
  EXPECT_EQ(mathClassName(MathClass::Eight), "8-bit");
  EXPECT_EQ(mathClassName(MathClass::Tf32), "tf32");
  EXPECT_EQ(mathClassName(MathClass::Fp32), "fp32");
  EXPECT_EQ(mathClassName(MathClass::None), "none");
}

} // namespace
} // namespace kiln::plan
