//===- ConvGraph.cpp - a channels-last ConvStep as a cuDNN graph -----------===//
//
// The convolution graph's spec (see ConvGraph.h); its lifecycle is CudnnGraphRunner's.
// The plan keeps shapes channels-first (N,C,H,W; K,C/g,R,S) with channelsLast saying the
// storage is N,H,W,C and K,R,S,C/g: exactly how cuDNN takes an NHWC tensor, dims in NCHW order
// with NHWC strides. Groups follow from x's channels over w's.
//
// INT8 (int8 x and w) or FP8 (E4M3 x and w): the convolution sums in int32 (INT8) or f32 (FP8),
// each output channel's sum is multiplied by the step's `scale` (s_x * s_w[k]), the epilogue
// runs in f32 on float bias and residual, and y is 8-bit (int8 or E4M3), the value multiplied
// by `yScale` (1 / s_y) and rounded, or a float type (bench/conv8_probe.cpp measured both kinds
// of graph on ResNet-50's shapes). A float convolution may write 8 bits the same way (yScale;
// a first layer kept in bf16 feeding 8-bit convolutions). An 8-bit residual (residualScale) is
// multiplied by its scale before the add.
//
//===----------------------------------------------------------------------===//

#include "runtime/engine/ConvGraph.h"

#include "runtime/engine/CudnnFrontend.h"
#include "runtime/plan/EnumNames.h"

#include <vector>

namespace kiln::runtime {
namespace {

#if KILN_HAVE_CUDNN_FRONTEND

// Tensor uids in the graph; pointers() maps them to the step's buffers.
enum Uid : int64_t { kX = 1, kW = 2, kY = 3, kBias = 4, kResidual = 5, kScale = 6, kYScale = 7, kYQuantized = 8,
                     kResidualScale = 9 };

fe::DataType_t feType(plan::DType type) {
  switch (type) {
  case plan::DType::BF16: return fe::DataType_t::BFLOAT16;
  case plan::DType::F16: return fe::DataType_t::HALF;
  case plan::DType::I8: return fe::DataType_t::INT8;
  case plan::DType::F8E4M3FN: return fe::DataType_t::FP8_E4M3;
  default: return fe::DataType_t::FLOAT;
  }
}

/// Strides of a dense NHWC tensor whose dims are given in NCHW order.
std::vector<int64_t> channelsLastStrides(const std::vector<int64_t> &nchw) {
  int64_t c = nchw[1], h = nchw[2], w = nchw[3];
  return {h * w * c, 1, w * c, c};
}

std::string list(const std::vector<int64_t> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? "," : "") + std::to_string(values[i]);
  return s + "]";
}

class ConvGraphSpec final : public CudnnGraphSpec {
public:
  ConvGraphSpec(const plan::Plan &plan, const plan::ConvStep &step) : plan_(plan), step_(step) {}

  const char *kind() const override { return "conv"; }
  const char *what() const override { return "conv"; }

  std::string problemKey() const override {
    const plan::ConvStep &s = step_;
    std::string k = "type=" + operandTypeName(plan_, s.x) + " nhwc x=" + list(s.xShape) + " w=" + list(s.wShape) +
                    " y=" + list(s.yShape) + " pads=" + list(s.pads) + " strides=" + list(s.strides) +
                    " dilations=" + list(s.dilations) + " bias=" + (s.bias ? "1" : "0") +
                    " residual=" + (s.residual ? "1" : "0") +
                    " act=" + std::string(plan::detail::enumName(s.activation).value_or("?"));
    if (s.activation == plan::Activation::Clip || s.activation == plan::Activation::HardSigmoid)
      k += "(" + std::to_string(s.activationAlpha) + "," + std::to_string(s.activationBeta) + ")";
    if (plan_.buffers[s.x].dtype == plan::DType::F32)
      k += s.math == plan::MathMode::StrictF32 ? " math=strict" : " math=tf32";
    if (eightBit()) {
      k += " y=" + operandTypeName(plan_, s.y) + (s.yQuantized ? "+i8" : "");
      for (auto [name, buffer] : {std::pair<const char *, std::optional<uint32_t>>{"bias", s.bias},
                                  {"residual", s.residual}})
        if (buffer)
          k += std::string(" ") + name + "=" + operandTypeName(plan_, *buffer);
    }
    return k;
  }

