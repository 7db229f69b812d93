//===- AttentionFixtures.h - a plan with attention steps for the tests -*- C++ -*-===//
//
// makeAttentionPlan() passes validatePlan and has two attention steps:
//   0 "packed": bf16, Q, K and V strided views into one packed [b, s, 3, h, d] projection
//     (b=2, s=37, h=3, d=64), a mask broadcast over heads, O written as [b, s, h, d] (what
//     ONNX exporters leave after the head split);
//   1 "dense": f16 (or the type asked for), causal, Q, K, V, O dense [b, h, s, d] (b=1, h=2,
//     s=16, d=64).
// Buffers: 0 qkv, 1 mask (weights), 2 o, 3 q2, 4 k2, 5 v2, 6 o2; inputs qkv, q2, k2, v2;
// outputs o, o2.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_UNIT_PLAN_ATTENTIONFIXTURES_H
#define KILN_TESTS_UNIT_PLAN_ATTENTIONFIXTURES_H

#include "runtime/plan/Plan.h"

#include <cmath>
#include <string>
#include <vector>

namespace kiln::plan::testing {
namespace attention_sizes {
constexpr int64_t B = 2, S = 37, H = 3, D = 64; // step 0
constexpr int64_t S2 = 16, H2 = 2;              // step 1 (batch 1, head dim D)
} // namespace attention_sizes

/// Appends buffers at 256-aligned offsets of their space.
class PlanBuffers {
public:
  explicit PlanBuffers(Plan &plan) : plan_(plan) {}
  uint32_t add(const std::string &name, MemorySpace space, DType type, std::vector<int64_t> shape) {
    uint64_t &top = space == MemorySpace::Arena ? arena_ : weights_;
    uint64_t bytes = denseBytes(shape, type).value();
    plan_.buffers.push_back({name, space, top, bytes, type, std::move(shape)});
    top = (top + bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    return static_cast<uint32_t>(plan_.buffers.size() - 1);
  }
  uint32_t input(const std::string &name, DType type, std::vector<int64_t> shape) {
    uint32_t b = add(name, MemorySpace::Arena, type, shape);
    plan_.inputs.push_back({name, type, shape, b});
    return b;
  }
  uint32_t output(const std::string &name, DType type, std::vector<int64_t> shape) {
    uint32_t b = add(name, MemorySpace::Arena, type, shape);
    plan_.outputs.push_back({name, type, shape, b});
    return b;
  }
  uint64_t arenaBytes() const { return arena_; }
  uint64_t weightsBytes() const { return weights_; }

private:
  Plan &plan_;
  uint64_t arena_ = 0, weights_ = 0;
};

inline Plan makeAttentionPlan(DType denseType = DType::F16) {
  using namespace attention_sizes;
  Plan plan;
  plan.metadata.compilerVersion = "0.1.0";
  plan.metadata.computeCapability = 90;
  plan.metadata.cudnnVersion = 91400;
  plan.metadata.precision = "bf16";
  plan.metadata.model = "attention.onnx";
  PlanBuffers buffers(plan);
  uint32_t qkv = buffers.input("qkv", DType::BF16, {B, S, 3, H, D});                    // 0
  uint32_t mask = buffers.add("mask", MemorySpace::Weights, DType::BF16, {B, 1, S, S}); // 1
  uint32_t o = buffers.output("o", DType::BF16, {B, S, H, D});                          // 2
  uint32_t q2 = buffers.input("q2", denseType, {1, H2, S2, D});                         // 3
  uint32_t k2 = buffers.input("k2", denseType, {1, H2, S2, D});                         // 4
  uint32_t v2 = buffers.input("v2", denseType, {1, H2, S2, D});                         // 5
  uint32_t o2 = buffers.output("o2", denseType, {1, H2, S2, D});                        // 6

  AttentionStep packed;
  packed.batch = B, packed.heads = H, packed.seqQ = S, packed.seqKv = S, packed.headDim = D, packed.headDimV = D;
  packed.scale = 0.125f;
  std::vector<int64_t> qkvStrides = {S * 3 * H * D, D, 3 * H * D, 1}; // dims [b, h, s, d] of [b, s, 3, h, d]
  packed.q = packed.k = packed.v = qkv;
  packed.qOffset = 0, packed.kOffset = H * D, packed.vOffset = 2 * H * D;
  packed.qStrides = packed.kStrides = packed.vStrides = qkvStrides;
  packed.o = o;
  packed.oStrides = {S * H * D, D, H * D, 1};
  packed.mask = mask;
  packed.maskStrides = {S * S, 0, S, 1};

  AttentionStep dense;
  dense.batch = 1, dense.heads = H2, dense.seqQ = S2, dense.seqKv = S2, dense.headDim = D, dense.headDimV = D;
  dense.scale = 1.0f / std::sqrt(static_cast<float>(D));
  dense.causal = true;
  dense.q = q2, dense.k = k2, dense.v = v2, dense.o = o2;
  dense.qStrides = dense.kStrides = dense.vStrides = dense.oStrides = {H2 * S2 * D, S2 * D, D, 1};

  plan.steps = {{"packed", "kiln.attention", {"qk", "softmax", "packed"}, packed},
                {"dense", "kiln.attention", {"dense"}, dense}};
  plan.metadata.arenaBytes = plan.metadata.arenaLowerBound = buffers.arenaBytes();
  std::vector<uint8_t> weights(buffers.weightsBytes());
  for (size_t i = 0; i < weights.size(); ++i)
    weights[i] = static_cast<uint8_t>(i * 13);
  plan.setWeights(std::move(weights));
  return plan;
}

} // namespace kiln::plan::testing

#endif // KILN_TESTS_UNIT_PLAN_ATTENTIONFIXTURES_H
