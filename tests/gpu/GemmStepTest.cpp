//===- GemmStepTest.cpp - cuBLASLt matmul steps against a CPU reference ----===//

#include "tests/gpu/GpuTestSupport.h"

namespace kiln::gpu_test {
namespace {

struct GemmCase {
  std::string name;
  int64_t batch, m, n, k;
  bool transA = false, transB = false;
  bool broadcastA = false, broadcastB = false; // stride 0
  bool bias = false;
  plan::Activation act = plan::Activation::None;
  float alpha = 1.0f, beta = 0.0f;
  bool cIsD = false; // C is the output buffer (in-place accumulate)
  plan::MathMode math = plan::MathMode::StrictF32;
};

std::ostream &operator<<(std::ostream &os, const GemmCase &c) { return os << c.name; }

double gelu(double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

class GemmStepTest : public GpuTest, public ::testing::WithParamInterface<GemmCase> {};

TEST_P(GemmStepTest, MatchesCpuReference) {
  const GemmCase &c = GetParam();
  int64_t aMats = c.broadcastA ? 1 : c.batch, bMats = c.broadcastB ? 1 : c.batch;
  std::vector<float> a = randomVector(static_cast<size_t>(aMats * c.m * c.k), 1);
  std::vector<float> bw = randomVector(static_cast<size_t>(bMats * c.k * c.n), 2);
  std::vector<float> bias = randomVector(static_cast<size_t>(c.n), 3);
  std::vector<float> cin = randomVector(static_cast<size_t>(c.batch * c.m * c.n), 4);

  PlanBuilder b = builder(c.name);
  uint32_t aBuf = b.input("a", {aMats, c.transA ? c.k : c.m, c.transA ? c.m : c.k});
  uint32_t bBuf = b.weights("b", bw, {bMats, c.transB ? c.n : c.k, c.transB ? c.k : c.n}); // from the weights
  uint32_t dBuf = b.output("d", {c.batch, c.m, c.n});
  plan::GemmStep g;
  g.math = c.math;
  g.batch = c.batch;
  g.m = c.m;
  g.n = c.n;
  g.k = c.k;
  g.transA = c.transA;
  g.transB = c.transB;
  g.strideA = c.broadcastA ? 0 : c.m * c.k;
  g.strideB = c.broadcastB ? 0 : c.k * c.n;
  g.strideC = g.strideD = c.m * c.n;
  g.alpha = c.alpha;
  g.beta = c.beta;
  g.activation = c.act;
  g.a = aBuf;
  g.b = bBuf;
  g.d = dBuf;
  bool hasC = c.beta != 0.0f;
  if (hasC) {
    uint32_t cBuf = b.input("c", {c.batch, c.m, c.n});
    if (c.cIsD) {
      b.step("c_to_d", "kiln.copy", plan::CopyStep{cBuf, dBuf, static_cast<uint64_t>(cin.size() * sizeof(float))});
      g.c = dBuf;
    } else {
      g.c = cBuf;
    }
  }
  if (c.bias)
    g.bias = b.weights("bias", bias);
  b.step("matmul", "kiln.matmul", g);
  auto engine = load(b.build());
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->tuningStats().tuned, 1u);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  std::vector<std::vector<float>> inputs = {a};
  if (hasC)
    inputs.push_back(cin);
  std::vector<float> d = runOnce(*ctx, *engine, inputs)[0];

  std::vector<double> want(d.size()), scale(d.size());
  for (int64_t bi = 0; bi < c.batch; ++bi) {
    const float *A = a.data() + (c.broadcastA ? 0 : bi * c.m * c.k);
    const float *B = bw.data() + (c.broadcastB ? 0 : bi * c.k * c.n);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < c.k; ++p) {
          double av = c.transA ? A[p * c.m + i] : A[i * c.k + p];
          double bv = c.transB ? B[j * c.k + p] : B[p * c.n + j];
          sum += av * bv;
          mag += std::fabs(av * bv);
        }
        size_t o = static_cast<size_t>((bi * c.m + i) * c.n + j);
        double v = c.alpha * sum;
        mag = std::fabs(c.alpha) * mag;
        if (hasC) {
          v += c.beta * cin[o];
          mag += std::fabs(c.beta * cin[o]);
        }
        if (c.bias) {
          v += bias[static_cast<size_t>(j)];
          mag += std::fabs(bias[static_cast<size_t>(j)]);
        }
        if (c.act == plan::Activation::Relu)
          v = std::max(v, 0.0);
        else if (c.act == plan::Activation::Gelu)
          v = gelu(v);
        want[o] = v;
        scale[o] = mag;
      }
  }
  // fp32: only summation-order rounding; tf32: 10-bit mantissas; gelu: the library's own
  // tanh/erf evaluation adds a little.
  double tol = c.math == plan::MathMode::TF32 ? 1e-2 : 1e-5;
  if (c.act == plan::Activation::Gelu)
    tol = std::max(tol, 1e-3);
  expectClose(d, want, scale, tol, c.name);

  // The same context again, and a context without a graph, give the same bits.
  EXPECT_EQ(runOnce(*ctx, *engine, inputs)[0], d);
  auto plain = context(*engine, false);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(runOnce(*plain, *engine, inputs)[0], d);
}

using A = plan::Activation;
using M = plan::MathMode;
INSTANTIATE_TEST_SUITE_P(
    Shapes, GemmStepTest,
    ::testing::Values(
        GemmCase{"m1_n1_k1", 1, 1, 1, 1},
        GemmCase{"m7_n33_k129", 1, 7, 33, 129},
        GemmCase{"m129_n7_k33_transA", 1, 129, 7, 33, true},
        GemmCase{"m33_n129_k7_transB", 1, 33, 129, 7, false, true},
        GemmCase{"m33_n33_k33_transAB_tf32", 1, 33, 33, 33, true, true, false, false, false, A::None, 1, 0, false, M::TF32},
        GemmCase{"batch3_broadcastB", 3, 7, 5, 33, false, false, false, true},
        GemmCase{"batch4_broadcastA_transB", 4, 33, 7, 1, false, true, true, false},
        GemmCase{"bias_relu_m17_n65_k31", 1, 17, 65, 31, false, false, false, false, true, A::Relu},
        GemmCase{"bias_tf32_m129_n129_k129", 1, 129, 129, 129, false, false, false, false, true, A::None, 1, 0, false, M::TF32},
        GemmCase{"relu_batch2", 2, 7, 33, 7, false, false, false, false, false, A::Relu},
        GemmCase{"bias_gelu_m33_n17_k65", 1, 33, 17, 65, false, false, false, false, true, A::Gelu},
        GemmCase{"gelu_m7_n7_k7", 1, 7, 7, 7, false, false, false, false, false, A::Gelu},
        GemmCase{"beta_c_is_d_batch2", 2, 7, 33, 129, false, false, false, false, false, A::None, 0.5f, 2.0f, true},
        GemmCase{"beta_separate_c_bias_relu", 1, 33, 7, 17, true, false, false, false, true, A::Relu, 1.5f, -1.0f},
        GemmCase{"beta_c_is_d_tf32_batch3_broadcastB", 3, 65, 33, 129, false, false, false, true, false, A::None, 1, 1,
                 true, M::TF32}),
    [](const ::testing::TestParamInfo<GemmCase> &info) { return info.param.name; });

} // namespace
} // namespace kiln::gpu_test
