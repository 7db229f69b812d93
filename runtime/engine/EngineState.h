//===- EngineState.h - what Runtime and Engine hold ------------*- C++ -*-===//
//
// Internal: the pimpl states behind Runtime.h. An Engine::State is immutable once loadEngine
// returns; contexts share it (shared_ptr), which keeps the weights and kernel images alive.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_ENGINESTATE_H
#define KILN_RUNTIME_ENGINE_ENGINESTATE_H

#include "runtime/Runtime.h"
#include "runtime/engine/CudaHandles.h"
#include "runtime/engine/CudnnPlanStore.h"
#include "runtime/engine/TimingCache.h"

#include <mutex>
#include <optional>
#include <vector>

namespace kiln {

struct Runtime::State {
  RuntimeOptions options;
  plan::TargetInfo target;
  std::string deviceName;
  runtime::TimingCache cache;
  std::mutex saveMutex; // one cache file write at a time
  // Built cuDNN plans beside the timing cache (memory only without one); engines share it.
  std::shared_ptr<runtime::CudnnPlanStore> cudnnPlans;

  void progress(const std::string &message) const {
    if (options.progress)
      options.progress(message);
  }
  /// Appended to every problem key: the choice is only valid on the same GPU and libraries.
  std::string deviceKey() const;
};

struct Engine::State {
  int device = 0;
  plan::Plan plan;
  std::vector<TensorDesc> inputs, outputs;
  runtime::DeviceBuffer weights;
  std::vector<runtime::Library> libraries;         // one per plan image
  std::vector<cudaKernel_t> kernels;               // per step; null unless a KernelStep
  std::vector<std::optional<runtime::TunedAlgorithm>> algorithms; // per step; gemm/conv/attention only
  uint64_t workspaceBytes = 0;
  TuningStats stats;
  std::shared_ptr<runtime::CudnnPlanStore> cudnnPlans; // the runtime's, for the contexts' graphs
};

namespace runtime {
/// Loads every plan image (cubin when the device's CC equals the image's, PTX otherwise) and
/// resolves the function of every KernelStep. kIncompatible when neither can run.
Status loadKernels(Engine::State &engine, uint32_t deviceCC);
/// Picks an algorithm for every gemm/conv/attention step: the timing cache, else timing on the device;
/// sets engine.algorithms, engine.workspaceBytes and engine.stats, saves the cache file.
Status tuneEngine(Engine::State &engine, Runtime::State &runtime);
} // namespace runtime

} // namespace kiln

#endif // KILN_RUNTIME_ENGINE_ENGINESTATE_H
