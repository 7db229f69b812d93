//===- ExecutionContext.cpp - one stream, one arena, one CUDA graph --------===//
//
// A run is: input copies (pinned staging -> arena, or bound device buffer -> arena), the
// steps (one cudaGraphLaunch of the graph captured at creation, or the executors one by one),
// output copies (arena -> staging or bound buffer). Events between the phases time them.
//
//===----------------------------------------------------------------------===//

#include "runtime/engine/CudnnGraph.h"
#include "runtime/engine/EngineState.h"
#include "runtime/engine/StepExecutor.h"

#include <atomic>
#include <cstring>

namespace kiln {

using runtime::cudaStatus;

struct ExecutionContext::Impl {
  struct Io {
    const TensorDesc *desc = nullptr;
    uint8_t *arena = nullptr;         // where the tensor lives in this context's arena
    runtime::PinnedBuffer staging;    // host side of setInput/getOutput
    bool hostSet = false;             // inputs: staging holds data from setInput
    void *device = nullptr;           // bindInput/bindOutput, or null
  };

  std::shared_ptr<const Engine::State> engine;
  bool useGraph = true;
  // Declaration order is destruction order reversed: executors go before handles and memory.
  runtime::Stream stream;
  runtime::CudnnHandle cudnn;
  runtime::CublasLtHandle cublasLt;
  runtime::DeviceBuffer arena, workspace;
  runtime::DeviceResources res;
  std::vector<Io> inputs, outputs;
  runtime::Event phase[4]; // before inputs, after inputs, after steps, after outputs
  runtime::CudnnGraphCache cudnnGraphs; // cuDNN graphs on `cudnn`, gone before it
  std::vector<std::unique_ptr<runtime::StepExecutor>> executors;
  runtime::GraphExec graph;

  std::atomic<bool> busy{false}; // the one-thread-at-a-time rule, enforced
  bool pending = false;          // a run was enqueued and not yet synchronized
  bool outputsValid = false;     // staging holds the outputs of a completed run

  ~Impl() {
    if (stream)
      (void)cudaStreamSynchronize(stream.get());
  }