  Status define(fe::graph::Graph &g) const override {
    const plan::ConvStep &s = step_;
    auto typeOf = [&](uint32_t buffer) { return feType(plan_.buffers[buffer].dtype); };
    fe::DataType_t io = typeOf(s.x);
    g.set_io_data_type(io)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    auto tensor = [&](const char *name, Uid uid, const std::vector<int64_t> &dims, fe::DataType_t type) {
      return g.tensor(fe::graph::Tensor_attributes()
                          .set_name(name)
                          .set_uid(uid)
                          .set_dim(dims)
                          .set_stride(channelsLastStrides(dims))
                          .set_data_type(type));
    };
    auto x = tensor("x", kX, s.xShape, io);
    auto w = tensor("w", kW, s.wShape, typeOf(s.w));
    auto y = g.conv_fprop(x, w,
                          fe::graph::Conv_fprop_attributes()
                              .set_name("conv")
                              .set_padding(s.pads)
                              .set_stride(s.strides)
                              .set_dilation(s.dilations)
                              .set_compute_data_type(int8() ? fe::DataType_t::INT32 : fe::DataType_t::FLOAT));
    auto pointwise = [&](std::shared_ptr<fe::graph::Tensor_attributes> a, fe::PointwiseMode_t mode,
                         std::shared_ptr<fe::graph::Tensor_attributes> b = nullptr) {
      auto options = fe::graph::Pointwise_attributes().set_mode(mode).set_compute_data_type(fe::DataType_t::FLOAT);
      return b ? g.pointwise(a, b, options) : g.pointwise(a, options);
    };
    auto scalar = [&](float value) { return g.tensor(value, fe::graph::ScalarType::RUNTIME_PARAM); };
    auto clamp = [&](std::shared_ptr<fe::graph::Tensor_attributes> a, float lo, float hi) {
      return g.pointwise(a, fe::graph::Pointwise_attributes()
                                .set_mode(fe::PointwiseMode_t::RELU_FWD)
                                .set_relu_lower_clip(lo)
                                .set_relu_upper_clip(hi)
                                .set_compute_data_type(fe::DataType_t::FLOAT));
    };
    // INT8 sums are int32 and FP8 ones f32; either is scaled per output channel.
    if (int8())
      y->set_data_type(fe::DataType_t::INT32);
    if (quantized())
      y = pointwise(y, fe::PointwiseMode_t::MUL, tensor("scale", kScale, {1, s.yShape[1], 1, 1}, fe::DataType_t::FLOAT));
    if (s.bias)
      y = pointwise(y, fe::PointwiseMode_t::ADD, tensor("bias", kBias, {1, s.yShape[1], 1, 1}, typeOf(*s.bias)));
    if (s.residual) {
      auto residual = tensor("residual", kResidual, s.yShape, typeOf(*s.residual));
      // An 8-bit residual: its values times its scale, in f32.
      if (s.residualScale)
        residual = pointwise(residual, fe::PointwiseMode_t::MUL,
                             tensor("residual_scale", kResidualScale, {1, 1, 1, 1}, fe::DataType_t::FLOAT));
      y = pointwise(y, fe::PointwiseMode_t::ADD, residual);
    }
    switch (s.activation) {
    case plan::Activation::None: break;
    case plan::Activation::Relu: y = pointwise(y, fe::PointwiseMode_t::RELU_FWD); break;
    case plan::Activation::Clip: y = clamp(y, s.activationAlpha, s.activationBeta); break;
    case plan::Activation::Sigmoid: y = pointwise(y, fe::PointwiseMode_t::SIGMOID_FWD); break;
    case plan::Activation::HardSigmoid: {
      auto t = pointwise(y, fe::PointwiseMode_t::MUL, scalar(s.activationAlpha));
      t = pointwise(t, fe::PointwiseMode_t::ADD, scalar(s.activationBeta));
      y = clamp(t, 0.0f, 1.0f);
      break;
    }
    case plan::Activation::HardSwish: {
      // x * max(0, min(1, x / 6 + 1 / 2)), as the interpreter computes it.
      auto t = pointwise(y, fe::PointwiseMode_t::MUL, scalar(1.0f / 6.0f));
      t = pointwise(t, fe::PointwiseMode_t::ADD, scalar(0.5f));
      t = clamp(t, 0.0f, 1.0f);
      y = pointwise(y, fe::PointwiseMode_t::MUL, t);
      break;
    }
    case plan::Activation::Gelu:
      return Status(StatusCode::kInvalidPlan, "a convolution with a gelu epilogue"); // validatePlan refuses it
    }
    auto output = [&](std::shared_ptr<fe::graph::Tensor_attributes> t, Uid uid, uint32_t buffer) {
      t->set_output(true).set_uid(uid).set_dim(s.yShape).set_stride(channelsLastStrides(s.yShape)).set_data_type(
          typeOf(buffer));
    };
    // With yQuantized, both outputs: the float value (through an identity, so the graph has two
    // output tensors) and its quantization.
    if (s.yQuantized)
      output(pointwise(y, fe::PointwiseMode_t::IDENTITY), kY, s.y);
    if (s.yScale)
      y = pointwise(y, fe::PointwiseMode_t::MUL, tensor("y_scale", kYScale, {1, 1, 1, 1}, fe::DataType_t::FLOAT));
    // E4M3 saturates at +-448 as the interpreter's quantize does (saturate), stated in the graph
    // rather than left to how cuDNN converts a value beyond E4M3's range (E4M3FN has no
    // infinity; an unsaturated conversion gives NaN).
    plan::DType written = plan_.buffers[s.yQuantized ? *s.yQuantized : s.y].dtype;
    if (s.yScale && written == plan::DType::F8E4M3FN)
      y = clamp(y, -448.0f, 448.0f);
    if (s.yQuantized)
      output(y, kYQuantized, *s.yQuantized);
    else
      output(y, kY, s.y);
    return Status::ok();
  }

