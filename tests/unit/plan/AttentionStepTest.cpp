//===- AttentionStepTest.cpp - the attention step in the plan file ---------===//
//
// The attention step (kind 5) through the schema machinery: file round trip, text and JSON
// views, compatibility, and every semantic check of AttentionChecks.cpp, each case on the
// in-memory plan and on its file bytes. No GPU: these run everywhere.
//
// The plan is makeAttentionPlan() (AttentionFixtures.h).
//
//===----------------------------------------------------------------------===//

#include "AttentionFixtures.h"
#include "PlanFixtures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace kiln::plan {
namespace {
using runtime::StatusCode;
using namespace kiln::plan::testing;
using namespace kiln::plan::testing::attention_sizes;

AttentionStep &attention(Plan &p, size_t step) { return std::get<AttentionStep>(p.steps[step].params); }

TEST(AttentionStep, SamplePlanIsValid) {
  Plan plan = makeAttentionPlan();
  EXPECT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  EXPECT_TRUE(validatePlan(makeAttentionPlan(DType::BF16)).isOk());
}

TEST(AttentionStep, RoundTripsThroughTheFile) {
  Plan plan = makeAttentionPlan();
  StatusOr<Plan> parsed = parsePlan(serializePlan(plan), "attention.kiln");
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  EXPECT_EQ(parsed.value(), plan);
  // And the bytes are the same again (determinism).
  EXPECT_EQ(serializePlan(parsed.value()), serializePlan(plan));
}

TEST(AttentionStep, TextAndJsonShowEveryField) {
  Plan plan = makeAttentionPlan();
  std::string text = planToText(plan);
  EXPECT_NE(text.find("step 0 \"packed\" op=\"kiln.attention\" nodes=[\"qk\",\"softmax\",\"packed\"] attention "
                      "batch=2 heads=3 seqQ=37 seqKv=37 headDim=64 headDimV=64 scale=0.125 causal=0 "
                      "q=qkv:bf16[2,37,3,3,64] qOffset=0 qStrides=[21312,64,576,1] k=qkv:bf16[2,37,3,3,64] "
                      "kOffset=192 kStrides=[21312,64,576,1] v=qkv"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("o=o:bf16[2,37,3,64] oOffset=0 oStrides=[7104,64,192,1] mask=mask:bf16[2,1,37,37] "
                      "maskOffset=0 maskStrides=[1369,0,37,1] values=[] valueBuffers=[]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("causal=1"), std::string::npos) << text;
  EXPECT_NE(text.find("mask=- maskOffset=0 maskStrides=[] values=[] valueBuffers=[]\n"), std::string::npos) << text;
  std::string json = planToJson(plan);
  EXPECT_NE(json.find("\"op\": \"kiln.attention\", \"nodes\": [\"qk\",\"softmax\",\"packed\"], \"kind\": "
                      "\"attention\", \"batch\": 2, \"heads\": 3"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"mask\": {\"index\": 1, \"name\": \"mask\", \"dtype\": \"bf16\", \"shape\": [2,1,37,37]}, "
                      "\"maskOffset\": 0, \"maskStrides\": [1369,0,37,1], \"values\": [], \"valueBuffers\": []}"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"mask\": null"), std::string::npos) << json;
}

TEST(AttentionStep, RunsOnCudnn) {
  Plan plan = makeAttentionPlan();
  EXPECT_EQ(stepRunner(plan.steps[0]), "cudnn");
  TargetInfo target{90, 13000, 0, 0}; // no cuDNN on this machine
  Status s = checkCompatibility(plan, target);
  EXPECT_EQ(s.code(), StatusCode::kIncompatible) << s.toString();
  EXPECT_NE(s.message().find("cuDNN"), std::string::npos) << s.toString();
  target.cudnnVersion = 91400;
  EXPECT_TRUE(checkCompatibility(plan, target).isOk()) << checkCompatibility(plan, target).toString();
}

TEST(AttentionStep, Fp32IsRefusedWithWhatCodegenMustDo) {
  Plan plan = makeAttentionPlan(DType::F32);
  Status s = validatePlan(plan);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("step 1 'dense' (kiln.attention): q (buffer 3 'q2') is f32; cuDNN's flash attention has "
                             "no fp32 path; codegen must keep the unfused path for fp32/tf32"),
            std::string::npos)
      << s.toString();
  StatusOr<Plan> parsed = parsePlan(serializePlan(plan), "f32.kiln");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_NE(parsed.status().message().find("codegen must keep the unfused path for fp32/tf32"), std::string::npos);
}

struct BreakCase {
  const char *name;
  std::function<void(Plan &)> breakIt;
  const char *message; // a substring of the expected error
};

const BreakCase kCases[] = {
    // Sizes, scale, types.
    {"ZeroSequence", [](Plan &p) { attention(p, 1).seqKv = 0; },
     "step 1 'dense' (kiln.attention): batch, heads, seqQ, seqKv, headDim, headDimV (1, 2, 16, 0, 64, 64) must all be "
     "at least 1"},
    {"HeadDimNotAMultipleOf8", [](Plan &p) { attention(p, 1).headDim = 60; },
     "head dims 60 (q, k) and 64 (v, o) must be multiples of 8 up to 256 (cuDNN's flash attention); codegen must "
     "keep the unfused path for other head sizes"},
    {"HeadDimTooLarge", [](Plan &p) { attention(p, 1).headDimV = 264; }, "must be multiples of 8 up to 256"},
    {"NonFiniteScale", [](Plan &p) { attention(p, 0).scale = NAN; },
     "step 0 'packed' (kiln.attention): scale must be finite"},
    {"MixedTypes", [](Plan &p) { p.buffers[4].dtype = p.inputs[2].dtype = DType::BF16; },
     "step 1 'dense' (kiln.attention): k (buffer 4 'k2') is bf16 but q is f16; q, k, v, o and mask share one element "
     "type"},
    {"IntegerOperands",
     [](Plan &p) {
       for (uint32_t b : {3u, 4u, 5u, 6u})
         p.buffers[b].dtype = DType::I16;
       for (TensorBinding &t : p.inputs)
         t.dtype = p.buffers[t.buffer].dtype;
       for (TensorBinding &t : p.outputs)
         t.dtype = p.buffers[t.buffer].dtype;
     },
     "q (buffer 3 'q2') is i16; attention steps take f16 or bf16 operands"},
    {"MaskOfAnotherType", [](Plan &p) { p.buffers[1].dtype = DType::F16; },
     "mask (buffer 1 'mask') is f16 but q is bf16"},

    // Strides and offsets.
    {"ThreeStrides",
     [](Plan &p) {
       attention(p, 1).qStrides = {1, 2, 3};
     },
     "qStrides [1,2,3] has 3 values; q needs 4 (dims [batch, heads, seq, headDim])"},
    {"MaskWithoutStrides", [](Plan &p) { attention(p, 0).maskStrides.clear(); },
     "maskStrides [] has 0 values; mask needs 4 (dims [batch, heads, seqQ, seqKv])"},
    {"StridesWithoutMask",
     [](Plan &p) {
       attention(p, 1).maskStrides = {0, 0, 16, 1};
     },
     "maskStrides [0,0,16,1] and maskOffset 0 are set but there is no mask"},
    {"NegativeStride", [](Plan &p) { attention(p, 1).kStrides[1] = -1024; },
     "kOffset 0 and kStrides [2048,-1024,64,1] must not be negative"},
    {"NegativeOffset", [](Plan &p) { attention(p, 0).vOffset = -8; }, "vOffset -8 and vStrides"},
    {"HeadDimNotContiguous", [](Plan &p) { attention(p, 1).vStrides[3] = 2; },
     "vStrides [2048,1024,64,2]: the innermost dimension of v must be contiguous (stride 1, not 2)"},
    {"MaskKeysNotContiguous", [](Plan &p) { attention(p, 0).maskStrides[3] = 0; },
     "the innermost dimension of mask must be contiguous (stride 1, not 0)"},
    {"MisalignedOffset", [](Plan &p) { attention(p, 0).kOffset = 4; },
     "step 0 'packed' (kiln.attention): kOffset 4 and kStrides [21312,64,576,1] must be multiples of 8 elements (16 "
     "bytes): cuDNN's flash attention moves q, k, v and o 16 bytes at a time"},
    {"MisalignedStride", [](Plan &p) { attention(p, 0).qStrides[2] = 572; },
     "qOffset 0 and qStrides [21312,64,572,1] must be multiples of 8 elements"},
    {"ViewPastItsBuffer", [](Plan &p) { attention(p, 0).vOffset = 448; },
     "step 0 'packed' (kiln.attention): v (offset 448 and strides [21312,64,576,1] over [2,3,37,64]) needs 85376 "
     "bytes but buffer 0 'qkv' has 85248"},
    {"MaskPastItsBuffer", [](Plan &p) { attention(p, 0).maskStrides[1] = S * S; },
     "mask (offset 0 and strides [1369,1369,37,1] over [2,3,37,37]) needs"},
    {"HugeStrideOverflows",
     [](Plan &p) {
       attention(p, 1).qStrides[0] = int64_t(1) << 62;
       attention(p, 1).qStrides[1] = int64_t(1) << 62;
     },
     "the size of q (offset 0 and strides"},

    // The output.
    {"OutputInWeights", [](Plan &p) { attention(p, 0).o = 1; },
     "step 0 'packed' (kiln.attention): writes o into buffer 1 'mask', which is in the read-only weights"},
    {"OutputOverlapsInput",
     [](Plan &p) {
       attention(p, 0).o = 0; // the packed projection: o would overwrite what q, k and v read
     },
     "step 0 'packed' (kiln.attention): o (buffer 0 'qkv') overlaps q (buffer 0 'qkv'): attention cannot run in place"},
    {"OutputOverlapsItself",
     [](Plan &p) {
       attention(p, 1).oStrides = {2048, 64, 64, 1};
     },
     "oStrides [2048,64,64,1] over [1,2,16,64] put two output elements at one address; the step would race with "
     "itself"},

    // Generic field checks and metadata.
    {"MaskOutOfRange", [](Plan &p) { attention(p, 0).mask = 99; },
     "step 0 'packed' (kiln.attention): mask = 99 is not a buffer index"},
    {"QOutOfRange", [](Plan &p) { attention(p, 1).q = 7; },
     "step 1 'dense' (kiln.attention): q = 7 is not a buffer index (the plan has 7 buffers)"},
    {"NoCudnnVersion", [](Plan &p) { p.metadata.cudnnVersion = 0; },
     "metadata: the plan has cuDNN steps (e.g. 'packed') but records no cuDNN version"},
};

class AttentionStepBreakTest : public ::testing::TestWithParam<BreakCase> {};

TEST_P(AttentionStepBreakTest, InMemoryPlanIsRejected) {
  Plan plan = makeAttentionPlan();
  GetParam().breakIt(plan);
  Status s = validatePlan(plan);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), StatusCode::kInvalidPlan);
  EXPECT_NE(s.message().find(GetParam().message), std::string::npos) << s.message();
}

TEST_P(AttentionStepBreakTest, FileIsRejected) {
  Plan plan = makeAttentionPlan();
  GetParam().breakIt(plan);
  StatusOr<Plan> parsed = parsePlan(serializePlan(plan), "broken.kiln");
  ASSERT_FALSE(parsed.isOk());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidPlan);
  EXPECT_NE(parsed.status().message().find(GetParam().message), std::string::npos) << parsed.status().message();
}

