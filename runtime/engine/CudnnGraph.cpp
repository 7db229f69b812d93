//===- CudnnGraph.cpp - the lifecycle of a step run as a cuDNN frontend graph ===//
//
// See CudnnGraph.h. Every frontend call returns an error_t that becomes a Status naming the
// step; the frontend may also throw, so each entry point catches.
//
//===----------------------------------------------------------------------===//

#include "runtime/engine/CudnnGraph.h"

#include "runtime/engine/CandidateTiming.h"
#include "runtime/engine/CudaCheck.h"
#include "runtime/engine/CudnnFrontend.h"
#include "runtime/engine/CudnnPlanStore.h"

#include <algorithm>
#include <exception>
#include <vector>

namespace kiln::runtime {

bool cudnnFrontendAvailable() { return KILN_HAVE_CUDNN_FRONTEND; }

CudnnGraphCache::CudnnGraphCache() = default;
CudnnGraphCache::~CudnnGraphCache() = default;

CudnnGraphRunner::CudnnGraphRunner(std::unique_ptr<CudnnGraphSpec> spec, std::string label)
    : spec_(std::move(spec)), label_(std::move(label)) {}
CudnnGraphRunner::~CudnnGraphRunner() = default;

#if !KILN_HAVE_CUDNN_FRONTEND

// Graph specs cannot be made without the frontend (their factories refuse), so nothing below
// runs; it exists for the linker.
struct CudnnGraphRunner::Built {};
namespace {
Status unavailable(const std::string &label) {
  return Status(StatusCode::kInternal, label + ": a cuDNN graph without the cuDNN frontend");
}
} // namespace
std::string CudnnGraphRunner::key(uint64_t) const { return "unavailable"; }
StatusOr<TunedAlgorithm> CudnnGraphRunner::tune(const DeviceResources &, uint64_t) { return unavailable(label_); }
StatusOr<uint64_t> CudnnGraphRunner::check(const DeviceResources &, const TunedAlgorithm &) {
  return unavailable(label_);
}
Status CudnnGraphRunner::prepare(const DeviceResources &, const TunedAlgorithm &) { return unavailable(label_); }
Status CudnnGraphRunner::enqueue(const DeviceResources &) { return unavailable(label_); }

#else

struct CudnnGraphRunner::Built {
  fe::graph::Graph graph;
  int64_t workspaceBytes = 0;
};

namespace {

/// Runs `body`, turning an exception from the frontend into a Status.
template <class R, class F> R guarded(const std::string &label, const char *what, F &&body) {
  try {
    return body();
  } catch (const std::exception &e) {
    return Status(StatusCode::kDeviceError, label + ": " + what + ": the cuDNN frontend threw: " + e.what());
  } catch (...) {
    return Status(StatusCode::kDeviceError, label + ": " + what + ": the cuDNN frontend threw");
  }
}

/// The spec's graph, validated and lowered to a cuDNN operation graph on `handle`; no engine
/// config yet.
StatusOr<std::unique_ptr<CudnnGraphRunner::Built>> buildGraph(const CudnnGraphSpec &spec, const std::string &label,
                                                               cudnnHandle_t handle) {
  auto built = std::make_unique<CudnnGraphRunner::Built>();
  KILN_RETURN_IF_ERROR(spec.define(built->graph));
  std::string what = std::string("the cuDNN frontend refused the ") + spec.kind() + " graph";
  KILN_RETURN_IF_ERROR(feStatus(built->graph.validate(), label, what));
  KILN_RETURN_IF_ERROR(feStatus(built->graph.build_operation_graph(handle), label, "building cuDNN's operation graph"));
  return built;
}

/// The graph with exactly `algo`'s engine config built (a cached choice, or the tuned one in a
/// context), and its workspace size.
StatusOr<std::unique_ptr<CudnnGraphRunner::Built>> buildChoice(const CudnnGraphSpec &spec, const std::string &label,
                                                                cudnnHandle_t handle, const TunedAlgorithm &algo) {
  if (algo.kind != TunedAlgorithm::Kind::CudnnGraph)
    return Status(StatusCode::kInvalidArgument, label + ": the cached algorithm is not a cuDNN graph engine");
  auto made = buildGraph(spec, label, handle);
  if (!made.isOk())
    return made.status();
  std::unique_ptr<CudnnGraphRunner::Built> built = std::move(made).value();
  fe::graph::Graph &g = built->graph;
  std::unordered_map<fe::KnobType_t, int64_t> knobs;
  for (auto [type, value] : algo.graphKnobs)
    knobs[static_cast<fe::KnobType_t>(type)] = value;
  std::string what = std::string("building ") + spec.kind() + " engine " + std::to_string(algo.graphEngine) + " (" +
                     formatTunedAlgorithm(algo) + ")";
  KILN_RETURN_IF_ERROR(feStatus(g.create_execution_plan(algo.graphEngine, knobs), label, what));
  KILN_RETURN_IF_ERROR(feStatus(g.check_support(), label, what));
  KILN_RETURN_IF_ERROR(feStatus(g.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), label, what));
  KILN_RETURN_IF_ERROR(feStatus(g.get_workspace_size(built->workspaceBytes), label, "workspace size"));
  if (built->workspaceBytes < 0)
    return Status(StatusCode::kDeviceError, label + ": cuDNN reports a negative workspace size");
  return built;
}

/// The store key of `algo`'s built plan for this spec's graph: the graph (constants included)
/// and the engine config, not the workspace (which the plan itself says).
std::string planKey(const CudnnGraphSpec &spec, const TunedAlgorithm &algo) {
  TunedAlgorithm config = algo;
  config.workspaceBytes = 0;
  return std::string(spec.kind()) + " fe=" + kCudnnFrontendVersion + " " + spec.graphKey() + " " +
         formatTunedAlgorithm(config);
}

/// Keeps the built plan in the store, where cuDNN can serialize it (runtime-fusion engines;
/// for precompiled engines building is cheap and serializing may be refused: nothing is kept).
void remember(const CudnnGraphRunner::Built &built, const std::string &key, CudnnPlanStore &store) {
  std::vector<uint8_t> bytes;
  if (built.graph.serialize(bytes, /*serialize_structure=*/false).is_good() && !bytes.empty())
    store.insert(key, std::move(bytes));
  else
    store.noteUnstorable();
}

/// The graph with `algo`'s engine config on res.cudnn: loaded from res.cudnnPlans when it holds
/// the serialized plan (no kernel compiled), else built and its plan stored.
StatusOr<std::unique_ptr<CudnnGraphRunner::Built>> materialize(const CudnnGraphSpec &spec, const std::string &label,
                                                                const DeviceResources &res, const TunedAlgorithm &algo) {
  CudnnPlanStore *store = res.cudnnPlans;
  std::string key = store ? planKey(spec, algo) : std::string();
  if (store) {
    if (std::shared_ptr<const std::vector<uint8_t>> bytes = store->find(key)) {
      auto built = std::make_unique<CudnnGraphRunner::Built>();
      // The context's eager pass before capture does what the frontend's warmup would. A
      // damaged file makes the JSON parser throw: that is a plan to build again, not an error.
      Status loaded = guarded<Status>(label, "loading the serialized cuDNN plan", [&]() -> Status {
        return feStatus(built->graph.deserialize(res.cudnn, *bytes, /*enforce_precompiled=*/true, /*run_warmup=*/false),
                        label, "loading the serialized cuDNN plan");
      });
      if (loaded.isOk())
        loaded = feStatus(built->graph.get_workspace_size(built->workspaceBytes), label, "workspace size");
      if (loaded.isOk() && built->workspaceBytes >= 0) {
        store->noteLoaded();
        return built;
      }
      store->erase(key);
      store->warn(loaded.message() + "; building the plan again");
    }
  }
  auto built = buildChoice(spec, label, res.cudnn, algo);
  if (built.isOk() && store)
    remember(*built.value(), key, *store);
  return built;
}

} // namespace

