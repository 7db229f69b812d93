//===- ConvProblem.h - a plan ConvStep as cuDNN calls ----------*- C++ -*-===//
//
// Uses cuDNN's legacy (descriptor) API, always through the Nd descriptors:
// - 1-d convolutions are lifted to 2-d (a trailing spatial dim of 1, pad 0, stride 1);
//   2-d and 3-d map directly (cuDNN needs 4-d or 5-d tensors).
// - forward: cudnnConvolutionForward, then bias with cudnnAddTensor and relu with
//   cudnnActivationForward in place (works with every algorithm, unlike the fused call).
// - transpose: cudnnConvolutionBackwardData. ONNX's ConvTranspose weight C_in x C_out/groups x k
//   is exactly cuDNN's filter K x C/groups of the forward convolution from y to x, so the plan's
//   x is cuDNN's dy and the plan's y is cuDNN's dx.
// Math: the operands' element type is their buffers' (one type for x, w, y and bias); f16 and
// bf16 always run CUDNN_TENSOR_OP_MATH with fp32 accumulation, and MathMode only chooses for
// f32 operands. StrictF32 sets CUDNN_FMA_MATH (no tensor cores, no TF32), accepts only algorithms
// that cuDNN runs under that math type, and leaves out FFT/Winograd (transform-domain rounding
// is not the direct fp32 sum the reference interpreter computes); TF32 sets CUDNN_TENSOR_OP_MATH, which in cuDNN 8/9 allows TF32 tensor
// cores for fp32 data (TENSOR_OP_MATH_ALLOW_CONVERSION would additionally allow converting to
// fp16, which we never want), and runs the algorithm with the math type the search reported.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_CONVPROBLEM_H
#define KILN_RUNTIME_ENGINE_CONVPROBLEM_H

#include "runtime/engine/CudaHandles.h"
#include "runtime/engine/StepExecutor.h"

#include <vector>

namespace kiln::runtime {

class ConvProblem {
public:
  /// Checks the step (operand types, ranks, channel counts, the output shape cuDNN computes) and
  /// builds the descriptors.
  static StatusOr<std::unique_ptr<ConvProblem>> create(const plan::Plan &plan, const plan::ConvStep &step,
                                                       std::string label);
  ~ConvProblem();
  ConvProblem(const ConvProblem &) = delete;
  ConvProblem &operator=(const ConvProblem &) = delete;

  /// Shapes, pads, strides, dilations, groups, types, direction and the workspace limit.
  std::string key(uint64_t workspaceLimit) const;

  /// cudnnFind...AlgorithmEx on res (workspace at least workspaceLimit); the fastest valid
  /// result that fits, ties to the lower algorithm number.
  StatusOr<TunedAlgorithm> tune(const DeviceResources &res, uint64_t workspaceLimit);
  /// Whether a cached choice is usable here; returns its workspace size.
  StatusOr<uint64_t> check(const DeviceResources &res, const TunedAlgorithm &algo);
  /// The convolution (+ bias, + relu) with `algo` on res.stream.
  Status enqueue(const DeviceResources &res, const TunedAlgorithm &algo);

private:
  ConvProblem() = default;
  Status setMath(int mathType);

  const plan::Plan *plan_ = nullptr;
  plan::ConvStep step_;
  bool strict_ = false; // f32 operands under MathMode::StrictF32: FMA only, never TF32
  std::string label_;
  std::vector<int> xDims_, wDims_, yDims_, pads_, strides_, dilations_; // lifted to >= 2 spatial dims
  cudnnTensorDescriptor_t xDesc_ = nullptr, yDesc_ = nullptr, biasDesc_ = nullptr;
  cudnnFilterDescriptor_t wDesc_ = nullptr;
  cudnnConvolutionDescriptor_t convDesc_ = nullptr;
  cudnnActivationDescriptor_t reluDesc_ = nullptr;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_CONVPROBLEM_H