INSTANTIATE_TEST_SUITE_P(EveryCheck, AttentionStepBreakTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BreakCase> &param) {
                           return std::string(param.param.name);
                         });

TEST(AttentionStep, BroadcastAndPaddedLayoutsAreValid) {
  Plan plan = makeAttentionPlan();
  // One mask row for every query and head ([b, 1, 1, s_kv], a padding mask), and one mask for
  // the whole batch.
  attention(plan, 0).maskStrides = {S * S, 0, 0, 1};
  EXPECT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  attention(plan, 0).maskStrides = {0, 0, S, 1};
  EXPECT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  // A dimension of one element may have any stride (nothing steps along it).
  attention(plan, 1).qStrides[0] = 12345;
  EXPECT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  // O may be padded: rows 128 elements apart, of which 64 are written.
  plan.buffers[6].shape = {1, H2, S2, 2 * D};
  plan.buffers[6].bytes *= 2;
  plan.outputs[1].shape = plan.buffers[6].shape;
  plan.metadata.arenaBytes += plan.buffers[6].bytes / 2;
  plan.metadata.arenaLowerBound = plan.metadata.arenaBytes;
  attention(plan, 1).oStrides = {H2 * S2 * 2 * D, S2 * 2 * D, 2 * D, 1};
  EXPECT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
}

} // namespace
} // namespace kiln::plan
