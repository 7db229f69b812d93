//===- Runtime.h - the Kiln GPU runtime: C++ API ----------------*- C++ -*-===//
//
// Embedding Kiln means three objects:
//
//   Runtime           one per process and device: options, the timing cache.
//   Engine            one per loaded plan: the weights (uploaded once), the kernel images and
//                     the tuned cuDNN/cuBLASLt algorithms. Read-only after load.
//   ExecutionContext  one per concurrent request stream: its own CUDA stream, activation arena,
//                     workspace, cuDNN/cuBLASLt handles and the CUDA graph of all steps.
//
//   auto rt = kiln::Runtime::create({});                 // check rt.isOk()
//   auto engine = rt.value()->loadEngine("model.kiln");
//   auto ctx = engine.value()->createContext({});
//   ctx.value()->setInput("x", host, bytes);
//   ctx.value()->run();
//   ctx.value()->getOutput("y", host, bytes);
//
// Threading rule:
// - Runtime::loadEngine and Engine::createContext may be called from any number of threads at
//   once (the timing cache is guarded; the engine is read-only after load).
// - An ExecutionContext is used by ONE thread at a time. Many contexts of one engine run
//   concurrently (each has its own stream, arena, workspace, graph and library handles). A
//   context detects overlapping calls from two threads and answers the second one with an
//   error (kInvalidArgument) instead of corrupting its buffers; use one context per thread.
// - A context keeps its engine's device state (weights, kernel images) alive, so it may
//   outlive the Engine and Runtime objects.
//
// Every call returns a Status; nothing aborts the process. No CUDA header is needed to use
// this file: device pointers and streams are passed as void*.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_RUNTIME_H
#define KILN_RUNTIME_RUNTIME_H

#include "runtime/Status.h"
#include "runtime/plan/Plan.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

using runtime::Status;
using runtime::StatusCode;
using runtime::StatusOr;

struct RuntimeOptions {
  int deviceOrdinal = 0;
  /// Text file of tuned algorithms (see TimingCache.h). Empty: tune in memory only, every
  /// process again. Read at Runtime::create (bad lines are skipped with a warning), rewritten
  /// after a load that tuned something new.
  std::string timingCachePath;
  /// Upper bound for the scratch memory of one cuDNN/cuBLASLt algorithm; algorithms that need
  /// more are not considered. Each context allocates the maximum its chosen algorithms need.
  uint64_t workspaceLimitBytes = 256ull << 20;
  /// Human-readable progress and warnings ("tuning conv 12/53 ...", "timing cache: line 7 ...").
  /// Called from the thread that loads an engine, so concurrent loads call it concurrently.
  std::function<void(const std::string &)> progress;
};

/// A model input or output as the caller sees it.
struct TensorDesc {
  std::string name;
  plan::DType dtype = plan::DType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

/// The GPU's peak rates (runtime/engine/DevicePeaks.h): what `kiln profile` compares a step's
/// achieved TFLOP/s and GB/s with. A FLOP peak is 0 where the architecture is not known.
struct DevicePeaks {
  int smCount = 0;
  double smClockGHz = 0;
  double memoryGBs = 0;  // DRAM bandwidth
  double fp32Tflops = 0; // CUDA cores
  double tf32Tflops = 0; // tensor cores, dense
  double halfTflops = 0; // bf16/fp16 tensor cores, dense, fp32 accumulation
  double eightBitTflops = 0; // int8/fp8 tensor cores, dense
};

/// What the engine load did with its conv/gemm problems (distinct problems, not steps).
struct TuningStats {
  uint32_t tuned = 0;     // timed on the device at this load
  uint32_t fromCache = 0; // taken from the timing cache (file or earlier loads)
  // The plans of cuDNN graph steps (channels-last convolutions, attention) during the load:
  // loaded serialized (no kernel compiled), built and stored for later loads (runtime-compiled
  // engines, 0.2-0.5 s each), built where cuDNN cannot serialize the engine (precompiled, cheap).
  // A load with a warm timing cache and plan store builds and stores nothing.
  uint32_t cudnnPlansLoaded = 0;
  uint32_t cudnnPlansStored = 0;
  uint32_t cudnnPlansUnstorable = 0;
};

struct ContextOptions {
  /// Capture all steps into one CUDA graph at creation and replay it per run. false runs the
  /// steps one by one on the stream every time (`--no-graph`; same results, for debugging).
  bool useCudaGraph = true;
};

/// Milliseconds of one timed run, measured with CUDA events on the context's stream.
struct RunTiming {
  float hostToDeviceMs = 0; // input copies (pinned staging or bound device buffers)
  float computeMs = 0;      // the graph (or the steps)
  float deviceToHostMs = 0; // output copies
};

class Engine;

class ExecutionContext {
public:
  ~ExecutionContext();
  ExecutionContext(const ExecutionContext &) = delete;
  ExecutionContext &operator=(const ExecutionContext &) = delete;