std::string CudnnGraphRunner::key(uint64_t workspaceLimit) const {
  return std::string(spec_->kind()) + " fe=" + kCudnnFrontendVersion + " " + spec_->problemKey() +
         " wslimit=" + std::to_string(workspaceLimit);
}

StatusOr<TunedAlgorithm> CudnnGraphRunner::tune(const DeviceResources &res, uint64_t workspaceLimit) {
  return guarded<StatusOr<TunedAlgorithm>>(label_, "tuning", [&]() -> StatusOr<TunedAlgorithm> {
    uint64_t limit = std::min<uint64_t>(workspaceLimit, res.workspaceBytes);
    auto made = buildGraph(*spec_, label_, res.cudnn);
    if (!made.isOk())
      return made.status();
    // Built graphs stay inside this call: the tuner's handle goes away before its problems.
    std::unique_ptr<Built> built = std::move(made).value();
    fe::graph::Graph &g = built->graph;
    g.deselect_workspace_greater_than(static_cast<int64_t>(std::min<uint64_t>(limit, INT64_MAX)));
    spec_->filterEngines(g);
    std::string kind = spec_->kind();
    KILN_RETURN_IF_ERROR(feStatus(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), label_,
                                  "asking cuDNN's heuristics for " + kind + " engines"));
    std::string unsupported = "cuDNN supports no engine for " + key(limit) + " on this GPU";
    KILN_RETURN_IF_ERROR(feStatus(g.check_support(), label_, unsupported));

    std::unordered_map<int64_t, void *> pack = spec_->pointers(res);
    auto timerOr = CandidateTimer::create(label_);
    if (!timerOr.isOk())
      return timerOr.status();
    CandidateTimer &timer = timerOr.value();
    int64_t count = g.get_execution_plan_count();
    std::vector<std::pair<float, int64_t>> timed; // (median ms, heuristics rank)
    std::string lastError;
    int64_t built_count = 0;
    for (int64_t i = 0; i < count && built_count < kMaxTimedCandidates; ++i) {
      // Building may compile kernels (runtime fusion); a config that fails to build is skipped.
      if (Status b = feStatus(g.build_plan_at_index(i), label_, "building a " + kind + " engine"); !b.isOk()) {
        lastError = b.message();
        continue;
      }
      ++built_count;
      int64_t ws = 0;
      if (g.get_workspace_size_plan_at_index(i, ws).is_bad() || ws < 0 || static_cast<uint64_t>(ws) > limit)
        continue;
      auto run = [&]() { return feStatus(g.execute_plan_at_index(res.cudnn, pack, res.workspace, i), label_, kind); };
      auto median = timer.median(res, run, label_ + ": timing a " + kind + " engine");
      if (!median.isOk()) {
        // An engine that cannot run is skipped; a sticky device error surfaces here.
        lastError = median.status().message();
        KILN_RETURN_IF_ERROR(cudaStatus(cudaStreamSynchronize(res.stream), label_ + ": after a failed " + kind + " engine"));
        continue;
      }
      timed.push_back({median.value(), i});
    }
    // Fastest first, ties to the heuristics' earlier rank: the same timings give the same pick.
    std::sort(timed.begin(), timed.end());
    for (auto [ms, i] : timed) {
      TunedAlgorithm algo;
      algo.kind = TunedAlgorithm::Kind::CudnnGraph;
      std::unordered_map<fe::KnobType_t, int64_t> knobs;
      Status read = feStatus(g.get_engine_and_knobs_at_index(i, algo.graphEngine, knobs), label_,
                             "reading a " + kind + " engine's configuration");
      if (!read.isOk()) {
        lastError = read.message();
        continue;
      }
      for (const auto &[type, value] : knobs)
        algo.graphKnobs.push_back({static_cast<int64_t>(type), value});
      std::sort(algo.graphKnobs.begin(), algo.graphKnobs.end());
      // Contexts rebuild the choice from (engine, knobs): make sure that works before keeping it.
      auto replay = buildChoice(*spec_, label_, res.cudnn, algo);
      if (!replay.isOk() || static_cast<uint64_t>(replay.value()->workspaceBytes) > limit) {
        lastError = replay.isOk() ? "its rebuilt plan needs more workspace" : replay.status().message();
        continue;
      }
      algo.workspaceBytes = static_cast<uint64_t>(replay.value()->workspaceBytes);
      if (res.cudnnPlans)
        remember(*replay.value(), planKey(*spec_, algo), *res.cudnnPlans);
      return algo;
    }
    return Status(StatusCode::kDeviceError,
                  label_ + ": no cuDNN " + kind + " engine runs " + key(limit) + " within the workspace limit of " +
                      std::to_string(limit) + " bytes (" + std::to_string(count) + " candidates" +
                      (lastError.empty() ? "" : "; last error: " + lastError) +
                      "); raise RuntimeOptions::workspaceLimitBytes or " + spec_->remedy());
  });
}