  Status create(std::shared_ptr<const Engine::State> state, const ContextOptions &options);
  Status enqueueSteps();
  Status capture();
  Status enqueueRun();
  /// The inputs' copies into the arena (a run's first phase).
  Status enqueueInputs();
  Status sync();
  Io *find(std::vector<Io> &list, std::string_view name) {
    for (Io &io : list)
      if (io.desc->name == name)
        return &io;
    return nullptr;
  }
  std::string names(const std::vector<Io> &list) const {
    std::string out;
    for (const Io &io : list)
      out += (out.empty() ? "'" : ", '") + io.desc->name + "'";
    return out.empty() ? "none" : out;
  }
};

namespace {

/// Holds the context's busy flag for one public call; a second thread gets an error.
class UseGuard {
public:
  explicit UseGuard(std::atomic<bool> &flag) : flag_(flag), acquired_(!flag.exchange(true, std::memory_order_acquire)) {}
  ~UseGuard() {
    if (acquired_)
      flag_.store(false, std::memory_order_release);
  }
  Status status(const char *call) const {
    if (acquired_)
      return Status::ok();
    return Status(StatusCode::kInvalidArgument,
                  std::string("ExecutionContext::") + call +
                      ": the context is in use by another thread; an ExecutionContext is used by one thread at a time "
                      "(create one context per thread with Engine::createContext)");
  }

private:
  std::atomic<bool> &flag_;
  bool acquired_;
};

#define KILN_GUARD(call)                                                                           \
  UseGuard guard_(impl_->busy);                                                                    \
  KILN_RETURN_IF_ERROR(guard_.status(call));                                                       \
  KILN_RETURN_IF_ERROR(cudaStatus(cudaSetDevice(impl_->engine->device), "selecting the context's device"))

} // namespace

Status ExecutionContext::Impl::create(std::shared_ptr<const Engine::State> state, const ContextOptions &options) {
  engine = std::move(state);
  useGraph = options.useCudaGraph;
  const plan::Plan &plan = engine->plan;
  KILN_RETURN_IF_ERROR(cudaStatus(cudaSetDevice(engine->device), "selecting the engine's device"));
  auto s = runtime::createStream("an execution context");
  if (!s.isOk())
    return s.status();
  stream = std::move(s).value();
  cudnnHandle_t dnn = nullptr;
  KILN_RETURN_IF_ERROR(runtime::cudnnStatus(cudnnCreate(&dnn), "creating the context's cuDNN handle"));
  cudnn = runtime::CudnnHandle(dnn);
  KILN_RETURN_IF_ERROR(runtime::cudnnStatus(cudnnSetStream(dnn, stream.get()), "cudnnSetStream for the context"));
  cublasLtHandle_t lt = nullptr;
  KILN_RETURN_IF_ERROR(runtime::cublasStatus(cublasLtCreate(&lt), "creating the context's cuBLASLt handle"));
  cublasLt = runtime::CublasLtHandle(lt);
  auto a = runtime::DeviceBuffer::allocate(plan.metadata.arenaBytes, "the context's activation arena");
  if (!a.isOk())
    return a.status();
  arena = std::move(a).value();
  auto w = runtime::DeviceBuffer::allocate(engine->workspaceBytes, "the context's cuDNN/cuBLASLt workspace");
  if (!w.isOk())
    return w.status();
  workspace = std::move(w).value();
  res = runtime::DeviceResources{stream.get(), dnn, lt, arena.data(), engine->weights.data(), workspace.data(),
                                 workspace.bytes(), &cudnnGraphs, engine->cudnnPlans.get()};
  for (auto &e : phase) {
    auto ev = runtime::createEvent("timing the context's runs");
    if (!ev.isOk())
      return ev.status();
    e = std::move(ev).value();
  }

  auto makeIo = [&](const std::vector<plan::TensorBinding> &bindings, const std::vector<TensorDesc> &descs,
                    std::vector<Io> &out, const char *kind) -> Status {
    for (size_t i = 0; i < bindings.size(); ++i) {
      Io io;
      io.desc = &descs[i];
      io.arena = arena.data() + plan.buffers[bindings[i].buffer].offset;
      auto pinned = runtime::PinnedBuffer::allocate(descs[i].bytes, std::string(kind) + " '" + descs[i].name + "' staging");
      if (!pinned.isOk())
        return pinned.status();
      io.staging = std::move(pinned).value();
      out.push_back(std::move(io));
    }
    return Status::ok();
  };
  KILN_RETURN_IF_ERROR(makeIo(plan.inputs, engine->inputs, inputs, "input"));
  KILN_RETURN_IF_ERROR(makeIo(plan.outputs, engine->outputs, outputs, "output"));

  for (size_t i = 0; i < plan.steps.size(); ++i) {
    auto exec = runtime::makeStepExecutor(plan, i, engine->kernels[i], engine->algorithms[i], res);
    if (!exec.isOk())
      return exec.status();
    executors.push_back(std::move(exec).value());
  }

  // One eager pass first: it reports a failing step by name (inside capture errors surface
  // late and vaguely) and lets cuDNN/cuBLASLt do their lazy one-time setup outside capture.
  if (arena.bytes())
    KILN_RETURN_IF_ERROR(cudaStatus(cudaMemsetAsync(arena.data(), 0, arena.bytes(), stream.get()),
                                    "clearing the context's arena"));
  KILN_RETURN_IF_ERROR(enqueueSteps());
  KILN_RETURN_IF_ERROR(cudaStatus(cudaStreamSynchronize(stream.get()), "the context's first (warm-up) pass over the steps"));
  if (useGraph && !executors.empty())
    KILN_RETURN_IF_ERROR(capture());
  return Status::ok();
}

Status ExecutionContext::Impl::enqueueSteps() {
  for (auto &exec : executors)
    KILN_RETURN_IF_ERROR(exec->enqueue(res));
  return Status::ok();
}

Status ExecutionContext::Impl::capture() {
  // Thread-local mode: other threads (other contexts) may allocate while we capture.
  KILN_RETURN_IF_ERROR(cudaStatus(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal),
                                  "starting the CUDA graph capture of the steps"));
  Status enqueued = enqueueSteps();
  cudaGraph_t raw = nullptr;
  // Capture must always be ended, or the stream stays unusable.
  Status ended = cudaStatus(cudaStreamEndCapture(stream.get(), &raw), "ending the CUDA graph capture of the steps");
  runtime::Graph owned(raw);
  if (!enqueued.isOk())
    return Status(enqueued.code(), enqueued.message() + " (while capturing the CUDA graph; ContextOptions::useCudaGraph "
                                                        "= false runs the steps without a graph)");
  KILN_RETURN_IF_ERROR(ended);
  cudaGraphExec_t exec = nullptr;
  KILN_RETURN_IF_ERROR(cudaStatus(cudaGraphInstantiate(&exec, raw, 0), "instantiating the CUDA graph of the steps"));
  graph = runtime::GraphExec(exec);
  KILN_RETURN_IF_ERROR(cudaStatus(cudaGraphUpload(exec, stream.get()), "uploading the CUDA graph"));
  return cudaStatus(cudaStreamSynchronize(stream.get()), "uploading the CUDA graph");
}