  /// Copies `bytes` (must equal the input's size) from host memory into the context's pinned
  /// staging buffer; run() uploads it. The host buffer may be reused as soon as this returns.
  /// Clears a device binding of the same input.
  Status setInput(std::string_view name, const void *host, size_t bytes);
  /// Copies the output of the last completed run into host memory (`bytes` must equal its
  /// size). Waits for a run started with enqueue().
  Status getOutput(std::string_view name, void *host, size_t bytes) const;

  /// Device-resident I/O: run() copies the input from `device` into the arena (device to
  /// device, on this context's stream) before the steps, and the output from the arena to
  /// `device` after them. The pointer must stay valid and hold the tensor's bytes until the
  /// run completes; work that produces the input on another stream must be finished (or
  /// ordered with an event on stream()) before run()/enqueue(). nullptr removes the binding.
  Status bindInput(std::string_view name, void *device);
  Status bindOutput(std::string_view name, void *device);

  /// enqueue() + synchronize().
  Status run();
  /// Input copies, the graph (or steps) and output copies on the stream; does not wait.
  Status enqueue();
  /// Waits for the enqueued run and reports any device error it hit.
  Status synchronize();
  /// One synchronous run with the three phases timed by CUDA events (`kiln bench`).
  StatusOr<RunTiming> runTimed();

  /// Milliseconds of every plan step (in plan order), measured by running the steps once one by
  /// one (no graph) with a CUDA event between consecutive steps, on the inputs last set. The
  /// per-step view of `kiln profile`: which layer is the bottleneck. Launch gaps are
  /// included in each step's time, so the sum exceeds a graph replay's compute time.
  StatusOr<std::vector<float>> profileSteps();

  /// An ONNX value a step completed, copied to the host (runStepsObserved).
  struct StepValue {
    std::string name;
    plan::DType dtype = plan::DType::F32;
    std::vector<int64_t> shape; // as the plan stores it (channels-last values NHWC)
    std::vector<uint8_t> bytes;
  };
  /// Runs once as run() does (so the arena holds the inputs last set), then the steps again
  /// one by one without the graph, calling `afterStep(i, values)` once step i has finished
  /// with the ONNX values it completed (plan::Step::values) copied to the host: what
  /// `kiln run --dump` writes. An error from `afterStep` stops the pass and is returned.
  Status runStepsObserved(const std::function<Status(size_t step, std::vector<StepValue> values)> &afterStep);

  /// Fills the whole activation arena with `byte` now, so a following run shows unwritten
  /// output elements as that pattern (tests use 0xFF: NaN for floats).
  Status poison(uint8_t byte);

  /// The context's cudaStream_t, for ordering the caller's own work with it.
  void *stream() const;
  bool usesCudaGraph() const;
  uint64_t arenaBytes() const;
  uint64_t workspaceBytes() const;

  struct Impl;

private:
  friend class Engine;
  explicit ExecutionContext(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Engine {
public:
  ~Engine();
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  const std::vector<TensorDesc> &inputs() const;
  const std::vector<TensorDesc> &outputs() const;
  const plan::Metadata &metadata() const;
  /// The loaded plan: steps, buffers and metadata (its weights live on the device only, so
  /// `weights` is empty here; weightsBytes() says their size). What the tools read per step.
  const plan::Plan &plan() const;
  /// The bytes of weights uploaded to the device.
  uint64_t weightsBytes() const;
  TuningStats tuningStats() const;
  /// The library algorithm each step runs with, in plan order, as the timing cache writes it
  /// ("graph engine=6 knobs=... ws=...", "gemm algo=...", "conv algo=1 math=1 ws=..."); empty
  /// for steps that are generated kernels or copies. What `kiln profile` and `kiln bench` report.
  std::vector<std::string> stepAlgorithms() const;
  /// The workspace each context allocates (max over the chosen algorithms).
  uint64_t workspaceBytes() const;

  /// Thread-safe. Allocates the context's arena, workspace, staging and handles and (with
  /// useCudaGraph) captures the steps.
  StatusOr<std::unique_ptr<ExecutionContext>> createContext(const ContextOptions &options = {}) const;

  struct State;

private:
  friend class Runtime;
  explicit Engine(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

class Runtime {
public:
  /// Selects the device, reads the timing cache file (if any). kDeviceError without a usable
  /// CUDA device.
  static StatusOr<std::unique_ptr<Runtime>> create(const RuntimeOptions &options = {});
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  /// readPlanFile + checkCompatibility against this device, then the Plan overload.
  StatusOr<std::unique_ptr<Engine>> loadEngine(const std::string &path);
  /// validatePlan + checkCompatibility, uploads the weights, loads the kernel images and picks
  /// an algorithm for every conv/gemm problem (timing cache, else timed on the device).
  StatusOr<std::unique_ptr<Engine>> loadEngine(plan::Plan plan);

  /// What checkCompatibility is given for this device.
  const plan::TargetInfo &target() const;
  /// "NVIDIA H200" and the like.
  const std::string &deviceName() const;
  /// The device's peak FLOP rates and memory bandwidth.
  StatusOr<DevicePeaks> devicePeaks() const;

  struct State;

private:
  explicit Runtime(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

} // namespace kiln

#endif // KILN_RUNTIME_RUNTIME_H
