//===- StepExecutor.h - one plan step, ready to enqueue --------*- C++ -*-===//
//
// Each execution context turns every plan step into a StepExecutor once (descriptors built,
// pointers resolved against its own arena) and then only calls enqueue: eagerly for a run
// without a CUDA graph, or once inside stream capture for the graph. Executors belong to one
// context and are used by one thread at a time, so they may keep mutable library descriptors.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_STEPEXECUTOR_H
#define KILN_RUNTIME_ENGINE_STEPEXECUTOR_H

#include "runtime/Status.h"
#include "runtime/engine/TimingCache.h"
#include "runtime/plan/Plan.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kiln::runtime {

class CudnnGraphCache;
class CudnnPlanStore;

/// The device resources one context (or the tuner at engine load) runs steps with.
struct DeviceResources {
  cudaStream_t stream = nullptr;
  cudnnHandle_t cudnn = nullptr;
  cublasLtHandle_t cublasLt = nullptr;
  uint8_t *arena = nullptr;         // the context's activation arena (metadata.arenaBytes)
  const uint8_t *weights = nullptr; // the engine's weights (read-only)
  void *workspace = nullptr;
  uint64_t workspaceBytes = 0;
  // The context's built cuDNN frontend graphs (attention, channels-last convolutions), shared
  // by its steps with one graph; null: each such step builds its own.
  CudnnGraphCache *cudnnGraphs = nullptr;
  // Serialized cuDNN plans of this runtime (memory and files), loaded instead of building a
  // graph's plan again; null: every graph is built.
  CudnnPlanStore *cudnnPlans = nullptr;
};

/// "step 3 'conv1' (kiln.conv)": how every message names a step.
std::string stepLabel(const plan::Step &step, size_t index);

/// The element type of an operand's buffer ("bf16"), "-" for an absent optional operand.
std::string operandTypeName(const plan::Plan &plan, std::optional<uint32_t> buffer);

/// Device address of a buffer: arena or weights base plus its offset.
void *bufferAddress(const plan::Plan &plan, uint32_t buffer, const DeviceResources &res);

class StepExecutor {
public:
  virtual ~StepExecutor() = default;
  /// Puts the step's work on res.stream; never synchronizes (it may be under stream capture).
  virtual Status enqueue(const DeviceResources &res) = 0;
};

/// Builds the executor of plan.steps[index]. `kernel` is the loaded function of a KernelStep
/// (ignored otherwise); `algorithm` is the tuned choice of a gemm/conv/attention step (required
/// there). Attention and channels-last convolution steps build their cuDNN graphs here, on res.cudnn.
StatusOr<std::unique_ptr<StepExecutor>> makeStepExecutor(const plan::Plan &plan, size_t index, cudaKernel_t kernel,
                                                         const std::optional<TunedAlgorithm> &algorithm,
                                                         const DeviceResources &res);

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_STEPEXECUTOR_H