Status ExecutionContext::Impl::enqueueRun() {
  for (const Io &in : inputs)
    if (!in.hostSet && !in.device)
      return Status(StatusCode::kInvalidArgument, "input '" + in.desc->name +
                                                      "' was neither set (setInput) nor bound (bindInput) before the run");
  cudaStream_t s = stream.get();
  outputsValid = false;
  pending = true; // from here on anything may be in flight: synchronize before touching staging
  KILN_RETURN_IF_ERROR(cudaStatus(cudaEventRecord(phase[0].get(), s), "recording a timing event"));
  KILN_RETURN_IF_ERROR(enqueueInputs());
  KILN_RETURN_IF_ERROR(cudaStatus(cudaEventRecord(phase[1].get(), s), "recording a timing event"));
  if (graph)
    KILN_RETURN_IF_ERROR(cudaStatus(cudaGraphLaunch(graph.get(), s), "launching the CUDA graph of the steps"));
  else
    KILN_RETURN_IF_ERROR(enqueueSteps());
  KILN_RETURN_IF_ERROR(cudaStatus(cudaEventRecord(phase[2].get(), s), "recording a timing event"));
  for (const Io &out : outputs) {
    void *dst = out.device ? out.device : static_cast<void *>(out.staging.data());
    KILN_RETURN_IF_ERROR(cudaStatus(cudaMemcpyAsync(dst, out.arena, out.desc->bytes,
                                                    out.device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost, s),
                                    "copying output '" + out.desc->name + "' from the device"));
  }
  return cudaStatus(cudaEventRecord(phase[3].get(), s), "recording a timing event");
}

Status ExecutionContext::Impl::enqueueInputs() {
  for (const Io &in : inputs) {
    const void *src = in.device ? in.device : static_cast<const void *>(in.staging.data());
    KILN_RETURN_IF_ERROR(cudaStatus(cudaMemcpyAsync(in.arena, src, in.desc->bytes,
                                                    in.device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice,
                                                    stream.get()),
                                    "copying input '" + in.desc->name + "' to the device"));
  }
  return Status::ok();
}

Status ExecutionContext::Impl::sync() {
  if (!pending)
    return Status::ok();
  pending = false;
  Status status = cudaStatus(cudaStreamSynchronize(stream.get()), "running the steps (a kernel or library call failed "
                                                                  "on the device; rerun with ContextOptions::useCudaGraph "
                                                                  "= false and CUDA_LAUNCH_BLOCKING=1 to find the step)");
  outputsValid = status.isOk();
  return status;
}

//===-- Engine::createContext ----------------------------------------------===//

StatusOr<std::unique_ptr<ExecutionContext>> Engine::createContext(const ContextOptions &options) const {
  auto impl = std::make_unique<ExecutionContext::Impl>();
  KILN_RETURN_IF_ERROR(impl->create(state_, options));
  return std::unique_ptr<ExecutionContext>(new ExecutionContext(std::move(impl)));
}

//===-- ExecutionContext ---------------------------------------------------===//

ExecutionContext::ExecutionContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ExecutionContext::~ExecutionContext() = default;

void *ExecutionContext::stream() const { return impl_->stream.get(); }
bool ExecutionContext::usesCudaGraph() const { return static_cast<bool>(impl_->graph); }
uint64_t ExecutionContext::arenaBytes() const { return impl_->arena.bytes(); }
uint64_t ExecutionContext::workspaceBytes() const { return impl_->workspace.bytes(); }

