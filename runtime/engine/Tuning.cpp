//===- Tuning.cpp - pick an algorithm for every conv/gemm/attention problem -===//
//
// At engine load every distinct gemm/conv/attention problem (steps with the same key share one)
// gets its algorithm from the timing cache, or is timed on the device with the real buffer layout:
// a scratch arena of the plan's size, the engine's uploaded weights and a workspace of the
// configured limit. The choices are recorded per step; contexts only replay them.
//
//===----------------------------------------------------------------------===//

#include "runtime/engine/AttentionProblem.h"
#include "runtime/engine/ConvGraph.h"
#include "runtime/engine/ConvProblem.h"
#include "runtime/engine/EngineState.h"
#include "runtime/engine/GemmProblem.h"

#include <map>
#include <variant>

namespace kiln {

std::string Runtime::State::deviceKey() const {
  std::string name = deviceName;
  for (char &c : name)
    if (c == '\t' || c == '\n' || c == '\r' || c == '|')
      c = ' ';
  return "|gpu=" + name + "|cc=" + std::to_string(target.computeCapability) +
         "|cudnn=" + std::to_string(target.cudnnVersion) + "|cublaslt=" + std::to_string(target.cublasLtVersion);
}

namespace runtime {
namespace {

/// One gemm, conv or attention step's problem object (descriptors), built once for tuning.
struct Problem {
  std::unique_ptr<GemmProblem> gemm;
  std::unique_ptr<ConvProblem> conv;
  std::unique_ptr<CudnnGraphRunner> graph; // attention, channels-last convolution
  std::string key;
  std::string label;
  std::vector<size_t> steps; // all steps that share the key

  const char *kind() const { return gemm ? "gemm" : conv ? "conv" : graph->spec().what(); }
  StatusOr<TunedAlgorithm> tune(const DeviceResources &res, uint64_t limit) {
    return gemm ? gemm->tune(res, limit) : conv ? conv->tune(res, limit) : graph->tune(res, limit);
  }
  StatusOr<uint64_t> check(const DeviceResources &res, const TunedAlgorithm &algo) {
    return gemm ? gemm->check(res, algo) : conv ? conv->check(res, algo) : graph->check(res, algo);
  }
};

/// The device resources the tuner times with; freed when tuning ends.
struct TuningResources {
  Stream stream;
  CudnnHandle cudnn;
  CublasLtHandle cublasLt;
  DeviceBuffer arena, workspace;
  DeviceResources res;

  Status create(const Engine::State &engine, uint64_t workspaceLimit, CudnnPlanStore *cudnnPlans) {
    auto s = createStream("the tuner");
    if (!s.isOk())
      return s.status();
    stream = std::move(s).value();
    cudnnHandle_t dnn = nullptr;
    KILN_RETURN_IF_ERROR(cudnnStatus(cudnnCreate(&dnn), "creating the tuner's cuDNN handle"));
    cudnn = CudnnHandle(dnn);
    KILN_RETURN_IF_ERROR(cudnnStatus(cudnnSetStream(dnn, stream.get()), "cudnnSetStream for the tuner"));
    cublasLtHandle_t lt = nullptr;
    KILN_RETURN_IF_ERROR(cublasStatus(cublasLtCreate(&lt), "creating the tuner's cuBLASLt handle"));
    cublasLt = CublasLtHandle(lt);
    auto a = DeviceBuffer::allocate(engine.plan.metadata.arenaBytes, "the tuner's scratch arena");
    if (!a.isOk())
      return a.status();
    arena = std::move(a).value();
    // Zeros, not garbage: NaNs or denormals in the inputs would distort the timings.
    if (arena.bytes())
      KILN_RETURN_IF_ERROR(cudaStatus(cudaMemsetAsync(arena.data(), 0, arena.bytes(), stream.get()),
                                      "clearing the tuner's scratch arena"));
    auto w = DeviceBuffer::allocate(workspaceLimit, "the tuner's workspace (RuntimeOptions::workspaceLimitBytes)");
    if (!w.isOk())
      return w.status();
    workspace = std::move(w).value();
    res = DeviceResources{stream.get(), dnn, lt, arena.data(), engine.weights.data(), workspace.data(),
                          workspace.bytes(), /*cudnnGraphs=*/nullptr, cudnnPlans};
    return Status::ok();
  }
};

} // namespace

Status tuneEngine(Engine::State &engine, Runtime::State &runtime) {
  const plan::Plan &plan = engine.plan;
  uint64_t limit = runtime.options.workspaceLimitBytes;
  engine.algorithms.assign(plan.steps.size(), std::nullopt);
  engine.workspaceBytes = 0;
  engine.stats = {};
  CudnnPlanStore::Counts plansBefore = runtime.cudnnPlans->counts();

  // Distinct problems in step order (so progress and timings are reproducible).
  std::vector<Problem> problems;
  std::map<std::string, size_t> byKey;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const plan::Step &step = plan.steps[s];
    Problem p;
    p.label = stepLabel(step, s);
    if (const auto *g = std::get_if<plan::GemmStep>(&step.params)) {
      auto made = GemmProblem::create(plan, *g, p.label);
      if (!made.isOk())
        return made.status();
      p.gemm = std::move(made).value();
      p.key = p.gemm->key(limit);
    } else if (const auto *c = std::get_if<plan::ConvStep>(&step.params); c && c->channelsLast) {
      auto made = ConvGraph::create(plan, *c, p.label);
      if (!made.isOk())
        return made.status();
      p.graph = std::move(made).value();
      p.key = p.graph->key(limit);
    } else if (c) {
      auto made = ConvProblem::create(plan, *c, p.label);
      if (!made.isOk())
        return made.status();
      p.conv = std::move(made).value();
      p.key = p.conv->key(limit);
    } else if (const auto *a = std::get_if<plan::AttentionStep>(&step.params)) {
      auto made = AttentionProblem::create(plan, *a, p.label);
      if (!made.isOk())
        return made.status();
      p.graph = std::move(made).value();
      p.key = p.graph->key(limit);
    } else {
      continue;
    }
    p.key += runtime.deviceKey();
    auto [it, inserted] = byKey.emplace(p.key, problems.size());
    if (inserted)
      problems.push_back(std::move(p));
    problems[it->second].steps.push_back(s);
  }
  if (problems.empty())
    return Status::ok();

