//===- PointwiseConvInt8Test.cpp - the INT8 1x1 convolution kernel ------------===//
//
// Which ConvSteps the generated INT8 1x1 kernel takes, and that its source compiles with NVRTC
// for ResNet's shapes: parameters, launch geometry and shared memory as the plan needs them.
// That it computes what cuDNN and the interpreter do is tests/gpu/check_conv_kernels.py's.
//
//===----------------------------------------------------------------------===//

#include "codegen/kernels/Nvrtc.h"
#include "codegen/kernels/PointwiseConvInt8.h"

#include <gtest/gtest.h>

namespace kiln::codegen {
namespace {

/// A plan with ResNet layer1's expanding conv (64 -> 256 at 56x56, b2): int8 x, w, residual and
/// y, a bf16 bias, f32 scales, ReLU.
struct Layer1Conv {
  plan::Plan plan;
  plan::ConvStep step;

  Layer1Conv() {
    auto buffer = [&](DType dtype, std::vector<int64_t> shape) {
      plan::Buffer b;
      b.dtype = dtype;
      b.shape = std::move(shape);
      plan.buffers.push_back(b);
      return static_cast<uint32_t>(plan.buffers.size() - 1);
    };
    step.channelsLast = true;
    step.xShape = {2, 64, 56, 56};
    step.wShape = {256, 64, 1, 1};
    step.yShape = {2, 256, 56, 56};
    step.pads = {0, 0};
    step.strides = {1, 1};
    step.dilations = {1, 1};
    step.activation = plan::Activation::Relu;
    step.x = buffer(DType::I8, {2, 56, 56, 64});
    step.w = buffer(DType::I8, {256, 1, 1, 64});
    step.y = buffer(DType::I8, {2, 56, 56, 256});
    step.bias = buffer(DType::BF16, {256});
    step.residual = buffer(DType::I8, {2, 56, 56, 256});
    step.scale = buffer(DType::F32, {256});
    step.yScale = buffer(DType::F32, {1});
    step.residualScale = buffer(DType::F32, {1});
  }
};

TEST(PointwiseConvInt8, TakesResNetsExpandingConvs) {
  Layer1Conv c;
  PointwiseConvInt8 conv;
  ASSERT_EQ(whyNoPointwiseConvInt8Kernel(c.plan, c.step, conv), std::nullopt);
  EXPECT_EQ(conv.pixels, 2 * 56 * 56);
  EXPECT_EQ(conv.channels, 64);
  EXPECT_EQ(conv.outputs, 256);
  EXPECT_EQ(conv.bias, DType::BF16);
  EXPECT_TRUE(conv.residual);
  EXPECT_TRUE(conv.relu);
}

TEST(PointwiseConvInt8, RefusesWhatItCannotRun) {
  auto why = [](auto change) {
    Layer1Conv c;
    change(c);
    PointwiseConvInt8 conv;
    return whyNoPointwiseConvInt8Kernel(c.plan, c.step, conv).value_or("taken");
  };
  EXPECT_EQ(why([](Layer1Conv &c) { c.step.wShape = {256, 64, 3, 3}; }),
            "not a 1x1 convolution of stride 1 without padding in one group");
  EXPECT_EQ(why([](Layer1Conv &c) { c.step.strides = {2, 2}; }),
            "not a 1x1 convolution of stride 1 without padding in one group");
  EXPECT_EQ(why([](Layer1Conv &c) { c.step.yShape[1] = 128; }), "K = 128 is not a multiple of 256");
  EXPECT_EQ(why([](Layer1Conv &c) { c.step.xShape[1] = 512; }), "C = 512 is not a multiple of 32 up to 256");
  EXPECT_EQ(why([](Layer1Conv &c) { c.plan.buffers[c.step.y].dtype = DType::BF16; }),
            "not an INT8 convolution writing int8 alone");
  EXPECT_EQ(why([](Layer1Conv &c) { c.step.yQuantized = c.step.y; }), "not an INT8 convolution writing int8 alone");
  EXPECT_EQ(why([](Layer1Conv &c) { c.plan.buffers[c.step.x].dtype = DType::F8E4M3FN; }),
            "not an INT8 convolution writing int8 alone");
  EXPECT_EQ(why([](Layer1Conv &c) { c.step.residualScale.reset(); }), "its residual is not int8 with a scale");
  EXPECT_EQ(why([](Layer1Conv &c) { c.step.activation = plan::Activation::HardSwish; }),
            "its activation is neither ReLU nor none");
  EXPECT_EQ(why([](Layer1Conv &c) { c.step.channelsLast = false; }), "not a channels-last 2-d convolution");
}

TEST(PointwiseConvInt8, CompilesForResNetsShapes) {
  struct Shape {
    PointwiseConvInt8 conv;
    size_t params;
    std::array<uint32_t, 3> grid;
    uint32_t shared;
  };
  // layer1 at b256 (50176 tiles of 64 pixels: 264 persistent blocks), layer2 with a last tile
  // of 41 pixels (K = 512: two channel slices of 132 blocks), C = 256 without bias or residual.
  std::vector<Shape> shapes = {
      {{256 * 56 * 56, 64, 256, DType::BF16, true, true}, 8, {264, 1, 1}, 256 * 80 + 2 * (64 * 80 + 64 * 272)},
      {{169, 128, 512, DType::F32, true, true}, 8, {3, 2, 1}, 256 * 144 + 2 * (64 * 144 + 64 * 272)},
      {{98, 256, 256, std::nullopt, false, false}, 5, {2, 1, 1}, 256 * 272 + 2 * (64 * 272 + 64 * 272)},
  };
  std::string source;
  std::vector<std::string> functions;
  for (size_t i = 0; i < shapes.size(); ++i) {
    auto emitted = emitPointwiseConvInt8(shapes[i].conv, EmitContext{"k" + std::to_string(i) + "_"});
    ASSERT_TRUE(emitted.isOk()) << emitted.status().toString();
    ASSERT_EQ(emitted.value().launches.size(), 1u);
    const KernelLaunch &launch = emitted.value().launches[0];
    EXPECT_EQ(launch.args.size(), shapes[i].params) << "x, w, scale, [bias], [residual, its scale], yScale, y";
    EXPECT_EQ(launch.args.back().kind, KernelArg::Kind::Result);
    EXPECT_EQ(launch.grid, shapes[i].grid);
    EXPECT_EQ(launch.block, (std::array<uint32_t, 3>{256, 1, 1}));
    EXPECT_EQ(launch.sharedBytes, shapes[i].shared);
    EXPECT_LE(launch.sharedBytes, 227u * 1024) << "an sm_90 block's shared memory";
    EXPECT_EQ(emitted.value().source.find("@"), std::string::npos) << "a placeholder left unfilled";
    source += emitted.value().source;
    functions.push_back(launch.function);
  }
  auto program = compileWithNvrtc(programPrelude() + source, "pointwise_conv_int8.cu");
  ASSERT_TRUE(program.isOk()) << program.status().toString();
  for (const std::string &fn : functions)
    EXPECT_NE(program.value().ptx.find(".entry " + fn + "("), std::string::npos) << fn;
}

TEST(PointwiseConvInt8, RefusesShapesOutsideItsTiles) {
  EXPECT_FALSE(emitPointwiseConvInt8({1024, 48, 256, std::nullopt, false, false}, EmitContext{"k0_"}).isOk());
  EXPECT_FALSE(emitPointwiseConvInt8({1024, 64, 128, std::nullopt, false, false}, EmitContext{"k0_"}).isOk());
}

} // namespace
} // namespace kiln::codegen
