//===- ConvProblem.cpp - a plan ConvStep as cuDNN calls --------------------===//

#include "runtime/engine/ConvProblem.h"

#include <algorithm>
#include <climits>

namespace kiln::runtime {
namespace {

std::string joinDims(const std::vector<int64_t> &dims) {
  std::string out;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      out += 'x';
    out += std::to_string(dims[i]);
  }
  return out;
}

int64_t product(const std::vector<int64_t> &dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// cuDNN's name for a plan element type; nullopt for the types no cuDNN step takes.
std::optional<cudnnDataType_t> cudnnTypeOf(plan::DType type) {
  switch (type) {
  case plan::DType::F32: return CUDNN_DATA_FLOAT;
  case plan::DType::F16: return CUDNN_DATA_HALF;
  case plan::DType::BF16: return CUDNN_DATA_BFLOAT16;
  default: return std::nullopt;
  }
}

/// "x=f16 w=f16 y=f16 bias=-": every operand's type, read from its buffer (part of the
/// timing-cache key).
std::string operandTypes(const plan::Plan &plan, const plan::ConvStep &s) {
  return "x=" + operandTypeName(plan, s.x) + " w=" + operandTypeName(plan, s.w) + " y=" + operandTypeName(plan, s.y) +
         " bias=" + operandTypeName(plan, s.bias);
}

std::vector<int> packedStrides(const std::vector<int> &dims) {
  std::vector<int> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * dims[i];
  return strides;
}

} // namespace

ConvProblem::~ConvProblem() {
  if (xDesc_)
    (void)cudnnDestroyTensorDescriptor(xDesc_);
  if (yDesc_)
    (void)cudnnDestroyTensorDescriptor(yDesc_);
  if (biasDesc_)
    (void)cudnnDestroyTensorDescriptor(biasDesc_);
  if (wDesc_)
    (void)cudnnDestroyFilterDescriptor(wDesc_);
  if (convDesc_)
    (void)cudnnDestroyConvolutionDescriptor(convDesc_);
  if (reluDesc_)
    (void)cudnnDestroyActivationDescriptor(reluDesc_);
}

StatusOr<std::unique_ptr<ConvProblem>> ConvProblem::create(const plan::Plan &plan, const plan::ConvStep &s,
                                                           std::string label) {
  auto bad = [&](const std::string &msg) { return Status(StatusCode::kInvalidPlan, label + ": " + msg); };
  size_t rank = s.xShape.size();
  if (rank < 3 || rank > 5 || s.wShape.size() != rank || s.yShape.size() != rank)
    return bad("conv shapes x=" + joinDims(s.xShape) + " w=" + joinDims(s.wShape) + " y=" + joinDims(s.yShape) +
               " must all have rank 3, 4 or 5 (1-d to 3-d convolution)");
  size_t spatial = rank - 2;
  if (s.pads.size() != spatial || s.strides.size() != spatial || s.dilations.size() != spatial)
    return bad("conv needs " + std::to_string(spatial) + " pads, strides and dilations (one per spatial dim)");
  for (const auto *dims : {&s.xShape, &s.wShape, &s.yShape})
    for (int64_t d : *dims)
      if (d < 1 || d > INT_MAX)
        return bad("conv dimension " + std::to_string(d) + " is out of range (1.." + std::to_string(INT_MAX) + ")");
  for (size_t i = 0; i < spatial; ++i)
    if (s.pads[i] < 0 || s.strides[i] < 1 || s.dilations[i] < 1 || s.pads[i] > INT_MAX || s.strides[i] > INT_MAX ||
        s.dilations[i] > INT_MAX)
      return bad("conv pads must be >= 0, strides and dilations >= 1");
  int64_t g = s.groups;
  if (g < 1)
    return bad("conv groups must be >= 1, got " + std::to_string(g));
  int64_t outChannels = s.yShape[1];
  if (s.xShape[0] != s.yShape[0])
    return bad("conv batch sizes of x (" + std::to_string(s.xShape[0]) + ") and y (" + std::to_string(s.yShape[0]) +
               ") differ");
  if (!s.transpose) {
    if (s.xShape[1] != s.wShape[1] * g || s.wShape[0] != outChannels || outChannels % g != 0)
      return bad("conv channels do not match: x=" + joinDims(s.xShape) + " w=" + joinDims(s.wShape) +
                 " y=" + joinDims(s.yShape) + " groups=" + std::to_string(g) + " (need x C = w C * groups, y C = w K)");
  } else {
    if (s.xShape[1] != s.wShape[0] || outChannels != s.wShape[1] * g || s.wShape[0] % g != 0)
      return bad("conv-transpose channels do not match: x=" + joinDims(s.xShape) + " w=" + joinDims(s.wShape) +
                 " y=" + joinDims(s.yShape) + " groups=" + std::to_string(g) +
                 " (need x C = w C_in, y C = w C_out/groups * groups)");
  }
  if (s.activation != plan::Activation::None && s.activation != plan::Activation::Relu)
    return bad("conv activation gelu is not supported by the cuDNN path; codegen must emit it as a separate kernel");
  std::vector<uint32_t> used = {s.x, s.w, s.y};
  if (s.bias)
    used.push_back(*s.bias);
  for (uint32_t idx : used)
    if (idx >= plan.buffers.size())
      return bad("conv names buffer " + std::to_string(idx) + " but the plan has " + std::to_string(plan.buffers.size()));
  if (plan.buffers[s.y].space != plan::MemorySpace::Arena)
    return bad("conv output '" + plan.buffers[s.y].name + "' is in the read-only weights");
  // One element type for x, w, y and bias (validatePlan's rule, re-checked because it decides
  // how many bytes cuDNN touches).
  plan::DType dtype = plan.buffers[s.x].dtype;
  std::optional<cudnnDataType_t> type = cudnnTypeOf(dtype);
  bool shared = true;
  for (uint32_t idx : used)
    shared &= plan.buffers[idx].dtype == dtype;
  if (!type || !shared)
    return bad("conv operand types " + operandTypes(plan, s) +
               " are not supported by the runtime (one of f32, f16, bf16 for all); recompile with another precision");
  uint64_t elem = plan::dtypeBytes(dtype);
  auto checkSize = [&](uint32_t idx, int64_t elements, const char *role) -> Status {
    uint64_t need = static_cast<uint64_t>(elements) * elem;
    if (plan.buffers[idx].bytes < need)
      return bad(std::string("conv ") + role + " buffer '" + plan.buffers[idx].name + "' has " +
                 std::to_string(plan.buffers[idx].bytes) + " bytes, the shape needs " + std::to_string(need));
    return Status::ok();
  };
  KILN_RETURN_IF_ERROR(checkSize(s.x, product(s.xShape), "x"));
  KILN_RETURN_IF_ERROR(checkSize(s.w, product(s.wShape), "w"));
  KILN_RETURN_IF_ERROR(checkSize(s.y, product(s.yShape), "y"));
  if (s.bias)
    KILN_RETURN_IF_ERROR(checkSize(*s.bias, outChannels, "bias"));

  auto p = std::unique_ptr<ConvProblem>(new ConvProblem());
  p->plan_ = &plan;
  p->strict_ = dtype == plan::DType::F32 && s.math == plan::MathMode::StrictF32;
  p->step_ = s;
  p->label_ = std::move(label);
  for (int64_t d : s.xShape)
    p->xDims_.push_back(static_cast<int>(d));
  for (int64_t d : s.wShape)
    p->wDims_.push_back(static_cast<int>(d));
  for (int64_t d : s.yShape)
    p->yDims_.push_back(static_cast<int>(d));
  for (size_t i = 0; i < spatial; ++i) {
    p->pads_.push_back(static_cast<int>(s.pads[i]));
    p->strides_.push_back(static_cast<int>(s.strides[i]));
    p->dilations_.push_back(static_cast<int>(s.dilations[i]));
  }
  if (spatial == 1) { // cuDNN has no 3-d tensors for convolution: add a unit spatial dim
    for (auto *dims : {&p->xDims_, &p->wDims_, &p->yDims_})
      dims->push_back(1);
    p->pads_.push_back(0);
    p->strides_.push_back(1);
    p->dilations_.push_back(1);
  }
  const std::string &what = p->label_;
  int nb = static_cast<int>(p->xDims_.size());
  auto tensor = [&](cudnnTensorDescriptor_t &desc, const std::vector<int> &dims) -> Status {
    KILN_RETURN_IF_ERROR(cudnnStatus(cudnnCreateTensorDescriptor(&desc), what + ": cudnnCreateTensorDescriptor"));
    std::vector<int> strides = packedStrides(dims);
    return cudnnStatus(cudnnSetTensorNdDescriptor(desc, *type, nb, dims.data(), strides.data()),
                       what + ": cudnnSetTensorNdDescriptor " + std::to_string(dims.size()) + "-d");
  };
  KILN_RETURN_IF_ERROR(tensor(p->xDesc_, p->xDims_));
  KILN_RETURN_IF_ERROR(tensor(p->yDesc_, p->yDims_));
  if (s.bias) {
    std::vector<int> biasDims(static_cast<size_t>(nb), 1);
    biasDims[1] = static_cast<int>(outChannels);
    KILN_RETURN_IF_ERROR(tensor(p->biasDesc_, biasDims));
  }
  KILN_RETURN_IF_ERROR(cudnnStatus(cudnnCreateFilterDescriptor(&p->wDesc_), what + ": cudnnCreateFilterDescriptor"));
  KILN_RETURN_IF_ERROR(
      cudnnStatus(cudnnSetFilterNdDescriptor(p->wDesc_, *type, CUDNN_TENSOR_NCHW, nb, p->wDims_.data()),
                  what + ": cudnnSetFilterNdDescriptor"));
  KILN_RETURN_IF_ERROR(
      cudnnStatus(cudnnCreateConvolutionDescriptor(&p->convDesc_), what + ": cudnnCreateConvolutionDescriptor"));
  // ONNX Conv is cross-correlation; accumulate in fp32 for every data type.
  KILN_RETURN_IF_ERROR(cudnnStatus(cudnnSetConvolutionNdDescriptor(p->convDesc_, nb - 2, p->pads_.data(),
                                                                   p->strides_.data(), p->dilations_.data(),
                                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                                   what + ": cudnnSetConvolutionNdDescriptor"));
  KILN_RETURN_IF_ERROR(cudnnStatus(cudnnSetConvolutionGroupCount(p->convDesc_, static_cast<int>(g)),
                                   what + ": cudnnSetConvolutionGroupCount"));
  KILN_RETURN_IF_ERROR(p->setMath(p->strict_ ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
  if (s.activation == plan::Activation::Relu) {
    KILN_RETURN_IF_ERROR(
        cudnnStatus(cudnnCreateActivationDescriptor(&p->reluDesc_), what + ": cudnnCreateActivationDescriptor"));
    KILN_RETURN_IF_ERROR(
        cudnnStatus(cudnnSetActivationDescriptor(p->reluDesc_, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0),
                    what + ": cudnnSetActivationDescriptor"));
  }

  // The output shape cuDNN derives must be the plan's: forward maps x to y, the transpose's
  // underlying forward convolution maps y to x.
  cudnnTensorDescriptor_t from = s.transpose ? p->yDesc_ : p->xDesc_;
  const std::vector<int> &expected = s.transpose ? p->xDims_ : p->yDims_;
  std::vector<int> got(static_cast<size_t>(nb));
  KILN_RETURN_IF_ERROR(cudnnStatus(cudnnGetConvolutionNdForwardOutputDim(p->convDesc_, from, p->wDesc_, nb, got.data()),
                                   what + ": cudnnGetConvolutionNdForwardOutputDim"));
  if (got != expected) {
    std::vector<int64_t> got64(got.begin(), got.end()), exp64(expected.begin(), expected.end());
    return bad(std::string(s.transpose ? "conv-transpose" : "conv") + " shapes are inconsistent: cuDNN computes " +
               joinDims(got64) + " from pads/strides/dilations, the plan says " + joinDims(exp64));
  }
  return p;
}

Status ConvProblem::setMath(int mathType) {
  return cudnnStatus(cudnnSetConvolutionMathType(convDesc_, static_cast<cudnnMathType_t>(mathType)),
                     label_ + ": cudnnSetConvolutionMathType");
}

std::string ConvProblem::key(uint64_t workspaceLimit) const {
  const plan::ConvStep &s = step_;
  std::string k = std::string(s.transpose ? "convT " : "conv ") + operandTypes(*plan_, s) +
                  (strict_ ? " math=fma" : " math=tensor-op");
  k += " x=" + joinDims(s.xShape) + " w=" + joinDims(s.wShape) + " y=" + joinDims(s.yShape);
  k += " pad=" + joinDims(s.pads) + " stride=" + joinDims(s.strides) + " dil=" + joinDims(s.dilations);
  k += " g=" + std::to_string(s.groups) + " wslimit=" + std::to_string(workspaceLimit);
  return k;
}

StatusOr<TunedAlgorithm> ConvProblem::tune(const DeviceResources &res, uint64_t workspaceLimit) {
  const plan::ConvStep &s = step_;
  const bool strict = strict_;
  KILN_RETURN_IF_ERROR(setMath(strict ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH));
  void *x = bufferAddress(*plan_, s.x, res), *w = bufferAddress(*plan_, s.w, res), *y = bufferAddress(*plan_, s.y, res);
  uint64_t limit = std::min<uint64_t>(workspaceLimit, res.workspaceBytes);

  struct Candidate {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnMathType_t math;
  };
  std::vector<Candidate> candidates;
  int returned = 0;
  if (!s.transpose) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    KILN_RETURN_IF_ERROR(cudnnStatus(cudnnFindConvolutionForwardAlgorithmEx(
                                         res.cudnn, xDesc_, x, wDesc_, w, convDesc_, yDesc_, y,
                                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf, res.workspace, limit),
                                     label_ + ": cudnnFindConvolutionForwardAlgorithmEx"));
    for (int i = 0; i < returned; ++i)
      candidates.push_back({perf[i].algo, perf[i].status, perf[i].time, perf[i].memory, perf[i].mathType});
  } else {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    KILN_RETURN_IF_ERROR(cudnnStatus(cudnnFindConvolutionBackwardDataAlgorithmEx(
                                         res.cudnn, wDesc_, w, xDesc_, x, convDesc_, yDesc_, y,
                                         CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf, res.workspace, limit),
                                     label_ + ": cudnnFindConvolutionBackwardDataAlgorithmEx"));
    for (int i = 0; i < returned; ++i)
      candidates.push_back({perf[i].algo, perf[i].status, perf[i].time, perf[i].memory, perf[i].mathType});
  }
  // Fastest first, ties to the lower algorithm number: the same timings give the same pick.
  std::vector<Candidate> eligible;
  for (const Candidate &c : candidates) {
    if (c.status != CUDNN_STATUS_SUCCESS || c.time < 0 || c.memory > limit)
      continue;
    // StrictF32 must never run TF32 tensor cores. cudnnFind may report DEFAULT_MATH for results
    // found under an FMA descriptor, so those stay candidates, but each is run with FMA_MATH
    // forced below and only kept if cuDNN accepts it that way. FFT and Winograd stay allowed:
    // they are fp32 arithmetic (what PyTorch runs with TF32 off), within ~1e-5 of a direct sum.
    if (strict && c.math != CUDNN_FMA_MATH && c.math != CUDNN_DEFAULT_MATH)
      continue;
    // TF32 allows tensor cores, never a down-conversion of fp32 data to fp16.
    if (c.math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
      continue;
    eligible.push_back(c);
  }
  std::stable_sort(eligible.begin(), eligible.end(), [](const Candidate &a, const Candidate &b) {
    return a.time < b.time || (a.time == b.time && a.algo < b.algo);
  });
  std::string lastError;
  for (const Candidate &c : eligible) {
    TunedAlgorithm algo;
    algo.kind = TunedAlgorithm::Kind::Conv;
    algo.convAlgo = c.algo;
    algo.convMath = strict ? CUDNN_FMA_MATH : c.math;
    algo.workspaceBytes = c.memory;
    if (!strict)
      return algo;
    // The workspace under forced FMA math may differ from what the search measured.
    StatusOr<uint64_t> ws = check(res, algo);
    if (!ws.isOk() || ws.value() > limit) {
      lastError = ws.isOk() ? "needs " + std::to_string(ws.value()) + " bytes of workspace" : ws.status().message();
      continue;
    }
    algo.workspaceBytes = ws.value();
    Status trial = enqueue(res, algo);
    if (trial.isOk()) {
      KILN_RETURN_IF_ERROR(cudaStatus(cudaStreamSynchronize(res.stream), label_ + ": trial run of a strict-fp32 algorithm"));
      return algo;
    }
    lastError = trial.message();
  }
  return Status(StatusCode::kDeviceError,
                label_ + ": cuDNN found no " + (strict ? "FMA (strict fp32) " : "") + "algorithm for " + key(limit) +
                    " within the workspace limit of " + std::to_string(limit) + " bytes (" + std::to_string(returned) +
                    " candidates" + (lastError.empty() ? "" : "; last error: " + lastError) +
                    "); raise RuntimeOptions::workspaceLimitBytes or compile with another precision");
}

StatusOr<uint64_t> ConvProblem::check(const DeviceResources &res, const TunedAlgorithm &algo) {
  if (algo.kind != TunedAlgorithm::Kind::Conv)
    return Status(StatusCode::kInvalidArgument, label_ + ": the cached algorithm is not a convolution algorithm");
  if (strict_ && algo.convMath != CUDNN_FMA_MATH)
    return Status(StatusCode::kInvalidArgument,
                  label_ + ": the cached algorithm is not an FMA one, as strict fp32 requires");
  KILN_RETURN_IF_ERROR(setMath(algo.convMath));
  size_t bytes = 0;
  if (!step_.transpose)
    KILN_RETURN_IF_ERROR(cudnnStatus(
        cudnnGetConvolutionForwardWorkspaceSize(res.cudnn, xDesc_, wDesc_, convDesc_, yDesc_,
                                                static_cast<cudnnConvolutionFwdAlgo_t>(algo.convAlgo), &bytes),
        label_ + ": cudnnGetConvolutionForwardWorkspaceSize of the cached algorithm"));
  else
    KILN_RETURN_IF_ERROR(cudnnStatus(
        cudnnGetConvolutionBackwardDataWorkspaceSize(res.cudnn, wDesc_, xDesc_, convDesc_, yDesc_,
                                                     static_cast<cudnnConvolutionBwdDataAlgo_t>(algo.convAlgo), &bytes),
        label_ + ": cudnnGetConvolutionBackwardDataWorkspaceSize of the cached algorithm"));
  return static_cast<uint64_t>(bytes);
}

Status ConvProblem::enqueue(const DeviceResources &res, const TunedAlgorithm &algo) {
  const plan::ConvStep &s = step_;
  if (algo.workspaceBytes > res.workspaceBytes)
    return Status(StatusCode::kInternal, label_ + ": the chosen convolution algorithm needs " +
                                             std::to_string(algo.workspaceBytes) +
                                             " bytes of workspace, the context has " + std::to_string(res.workspaceBytes));
  KILN_RETURN_IF_ERROR(setMath(algo.convMath));
  const void *x = bufferAddress(*plan_, s.x, res), *w = bufferAddress(*plan_, s.w, res);
  void *y = bufferAddress(*plan_, s.y, res);
  // Scaling factors are float for float, half and bfloat16 data.
  const float one = 1.0f, zero = 0.0f;
  if (!s.transpose)
    KILN_RETURN_IF_ERROR(cudnnStatus(cudnnConvolutionForward(res.cudnn, &one, xDesc_, x, wDesc_, w, convDesc_,
                                                             static_cast<cudnnConvolutionFwdAlgo_t>(algo.convAlgo),
                                                             res.workspace, algo.workspaceBytes, &zero, yDesc_, y),
                                     label_ + ": cudnnConvolutionForward"));
  else
    KILN_RETURN_IF_ERROR(cudnnStatus(cudnnConvolutionBackwardData(res.cudnn, &one, wDesc_, w, xDesc_, x, convDesc_,
                                                                  static_cast<cudnnConvolutionBwdDataAlgo_t>(algo.convAlgo),
                                                                  res.workspace, algo.workspaceBytes, &zero, yDesc_, y),
                                     label_ + ": cudnnConvolutionBackwardData"));
  if (s.bias)
    KILN_RETURN_IF_ERROR(cudnnStatus(
        cudnnAddTensor(res.cudnn, &one, biasDesc_, bufferAddress(*plan_, *s.bias, res), &one, yDesc_, y),
        label_ + ": cudnnAddTensor (bias)"));
  if (reluDesc_)
    KILN_RETURN_IF_ERROR(cudnnStatus(cudnnActivationForward(res.cudnn, reluDesc_, &one, yDesc_, y, &zero, yDesc_, y),
                                     label_ + ": cudnnActivationForward (relu)"));
  return Status::ok();
}

} // namespace kiln::runtime