  void filterEngines(fe::graph::Graph &g) const override {
    // IEEE fp32 where the plan says so: no TF32 tensor cores, no transform-domain algorithms.
    if (plan_.buffers[step_.x].dtype == plan::DType::F32 && step_.math == plan::MathMode::StrictF32)
      g.deselect_numeric_notes({fe::NumericalNote_t::TENSOR_CORE, fe::NumericalNote_t::DOWN_CONVERT_INPUTS,
                                fe::NumericalNote_t::FFT, fe::NumericalNote_t::WINOGRAD,
                                fe::NumericalNote_t::WINOGRAD_TILE_4x4, fe::NumericalNote_t::WINOGRAD_TILE_6x6,
                                fe::NumericalNote_t::WINOGRAD_TILE_13x13});
  }

  std::unordered_map<int64_t, void *> pointers(const DeviceResources &res) const override {
    const plan::ConvStep &s = step_;
    std::unordered_map<int64_t, void *> pack = {{kX, bufferAddress(plan_, s.x, res)},
                                                {kW, bufferAddress(plan_, s.w, res)},
                                                {kY, bufferAddress(plan_, s.y, res)}};
    if (s.bias)
      pack[kBias] = bufferAddress(plan_, *s.bias, res);
    if (s.residual)
      pack[kResidual] = bufferAddress(plan_, *s.residual, res);
    if (s.scale)
      pack[kScale] = bufferAddress(plan_, *s.scale, res);
    if (s.yScale)
      pack[kYScale] = bufferAddress(plan_, *s.yScale, res);
    if (s.yQuantized)
      pack[kYQuantized] = bufferAddress(plan_, *s.yQuantized, res);
    if (s.residualScale)
      pack[kResidualScale] = bufferAddress(plan_, *s.residualScale, res);
    return pack;
  }

  std::string remedy() const override {
    return eightBit() ? "compile the model with --precision bf16 (this 8-bit convolution has no cuDNN engine here)"
                      : "compile the model with --layout nchw";
  }

private:
  bool int8() const { return plan_.buffers[step_.x].dtype == plan::DType::I8; }
  /// An INT8 or FP8 convolution: 8-bit x and w, their sums scaled per output channel.
  bool quantized() const { return plan::isQuantizedConvType(plan_.buffers[step_.x].dtype); }
  /// Whether the graph reads or writes 8 bits: an 8-bit convolution, or a float one with an
  /// 8-bit output or residual.
  bool eightBit() const { return quantized() || step_.yScale || step_.residualScale; }

  const plan::Plan &plan_;
  plan::ConvStep step_;
};

#endif // KILN_HAVE_CUDNN_FRONTEND

} // namespace

StatusOr<std::unique_ptr<CudnnGraphRunner>> ConvGraph::create(const plan::Plan &plan, const plan::ConvStep &s,
                                                              std::string label) {
#if !KILN_HAVE_CUDNN_FRONTEND
  (void)plan;
  (void)s;
  return Status(StatusCode::kIncompatible,
                label + ": this runtime was built without the cuDNN frontend, which channels-last convolutions need; "
                        "install its headers with scripts/install-cudnn-frontend.sh (scripts/setup-deps.sh does) and "
                        "rebuild the runtime, or compile the model with --layout nchw");
#else
  std::vector<uint32_t> used = {s.x, s.w, s.y};
  for (const std::optional<uint32_t> &buffer : {s.bias, s.residual, s.scale, s.yScale, s.yQuantized, s.residualScale})
    if (buffer)
      used.push_back(*buffer);
  for (uint32_t idx : used)
    if (idx >= plan.buffers.size())
      return Status(StatusCode::kInvalidPlan, label + ": the convolution names buffer " + std::to_string(idx) +
                                                  " but the plan has " + std::to_string(plan.buffers.size()));
  if (!s.channelsLast || s.transpose || s.xShape.size() != 4 || s.wShape.size() != 4 || s.yShape.size() != 4)
    return Status(StatusCode::kInvalidPlan, label + ": cuDNN graphs run channels-last 2-d forward convolutions only");
  // validatePlan checked the types (PlanValidate.cpp): one float type, or INT8 or FP8 with its
  // scales; either may write 8 bits (yScale).
  plan::DType type = plan.buffers[s.x].dtype;
  if (type != plan::DType::F32 && type != plan::DType::F16 && type != plan::DType::BF16 &&
      !plan::isQuantizedConvType(type))
    return Status(StatusCode::kInvalidPlan, label + ": cuDNN convolutions take f32, f16, bf16, int8 or f8e4m3fn");
  if (plan::isQuantizedConvType(type) && !s.scale)
    return Status(StatusCode::kInvalidPlan, label + ": an 8-bit convolution without its scale");
  return std::make_unique<CudnnGraphRunner>(std::make_unique<ConvGraphSpec>(plan, s), label);
#endif
}

} // namespace kiln::runtime
