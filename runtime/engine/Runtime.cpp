//===- Runtime.cpp - device selection, plan loading, engines ---------------===//

#include "runtime/engine/DevicePeaks.h"
#include "runtime/engine/EngineState.h"

#include <chrono>
#include <cstdio>
#include <numeric>

namespace kiln {

using runtime::cudaStatus;

//===-- Runtime ------------------------------------------------------------===//

Runtime::Runtime(std::shared_ptr<State> state) : state_(std::move(state)) {}
Runtime::~Runtime() = default;

const plan::TargetInfo &Runtime::target() const { return state_->target; }
const std::string &Runtime::deviceName() const { return state_->deviceName; }
StatusOr<DevicePeaks> Runtime::devicePeaks() const {
  auto facts = runtime::queryDeviceFacts(state_->options.deviceOrdinal);
  if (!facts.isOk())
    return facts.status();
  return runtime::peaksFor(facts.value());
}

StatusOr<std::unique_ptr<Runtime>> Runtime::create(const RuntimeOptions &options) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0)
    return Status(StatusCode::kDeviceError,
                  std::string("no usable CUDA device: ") +
                      (err != cudaSuccess ? std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")"
                                          : "cudaGetDeviceCount reports 0 devices") +
                      "; check the driver (nvidia-smi) and CUDA_VISIBLE_DEVICES");
  if (options.deviceOrdinal < 0 || options.deviceOrdinal >= count)
    return Status(StatusCode::kInvalidArgument, "device ordinal " + std::to_string(options.deviceOrdinal) +
                                                    " does not exist; this machine has " + std::to_string(count) +
                                                    " CUDA device(s), 0.." + std::to_string(count - 1));
  auto state = std::make_shared<State>();
  state->options = options;
  int device = options.deviceOrdinal;
  KILN_RETURN_IF_ERROR(cudaStatus(cudaSetDevice(device), "selecting CUDA device " + std::to_string(device)));
  cudaDeviceProp prop{};
  KILN_RETURN_IF_ERROR(cudaStatus(cudaGetDeviceProperties(&prop, device), "reading the properties of device " +
                                                                              std::to_string(device)));
  int driver = 0;
  KILN_RETURN_IF_ERROR(cudaStatus(cudaDriverGetVersion(&driver), "reading the CUDA driver version"));
  state->deviceName = prop.name;
  state->target.computeCapability = static_cast<uint32_t>(prop.major * 10 + prop.minor);
  state->target.cudaDriverVersion = static_cast<uint32_t>(driver);
  state->target.cudnnVersion = static_cast<uint32_t>(cudnnGetVersion());
  state->target.cublasLtVersion = static_cast<uint32_t>(cublasLtGetVersion());
  if (!options.timingCachePath.empty())
    state->cache.load(options.timingCachePath, [&](const std::string &msg) { state->progress("warning: " + msg); });
  // The store outlives no runtime state it reports through: the progress callback is copied.
  state->cudnnPlans = std::make_shared<runtime::CudnnPlanStore>(
      runtime::CudnnPlanStore::directoryFor(options.timingCachePath), state->deviceKey(),
      [progress = options.progress](const std::string &msg) {
        if (progress)
          progress("warning: " + msg);
      });
  return std::unique_ptr<Runtime>(new Runtime(std::move(state)));
}

StatusOr<std::unique_ptr<Engine>> Runtime::loadEngine(const std::string &path) {
  StatusOr<plan::Plan> plan = plan::readPlanFile(path);
  if (!plan.isOk())
    return plan.status();
  return loadEngine(std::move(plan).value());
}

