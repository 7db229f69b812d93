//===- ConvStepTest.cpp - cuDNN convolution steps against a CPU reference --===//

#include "tests/gpu/GpuTestSupport.h"

namespace kiln::gpu_test {
namespace {

struct ConvCase {
  std::string name;
  std::vector<int64_t> x, w; // x: N, C, spatial...; w: forward K, C/g, k...; transpose C, K/g, k...
  std::vector<int64_t> pads, strides, dilations;
  int64_t groups = 1;
  bool transpose = false;
  bool bias = false, relu = false;
  plan::MathMode math = plan::MathMode::StrictF32;
};

std::ostream &operator<<(std::ostream &os, const ConvCase &c) { return os << c.name; }

int64_t product(const std::vector<int64_t> &v) {
  int64_t p = 1;
  for (int64_t d : v)
    p *= d;
  return p;
}

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size() - 1; i > 0; --i)
    s[i - 1] = s[i] * shape[i];
  return s;
}

/// The output shape, as ONNX defines it (no output padding for the transpose).
std::vector<int64_t> outputShape(const ConvCase &c) {
  size_t spatial = c.x.size() - 2;
  std::vector<int64_t> y = {c.x[0], c.transpose ? c.w[1] * c.groups : c.w[0]};
  for (size_t d = 0; d < spatial; ++d) {
    int64_t in = c.x[2 + d], k = c.w[2 + d], p = c.pads[d], s = c.strides[d], dil = c.dilations[d];
    y.push_back(c.transpose ? (in - 1) * s - 2 * p + dil * (k - 1) + 1 : (in + 2 * p - dil * (k - 1) - 1) / s + 1);
  }
  return y;
}

/// Direct N-d convolution. For the transpose every input element scatters into the output.
void reference(const ConvCase &c, const std::vector<int64_t> &yShape, const std::vector<float> &x,
               const std::vector<float> &w, const std::vector<float> &bias, std::vector<double> &y,
               std::vector<double> &mag) {
  size_t spatial = c.x.size() - 2;
  y.assign(static_cast<size_t>(product(yShape)), 0.0);
  mag.assign(y.size(), 0.0);
  std::vector<int64_t> xs = stridesOf(c.x), ys = stridesOf(yShape), ws = stridesOf(c.w);
  // "small" is the side with the kernel's input channels for the forward direction.
  const std::vector<int64_t> &in = c.transpose ? yShape : c.x;   // forward input (cuDNN's x)
  const std::vector<int64_t> &out = c.transpose ? c.x : yShape;  // forward output
  const std::vector<int64_t> &inS = c.transpose ? ys : xs, &outS = c.transpose ? xs : ys;
  int64_t K = c.w[0], Cg = c.w[1], Kg = K / c.groups;
  std::vector<int64_t> kernel(c.w.begin() + 2, c.w.end()), outSpatial(out.begin() + 2, out.end());
  int64_t kernelCount = product(kernel), outCount = product(outSpatial);
  for (int64_t n = 0; n < in[0]; ++n)
    for (int64_t k = 0; k < K; ++k) {
      int64_t g = k / Kg;
      for (int64_t o = 0; o < outCount; ++o) {
        std::vector<int64_t> oi(spatial);
        for (int64_t r = o, d = static_cast<int64_t>(spatial) - 1; d >= 0; --d) {
          oi[d] = r % outSpatial[d];
          r /= outSpatial[d];
        }
        int64_t outOff = n * outS[0] + k * outS[1];
        for (size_t d = 0; d < spatial; ++d)
          outOff += oi[d] * outS[2 + d];
        for (int64_t ci = 0; ci < Cg; ++ci) {
          int64_t cin = g * Cg + ci;
          for (int64_t t = 0; t < kernelCount; ++t) {
            int64_t inOff = n * inS[0] + cin * inS[1], wOff = k * ws[0] + ci * ws[1];
            bool inside = true;
            for (int64_t r = t, d = static_cast<int64_t>(spatial) - 1; d >= 0; --d) {
              int64_t kd = r % kernel[d];
              r /= kernel[d];
              int64_t pos = oi[d] * c.strides[d] - c.pads[d] + kd * c.dilations[d];
              if (pos < 0 || pos >= in[2 + d])
                inside = false;
              inOff += pos * inS[2 + d];
              wOff += kd * ws[2 + d];
            }
            if (!inside)
              continue;
            if (!c.transpose) {
              double v = static_cast<double>(x[inOff]) * w[wOff];
              y[outOff] += v;
              mag[outOff] += std::fabs(v);
            } else { // y (the forward input) += x (forward output) * w
              double v = static_cast<double>(x[outOff]) * w[wOff];
              y[inOff] += v;
              mag[inOff] += std::fabs(v);
            }
          }
        }
      }
    }
  int64_t channels = yShape[1], perChannel = product(std::vector<int64_t>(yShape.begin() + 2, yShape.end()));
  for (size_t i = 0; i < y.size(); ++i) {
    int64_t ch = (static_cast<int64_t>(i) / perChannel) % channels;
    if (c.bias) {
      y[i] += bias[ch];
      mag[i] += std::fabs(bias[ch]);
    }
    if (c.relu)
      y[i] = std::max(y[i], 0.0);
  }
}