Status ExecutionContext::setInput(std::string_view name, const void *host, size_t bytes) {
  KILN_GUARD("setInput");
  Impl::Io *in = impl_->find(impl_->inputs, name);
  if (!in)
    return Status(StatusCode::kNotFound, "setInput: the model has no input '" + std::string(name) +
                                             "'; its inputs are " + impl_->names(impl_->inputs));
  if (bytes != in->desc->bytes)
    return Status(StatusCode::kInvalidArgument, "setInput: input '" + in->desc->name + "' has " +
                                                    std::to_string(in->desc->bytes) + " bytes, " +
                                                    std::to_string(bytes) + " were given");
  if (!host && bytes)
    return Status(StatusCode::kInvalidArgument, "setInput: null host pointer for input '" + in->desc->name + "'");
  // The staging buffer may still feed an enqueued run's copy.
  KILN_RETURN_IF_ERROR(impl_->sync());
  if (bytes)
    std::memcpy(in->staging.data(), host, bytes);
  in->hostSet = true;
  in->device = nullptr;
  return Status::ok();
}

Status ExecutionContext::getOutput(std::string_view name, void *host, size_t bytes) const {
  KILN_GUARD("getOutput");
  Impl::Io *out = impl_->find(impl_->outputs, name);
  if (!out)
    return Status(StatusCode::kNotFound, "getOutput: the model has no output '" + std::string(name) +
                                             "'; its outputs are " + impl_->names(impl_->outputs));
  if (bytes != out->desc->bytes)
    return Status(StatusCode::kInvalidArgument, "getOutput: output '" + out->desc->name + "' has " +
                                                    std::to_string(out->desc->bytes) + " bytes, the buffer " +
                                                    std::to_string(bytes));
  if (!host && bytes)
    return Status(StatusCode::kInvalidArgument, "getOutput: null host pointer for output '" + out->desc->name + "'");
  if (out->device)
    return Status(StatusCode::kInvalidArgument, "getOutput: output '" + out->desc->name +
                                                    "' is bound to device memory (bindOutput); read it there");
  KILN_RETURN_IF_ERROR(impl_->sync());
  if (!impl_->outputsValid)
    return Status(StatusCode::kInvalidArgument,
                  "getOutput: no completed run; call run() (or enqueue() and synchronize()) before reading output '" +
                      out->desc->name + "'");
  if (bytes)
    std::memcpy(host, out->staging.data(), bytes);
  return Status::ok();
}

Status ExecutionContext::bindInput(std::string_view name, void *device) {
  KILN_GUARD("bindInput");
  Impl::Io *in = impl_->find(impl_->inputs, name);
  if (!in)
    return Status(StatusCode::kNotFound, "bindInput: the model has no input '" + std::string(name) +
                                             "'; its inputs are " + impl_->names(impl_->inputs));
  KILN_RETURN_IF_ERROR(impl_->sync());
  in->device = device;
  return Status::ok();
}

Status ExecutionContext::bindOutput(std::string_view name, void *device) {
  KILN_GUARD("bindOutput");
  Impl::Io *out = impl_->find(impl_->outputs, name);
  if (!out)
    return Status(StatusCode::kNotFound, "bindOutput: the model has no output '" + std::string(name) +
                                             "'; its outputs are " + impl_->names(impl_->outputs));
  KILN_RETURN_IF_ERROR(impl_->sync());
  out->device = device;
  return Status::ok();
}

Status ExecutionContext::enqueue() {
  KILN_GUARD("enqueue");
  KILN_RETURN_IF_ERROR(impl_->sync());
  return impl_->enqueueRun();
}

Status ExecutionContext::synchronize() {
  KILN_GUARD("synchronize");
  return impl_->sync();
}

Status ExecutionContext::run() {
  KILN_GUARD("run");
  KILN_RETURN_IF_ERROR(impl_->sync());
  Status enqueued = impl_->enqueueRun();
  Status synced = impl_->sync();
  return enqueued.isOk() ? synced : enqueued;
}

StatusOr<RunTiming> ExecutionContext::runTimed() {
  KILN_GUARD("runTimed");
  KILN_RETURN_IF_ERROR(impl_->sync());
  Status enqueued = impl_->enqueueRun();
  Status synced = impl_->sync();
  KILN_RETURN_IF_ERROR(enqueued);
  KILN_RETURN_IF_ERROR(synced);
  RunTiming t;
  auto elapsed = [&](int from, float &ms) {
    return cudaStatus(cudaEventElapsedTime(&ms, impl_->phase[from].get(), impl_->phase[from + 1].get()),
                      "reading the run's timing events");
  };
  KILN_RETURN_IF_ERROR(elapsed(0, t.hostToDeviceMs));
  KILN_RETURN_IF_ERROR(elapsed(1, t.computeMs));
  KILN_RETURN_IF_ERROR(elapsed(2, t.deviceToHostMs));
  return t;
}

