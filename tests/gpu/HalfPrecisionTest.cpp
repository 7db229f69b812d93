//===- HalfPrecisionTest.cpp - f16/bf16 gemm and conv steps ----------------===//
//
// The runtime maps f16/bf16 steps onto cuBLASLt/cuDNN with fp32 accumulation, each operand of
// the type of its buffer (a gemm may write f32 from half operands). Inputs are rounded to the
// element type on the host, the reference sums the rounded values in double, and the
// tolerance covers the output's own rounding.
//
//===----------------------------------------------------------------------===//

#include "tests/gpu/GpuTestSupport.h"

namespace kiln::gpu_test {
namespace {

uint16_t encode(float f, plan::DType type) {
  uint16_t out;
  if (type == plan::DType::F16) {
    _Float16 h = static_cast<_Float16>(f);
    std::memcpy(&out, &h, 2);
    return out;
  }
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u); // round to nearest even (inputs are finite)
  return static_cast<uint16_t>(bits >> 16);
}

float decode(uint16_t v, plan::DType type) {
  if (type == plan::DType::F16) {
    _Float16 h;
    std::memcpy(&h, &v, 2);
    return static_cast<float>(h);
  }
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Rounds `values` to `type`; returns the encoded elements, and the rounded values in place.
std::vector<uint16_t> round(std::vector<float> &values, plan::DType type) {
  std::vector<uint16_t> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    out[i] = encode(values[i], type);
    values[i] = decode(out[i], type);
  }
  return out;
}

double tolerance(plan::DType type) { return type == plan::DType::F16 ? 2e-3 : 1.6e-2; }

class HalfPrecisionTest : public GpuTest, public ::testing::WithParamInterface<plan::DType> {
protected:
  void checkGemm(plan::DType type, plan::DType outType);
};

/// d = relu(a x b + bias), a and b of `type`, d and bias of `outType` (type or f32): the
/// operand types come from the buffers, one step may mix them.
void HalfPrecisionTest::checkGemm(plan::DType type, plan::DType outType) {
  const int64_t m = 33, n = 17, k = 65;
  std::vector<float> a = randomVector(m * k, 1), bm = randomVector(k * n, 2), bias = randomVector(n, 3);
  std::vector<uint16_t> aBits = round(a, type), bBits = round(bm, type);
  bool halfOut = outType != plan::DType::F32;
  std::vector<uint16_t> biasBits = halfOut ? round(bias, outType) : std::vector<uint16_t>();

  PlanBuilder b = builder("half_gemm");
  plan::GemmStep g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = b.input("a", {m, k}, type);
  g.b = b.weightsRaw("b", type, {k, n}, bBits.data());
  g.bias = halfOut ? b.weightsRaw("bias", outType, {n}, biasBits.data()) : b.weights("bias", bias);
  g.d = b.output("d", {m, n}, outType);
  g.activation = plan::Activation::Relu;
  b.step("matmul", "kiln.matmul", g);
  auto engine = load(b.build());
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  ASSERT_TRUE(ctx->setInput("a", aBits.data(), aBits.size() * 2).isOk());
  Status s = ctx->run();
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<float> got(m * n);
  if (halfOut) {
    std::vector<uint16_t> dBits(m * n);
    ASSERT_TRUE(ctx->getOutput("d", dBits.data(), dBits.size() * 2).isOk());
    for (size_t i = 0; i < got.size(); ++i)
      got[i] = decode(dBits[i], outType);
  } else {
    ASSERT_TRUE(ctx->getOutput("d", got.data(), got.size() * 4).isOk());
  }

  std::vector<double> want(got.size()), mag(got.size());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = bias[j], sumAbs = std::fabs(bias[j]);
      for (int64_t p = 0; p < k; ++p) {
        sum += static_cast<double>(a[i * k + p]) * bm[p * n + j];
        sumAbs += std::fabs(static_cast<double>(a[i * k + p]) * bm[p * n + j]);
      }
      size_t o = static_cast<size_t>(i * n + j);
      want[o] = std::max(sum, 0.0);
      mag[o] = sumAbs;
    }
  // An f32 output is not rounded to the operand type: only fp32 accumulation error remains.
  expectClose(got, want, mag, halfOut ? tolerance(type) : 1e-5,
              std::string(plan::dtypeName(type)) + " gemm into " + std::string(plan::dtypeName(outType)));
}

TEST_P(HalfPrecisionTest, GemmWithBiasRelu) { checkGemm(GetParam(), GetParam()); }

TEST_P(HalfPrecisionTest, GemmIntoF32) { checkGemm(GetParam(), plan::DType::F32); }

TEST_P(HalfPrecisionTest, Conv3x3WithBias) {
  plan::DType type = GetParam();
  const int64_t N = 2, C = 4, H = 9, W = 7, K = 8;
  std::vector<float> x = randomVector(N * C * H * W, 4), w = randomVector(K * C * 9, 5), bias = randomVector(K, 6);
  std::vector<uint16_t> xBits = round(x, type), wBits = round(w, type), biasBits = round(bias, type);

  PlanBuilder b = builder("half_conv");
  plan::ConvStep c;
  c.xShape = {N, C, H, W};
  c.wShape = {K, C, 3, 3};
  c.yShape = {N, K, H, W};
  c.pads = {1, 1};
  c.strides = {1, 1};
  c.dilations = {1, 1};
  c.x = b.input("x", c.xShape, type);
  c.w = b.weightsRaw("w", type, c.wShape, wBits.data());
  c.bias = b.weightsRaw("bias", type, {K}, biasBits.data());
  c.y = b.output("y", c.yShape, type);
  b.step("conv", "kiln.conv", c);
  auto engine = load(b.build());
  ASSERT_NE(engine, nullptr);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  ASSERT_TRUE(ctx->setInput("x", xBits.data(), xBits.size() * 2).isOk());
  Status s = ctx->run();
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<uint16_t> yBits(N * K * H * W);
  ASSERT_TRUE(ctx->getOutput("y", yBits.data(), yBits.size() * 2).isOk());

  std::vector<float> got(yBits.size());
  std::vector<double> want(yBits.size()), mag(yBits.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t v = 0; v < W; ++v) {
          double sum = bias[k], sumAbs = std::fabs(bias[k]);
          for (int64_t ci = 0; ci < C; ++ci)
            for (int64_t r = 0; r < 3; ++r)
              for (int64_t q = 0; q < 3; ++q) {
                int64_t ih = h - 1 + r, iw = v - 1 + q;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                  continue;
                double t = static_cast<double>(x[((n * C + ci) * H + ih) * W + iw]) * w[((k * C + ci) * 3 + r) * 3 + q];
                sum += t;
                sumAbs += std::fabs(t);
              }
          size_t o = static_cast<size_t>(((n * K + k) * H + h) * W + v);
          want[o] = sum;
          mag[o] = sumAbs;
          got[o] = decode(yBits[o], type);
        }
  expectClose(got, want, mag, tolerance(type), std::string(plan::dtypeName(type)) + " conv");
}

INSTANTIATE_TEST_SUITE_P(Types, HalfPrecisionTest, ::testing::Values(plan::DType::F16, plan::DType::BF16),
                         [](const ::testing::TestParamInfo<plan::DType> &info) {
                           return std::string(plan::dtypeName(info.param));
                         });

} // namespace
} // namespace kiln::gpu_test