StatusOr<uint64_t> CudnnGraphRunner::check(const DeviceResources &res, const TunedAlgorithm &algo) {
  return guarded<StatusOr<uint64_t>>(label_, "checking a cached engine", [&]() -> StatusOr<uint64_t> {
    auto built = materialize(*spec_, label_, res, algo);
    if (!built.isOk())
      return built.status();
    return static_cast<uint64_t>(built.value()->workspaceBytes);
  });
}

Status CudnnGraphRunner::prepare(const DeviceResources &res, const TunedAlgorithm &algo) {
  return guarded<Status>(label_, "preparing", [&]() -> Status {
    std::string graphKey = std::string(spec_->kind()) + " " + spec_->graphKey() + " " + formatTunedAlgorithm(algo);
    CudnnGraphCache *cache = res.cudnnGraphs;
    if (cache) {
      auto it = cache->graphs_.find(graphKey);
      if (it != cache->graphs_.end()) {
        built_ = it->second;
        return Status::ok();
      }
    }
    auto built = materialize(*spec_, label_, res, algo);
    if (!built.isOk())
      return built.status();
    built_ = std::shared_ptr<Built>(std::move(built).value());
    if (cache)
      cache->graphs_.emplace(graphKey, built_);
    return Status::ok();
  });
}

Status CudnnGraphRunner::enqueue(const DeviceResources &res) {
  if (!built_)
    return Status(StatusCode::kInternal, label_ + ": cuDNN graph enqueued before prepare()");
  if (static_cast<uint64_t>(built_->workspaceBytes) > res.workspaceBytes)
    return Status(StatusCode::kInternal,
                  label_ + ": the chosen " + spec_->kind() + " engine needs " + std::to_string(built_->workspaceBytes) +
                      " bytes of workspace, the context has " + std::to_string(res.workspaceBytes));
  return guarded<Status>(label_, "running", [&]() -> Status {
    std::unordered_map<int64_t, void *> pack = spec_->pointers(res);
    return feStatus(built_->graph.execute(res.cudnn, pack, res.workspace), label_,
                    std::string("executing the cuDNN ") + spec_->kind() + " graph");
  });
}

#endif // KILN_HAVE_CUDNN_FRONTEND

} // namespace kiln::runtime