StatusOr<std::vector<float>> ExecutionContext::profileSteps() {
  KILN_GUARD("profileSteps");
  KILN_RETURN_IF_ERROR(impl_->sync());
  // One real run first (the outputs are this request's), then the inputs again: the steps
  // after an input's last reader may have reused its arena bytes. Every step then reads what
  // it would in production.
  KILN_RETURN_IF_ERROR(impl_->enqueueRun());
  KILN_RETURN_IF_ERROR(impl_->sync());
  cudaStream_t s = impl_->stream.get();
  KILN_RETURN_IF_ERROR(impl_->enqueueInputs());
  std::vector<runtime::Event> marks(impl_->executors.size() + 1);
  for (auto &mark : marks) {
    auto event = runtime::createEvent("profiling the steps");
    if (!event.isOk())
      return event.status();
    mark = std::move(event).value();
  }
  KILN_RETURN_IF_ERROR(cudaStatus(cudaEventRecord(marks[0].get(), s), "recording a profiling event"));
  for (size_t i = 0; i < impl_->executors.size(); ++i) {
    KILN_RETURN_IF_ERROR(impl_->executors[i]->enqueue(impl_->res));
    KILN_RETURN_IF_ERROR(cudaStatus(cudaEventRecord(marks[i + 1].get(), s), "recording a profiling event"));
  }
  KILN_RETURN_IF_ERROR(cudaStatus(cudaStreamSynchronize(s), "the profiled pass over the steps"));
  std::vector<float> ms(impl_->executors.size());
  for (size_t i = 0; i < ms.size(); ++i)
    KILN_RETURN_IF_ERROR(cudaStatus(cudaEventElapsedTime(&ms[i], marks[i].get(), marks[i + 1].get()),
                                    "reading a profiling event"));
  return ms;
}

Status ExecutionContext::runStepsObserved(
    const std::function<Status(size_t step, std::vector<StepValue> values)> &afterStep) {
  KILN_GUARD("runStepsObserved");
  KILN_RETURN_IF_ERROR(impl_->sync());
  KILN_RETURN_IF_ERROR(impl_->enqueueRun());
  KILN_RETURN_IF_ERROR(impl_->sync());
  const plan::Plan &plan = impl_->engine->plan;
  cudaStream_t s = impl_->stream.get();
  // The run may have reused the inputs' arena bytes after their last reader (profileSteps).
  KILN_RETURN_IF_ERROR(impl_->enqueueInputs());
  for (size_t i = 0; i < impl_->executors.size(); ++i) {
    KILN_RETURN_IF_ERROR(impl_->executors[i]->enqueue(impl_->res));
    KILN_RETURN_IF_ERROR(cudaStatus(cudaStreamSynchronize(s), "running the steps one by one"));
    const plan::Step &step = plan.steps[i];
    std::vector<StepValue> values;
    for (size_t v = 0; v < step.values.size() && v < step.valueBuffers.size(); ++v) {
      const plan::Buffer &buffer = plan.buffers[step.valueBuffers[v]];
      StepValue value{step.values[v], buffer.dtype, buffer.shape, std::vector<uint8_t>(buffer.bytes)};
      const void *device = runtime::bufferAddress(plan, step.valueBuffers[v], impl_->res);
      KILN_RETURN_IF_ERROR(cudaStatus(cudaMemcpy(value.bytes.data(), device, buffer.bytes, cudaMemcpyDeviceToHost),
                                      "copying a step's value to the host"));
      values.push_back(std::move(value));
    }
    KILN_RETURN_IF_ERROR(afterStep(i, std::move(values)));
  }
  return Status::ok();
}

Status ExecutionContext::poison(uint8_t byte) {
  KILN_GUARD("poison");
  KILN_RETURN_IF_ERROR(impl_->sync());
  impl_->outputsValid = false;
  if (!impl_->arena.bytes())
    return Status::ok();
  KILN_RETURN_IF_ERROR(cudaStatus(cudaMemsetAsync(impl_->arena.data(), byte, impl_->arena.bytes(), impl_->stream.get()),
                                  "poisoning the context's arena"));
  return cudaStatus(cudaStreamSynchronize(impl_->stream.get()), "poisoning the context's arena");
}

} // namespace kiln
