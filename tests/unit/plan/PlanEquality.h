//===- PlanEquality.h - field-by-field comparison of plans -----*- C++ -*-===//
//
// Plan.h defines no operator== (the runtime never compares plans); the round-trip tests need
// one that looks at every field, including image bytes and the weights.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_UNIT_PLAN_PLANEQUALITY_H
#define KILN_TESTS_UNIT_PLAN_PLANEQUALITY_H

#include "runtime/plan/Plan.h"

#include <algorithm>
#include <gtest/gtest.h>

namespace kiln::plan::testing {

inline bool sameKernel(const KernelStep &a, const KernelStep &b) {
  return a.image == b.image && a.function == b.function && a.grid == b.grid && a.block == b.block &&
         a.sharedBytes == b.sharedBytes && a.args == b.args;
}
inline bool sameGemm(const GemmStep &a, const GemmStep &b) {
  return a.dtype == b.dtype && a.math == b.math && a.batch == b.batch && a.m == b.m && a.n == b.n && a.k == b.k &&
         a.transA == b.transA && a.transB == b.transB && a.strideA == b.strideA && a.strideB == b.strideB &&
         a.strideC == b.strideC && a.strideD == b.strideD && a.alpha == b.alpha && a.beta == b.beta &&
         a.activation == b.activation && a.a == b.a && a.b == b.b && a.d == b.d && a.c == b.c && a.bias == b.bias;
}
inline bool sameConv(const ConvStep &a, const ConvStep &b) {
  return a.dtype == b.dtype && a.math == b.math && a.transpose == b.transpose && a.xShape == b.xShape &&
         a.wShape == b.wShape && a.yShape == b.yShape && a.pads == b.pads && a.strides == b.strides &&
         a.dilations == b.dilations && a.groups == b.groups && a.activation == b.activation && a.x == b.x &&
         a.w == b.w && a.y == b.y && a.bias == b.bias;
}
inline bool sameCopy(const CopyStep &a, const CopyStep &b) {
  return a.src == b.src && a.dst == b.dst && a.bytes == b.bytes;
}

inline void expectSamePlan(const Plan &a, const Plan &b) {
  const Metadata &ma = a.metadata, &mb = b.metadata;
  EXPECT_EQ(ma.compilerVersion, mb.compilerVersion);
  EXPECT_EQ(ma.computeCapability, mb.computeCapability);
  EXPECT_EQ(ma.cudaVersion, mb.cudaVersion);
  EXPECT_EQ(ma.cudnnVersion, mb.cudnnVersion);
  EXPECT_EQ(ma.cublasLtVersion, mb.cublasLtVersion);
  EXPECT_EQ(ma.precision, mb.precision);
  EXPECT_EQ(ma.model, mb.model);
  EXPECT_EQ(ma.arenaBytes, mb.arenaBytes);
  EXPECT_EQ(ma.arenaLowerBound, mb.arenaLowerBound);

  auto sameBindings = [](const std::vector<TensorBinding> &x, const std::vector<TensorBinding> &y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const TensorBinding &p, const TensorBinding &q) {
      return p.name == q.name && p.dtype == q.dtype && p.shape == q.shape && p.buffer == q.buffer;
    });
  };
  EXPECT_TRUE(sameBindings(a.inputs, b.inputs));
  EXPECT_TRUE(sameBindings(a.outputs, b.outputs));

  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  for (size_t i = 0; i < a.buffers.size(); ++i) {
    EXPECT_EQ(a.buffers[i].name, b.buffers[i].name) << "buffer " << i;
    EXPECT_EQ(a.buffers[i].space, b.buffers[i].space) << "buffer " << i;
    EXPECT_EQ(a.buffers[i].offset, b.buffers[i].offset) << "buffer " << i;
    EXPECT_EQ(a.buffers[i].bytes, b.buffers[i].bytes) << "buffer " << i;
  }

  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const Step &sa = a.steps[i], &sb = b.steps[i];
    EXPECT_EQ(sa.name, sb.name) << "step " << i;
    EXPECT_EQ(sa.op, sb.op) << "step " << i;
    ASSERT_EQ(sa.params.index(), sb.params.index()) << "step " << i;
    bool same = std::visit(
        [&](const auto &pa) {
          using T = std::decay_t<decltype(pa)>;
          const T &pb = std::get<T>(sb.params);
          if constexpr (std::is_same_v<T, KernelStep>)
            return sameKernel(pa, pb);
          else if constexpr (std::is_same_v<T, GemmStep>)
            return sameGemm(pa, pb);
          else if constexpr (std::is_same_v<T, ConvStep>)
            return sameConv(pa, pb);
          else
            return sameCopy(pa, pb);
        },
        sa.params);
    EXPECT_TRUE(same) << "step " << i << " '" << sa.name << "' differs";
  }

  ASSERT_EQ(a.images.size(), b.images.size());
  for (size_t i = 0; i < a.images.size(); ++i) {
    EXPECT_EQ(a.images[i].name, b.images[i].name);
    EXPECT_EQ(a.images[i].smVersion, b.images[i].smVersion);
    EXPECT_EQ(a.images[i].cubin, b.images[i].cubin);
    EXPECT_EQ(a.images[i].ptx, b.images[i].ptx);
  }
  EXPECT_TRUE(std::equal(a.weights.begin(), a.weights.end(), b.weights.begin(), b.weights.end()));
}

} // namespace kiln::plan::testing

#endif // KILN_TESTS_UNIT_PLAN_PLANEQUALITY_H