StatusOr<std::unique_ptr<Engine>> Runtime::loadEngine(plan::Plan plan) {
  State &rt = *state_;
  std::string model = plan.metadata.model.empty() ? std::string("the plan") : "plan of '" + plan.metadata.model + "'";
  KILN_RETURN_IF_ERROR(plan::validatePlan(plan));
  KILN_RETURN_IF_ERROR(plan::checkCompatibility(plan, rt.target));
  int device = rt.options.deviceOrdinal;
  KILN_RETURN_IF_ERROR(cudaStatus(cudaSetDevice(device), "selecting CUDA device " + std::to_string(device)));

  auto engine = std::make_shared<Engine::State>();
  engine->device = device;
  engine->cudnnPlans = rt.cudnnPlans;
  engine->plan = std::move(plan);
  const plan::Plan &p = engine->plan;
  auto describe = [&](const std::vector<plan::TensorBinding> &bindings, std::vector<TensorDesc> &out) {
    for (const plan::TensorBinding &b : bindings) {
      int64_t elements = std::accumulate(b.shape.begin(), b.shape.end(), int64_t{1}, std::multiplies<int64_t>());
      out.push_back({b.name, b.dtype, b.shape, static_cast<uint64_t>(elements) * plan::dtypeBytes(b.dtype)});
    }
  };
  describe(p.inputs, engine->inputs);
  describe(p.outputs, engine->outputs);

  rt.progress("loading " + model + ": " + std::to_string(p.steps.size()) + " steps, " +
              std::to_string(p.weights.size()) + " bytes of weights, arena " + std::to_string(p.metadata.arenaBytes) +
              " bytes");
  // Where load time goes, for the progress line at the end (a warm load should be all upload).
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  Clock::time_point start = Clock::now();
  auto weights = runtime::DeviceBuffer::allocate(p.weights.size(), "the weights of " + model);
  if (!weights.isOk())
    return weights.status();
  engine->weights = std::move(weights).value();
  if (!p.weights.empty())
    KILN_RETURN_IF_ERROR(cudaStatus(
        cudaMemcpy(engine->weights.data(), p.weights.data(), p.weights.size(), cudaMemcpyHostToDevice),
        "uploading the weights of " + model));
  // The device copy is the one every context reads; the host bytes (a copy or a file mapping)
  // are not needed any more, so big models do not keep them twice.
  engine->plan.weights = {};
  engine->plan.weightsStorage.reset();
  double uploadSeconds = since(start);
  Clock::time_point kernelsStart = Clock::now();
  KILN_RETURN_IF_ERROR(runtime::loadKernels(*engine, rt.target.computeCapability));
  double kernelSeconds = since(kernelsStart);
  Clock::time_point tuningStart = Clock::now();
  KILN_RETURN_IF_ERROR(runtime::tuneEngine(*engine, rt));
  char line[160];
  std::snprintf(line, sizeof line, "engine loaded in %.2f s: weights %.2f s, kernels %.2f s, algorithms %.2f s",
                since(start), uploadSeconds, kernelSeconds, since(tuningStart));
  rt.progress(line);
  return std::unique_ptr<Engine>(new Engine(std::move(engine)));
}

//===-- Engine -------------------------------------------------------------===//

Engine::Engine(std::shared_ptr<State> state) : state_(std::move(state)) {}
Engine::~Engine() = default;

const std::vector<TensorDesc> &Engine::inputs() const { return state_->inputs; }
const std::vector<TensorDesc> &Engine::outputs() const { return state_->outputs; }
const plan::Metadata &Engine::metadata() const { return state_->plan.metadata; }
const plan::Plan &Engine::plan() const { return state_->plan; }
uint64_t Engine::weightsBytes() const { return state_->weights.bytes(); }
TuningStats Engine::tuningStats() const { return state_->stats; }
std::vector<std::string> Engine::stepAlgorithms() const {
  std::vector<std::string> out;
  out.reserve(state_->algorithms.size());
  for (const std::optional<runtime::TunedAlgorithm> &algo : state_->algorithms)
    out.push_back(algo ? runtime::formatTunedAlgorithm(*algo) : std::string());
  return out;
}
uint64_t Engine::workspaceBytes() const { return state_->workspaceBytes; }

} // namespace kiln