class ConvStepTest : public GpuTest, public ::testing::WithParamInterface<ConvCase> {};

TEST_P(ConvStepTest, MatchesCpuReference) {
  const ConvCase &c = GetParam();
  std::vector<int64_t> yShape = outputShape(c);
  std::vector<float> x = randomVector(static_cast<size_t>(product(c.x)), 10);
  std::vector<float> w = randomVector(static_cast<size_t>(product(c.w)), 11);
  std::vector<float> bias = randomVector(static_cast<size_t>(yShape[1]), 12);

  PlanBuilder b = builder(c.name);
  plan::ConvStep s;
  s.math = c.math;
  s.transpose = c.transpose;
  s.xShape = c.x;
  s.wShape = c.w;
  s.yShape = yShape;
  s.pads = c.pads;
  s.strides = c.strides;
  s.dilations = c.dilations;
  s.groups = c.groups;
  s.activation = c.relu ? plan::Activation::Relu : plan::Activation::None;
  s.x = b.input("x", c.x);
  s.w = b.weights("w", w, c.w);
  s.y = b.output("y", yShape);
  if (c.bias)
    s.bias = b.weights("bias", bias);
  b.step("conv", c.transpose ? "kiln.conv_transpose" : "kiln.conv", s);
  auto engine = load(b.build());
  ASSERT_NE(engine, nullptr);
  EXPECT_EQ(engine->tuningStats().tuned, 1u);
  auto ctx = context(*engine);
  ASSERT_NE(ctx, nullptr);
  ASSERT_TRUE(ctx->poison(0xFF).isOk()); // every output element must be written
  std::vector<float> y = runOnce(*ctx, *engine, {x})[0];

  std::vector<double> want, mag;
  reference(c, yShape, x, w, bias, want, mag);
  // fp32 may pick Winograd or FFT (fp32 arithmetic in a transformed domain): a few ulps of the
  // sum's magnitude, so 1e-5 relative to it; TF32 keeps 10 mantissa bits.
  expectClose(y, want, mag, c.math == plan::MathMode::TF32 ? 1e-2 : 1e-5, c.name);

  // Without a graph: the same numbers (some backward-data algorithms accumulate with atomics,
  // so only up to rounding).
  auto plain = context(*engine, false);
  ASSERT_NE(plain, nullptr);
  std::vector<float> y2 = runOnce(*plain, *engine, {x})[0];
  std::vector<double> y1(y.begin(), y.end());
  expectClose(y2, y1, mag, 1e-6, c.name + " without graph");
}

using M = plan::MathMode;
INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvStepTest,
    ::testing::Values(
        ConvCase{"plain_3x3", {2, 3, 9, 11}, {4, 3, 3, 3}, {0, 0}, {1, 1}, {1, 1}},
        ConvCase{"pads_strides", {1, 5, 17, 13}, {8, 5, 3, 5}, {1, 2}, {2, 3}, {1, 1}},
        ConvCase{"dilation", {1, 4, 15, 15}, {6, 4, 3, 3}, {2, 2}, {1, 1}, {2, 3}},
        ConvCase{"groups2_bias_relu", {2, 6, 10, 10}, {8, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 2, false, true, true},
        ConvCase{"depthwise", {1, 8, 12, 12}, {8, 1, 3, 3}, {1, 1}, {2, 2}, {1, 1}, 8},
        ConvCase{"pointwise_tf32_bias", {4, 32, 14, 14}, {64, 32, 1, 1}, {0, 0}, {1, 1}, {1, 1}, 1, false, true, false,
                 M::TF32},
        ConvCase{"conv1d_bias_relu", {2, 4, 33}, {5, 4, 5}, {2}, {2}, {1}, 1, false, true, true},
        ConvCase{"conv1d_dilated_groups", {1, 6, 40}, {9, 2, 3}, {3}, {1}, {3}, 3},
        ConvCase{"conv3d", {1, 2, 6, 7, 8}, {3, 2, 3, 3, 3}, {1, 1, 1}, {1, 2, 1}, {1, 1, 1}, 1, false, true, false},
        ConvCase{"transpose_stride2", {1, 4, 5, 6}, {4, 3, 3, 3}, {1, 1}, {2, 2}, {1, 1}, 1, true},
        ConvCase{"transpose_groups_bias_relu", {2, 6, 7, 7}, {6, 2, 4, 4}, {1, 1}, {2, 2}, {1, 1}, 3, true, true, true},
        ConvCase{"transpose_1d", {1, 3, 9}, {3, 5, 4}, {1}, {3}, {1}, 1, true},
        ConvCase{"transpose_tf32", {1, 16, 8, 8}, {16, 8, 2, 2}, {0, 0}, {2, 2}, {1, 1}, 1, true, false, false, M::TF32}),
    [](const ::testing::TestParamInfo<ConvCase> &info) { return info.param.name; });

} // namespace
} // namespace kiln::gpu_test