  TuningResources tr;
  KILN_RETURN_IF_ERROR(tr.create(engine, limit, runtime.cudnnPlans.get()));

  // Cache hits first (cheap checks), then the problems that need timing, counted for progress.
  std::vector<std::optional<TunedAlgorithm>> chosen(problems.size());
  std::vector<size_t> toTune;
  for (size_t i = 0; i < problems.size(); ++i) {
    Problem &p = problems[i];
    std::optional<TunedAlgorithm> cached = runtime.cache.find(p.key);
    if (cached) {
      StatusOr<uint64_t> ws = p.check(tr.res, *cached);
      if (ws.isOk() && ws.value() <= limit) {
        cached->workspaceBytes = ws.value();
        chosen[i] = cached;
        ++engine.stats.fromCache;
        continue;
      }
      runtime.progress("timing cache: the entry for " + p.label + " is not usable here (" +
                       (ws.isOk() ? "needs " + std::to_string(ws.value()) + " bytes of workspace" : ws.status().message()) +
                       "); tuning it again");
    }
    toTune.push_back(i);
  }
  std::map<std::string, size_t> perKind, indexInKind; // by Problem::kind()
  for (size_t i : toTune)
    perKind[problems[i].kind()]++;
  for (size_t i : toTune) {
    Problem &p = problems[i];
    runtime.progress(std::string("tuning ") + p.kind() + " " + std::to_string(++indexInKind[p.kind()]) + "/" +
                     std::to_string(perKind[p.kind()]) + " (" + p.label + ")");
    StatusOr<TunedAlgorithm> algo = p.tune(tr.res, limit);
    if (!algo.isOk())
      return algo.status();
    chosen[i] = algo.value();
    if (!runtime.cache.insert(p.key, algo.value()))
      runtime.progress("warning: timing cache: cannot store the choice for " + p.label +
                       " (its key contains a tab or newline); it will be tuned again next time");
    ++engine.stats.tuned;
  }
  KILN_RETURN_IF_ERROR(cudaStatus(cudaStreamSynchronize(tr.stream.get()), "finishing algorithm tuning"));

  for (size_t i = 0; i < problems.size(); ++i) {
    for (size_t s : problems[i].steps)
      engine.algorithms[s] = chosen[i];
    engine.workspaceBytes = std::max(engine.workspaceBytes, chosen[i]->workspaceBytes);
  }
  CudnnPlanStore::Counts plansAfter = runtime.cudnnPlans->counts();
  engine.stats.cudnnPlansLoaded = plansAfter.loaded - plansBefore.loaded;
  engine.stats.cudnnPlansStored = plansAfter.stored - plansBefore.stored;
  engine.stats.cudnnPlansUnstorable = plansAfter.unstorable - plansBefore.unstorable;
  std::string plans;
  if (engine.stats.cudnnPlansLoaded + engine.stats.cudnnPlansStored + engine.stats.cudnnPlansUnstorable)
    plans = "; cuDNN plans: " + std::to_string(engine.stats.cudnnPlansLoaded) + " loaded, " +
            std::to_string(engine.stats.cudnnPlansStored) + " built and stored, " +
            std::to_string(engine.stats.cudnnPlansUnstorable) + " built (not serializable)";
  runtime.progress("tuned " + std::to_string(engine.stats.tuned) + " problems, " +
                   std::to_string(engine.stats.fromCache) + " from the timing cache; workspace " +
                   std::to_string(engine.workspaceBytes) + " bytes per context" + plans);

  if (engine.stats.tuned > 0 && !runtime.options.timingCachePath.empty()) {
    std::lock_guard<std::mutex> lock(runtime.saveMutex);
    Status saved = runtime.cache.save(runtime.options.timingCachePath);
    // The engine is fine without the file; the next process just tunes again.
    if (!saved.isOk())
      runtime.progress("warning: " + saved.message());
  }
  return Status::ok();
}

} // namespace runtime
} // namespace kiln
