//===- AttentionProblem.cpp - a plan AttentionStep as a cuDNN SDPA graph ---===//
//
// The only file that includes the cuDNN frontend (see AttentionProblem.h). Every frontend call
// returns an error_t that becomes a Status naming the step; the frontend may also throw, so
// each entry point catches.
//
//===----------------------------------------------------------------------===//

#include "runtime/engine/AttentionProblem.h"

#include "runtime/engine/CandidateTiming.h"

#include "runtime/engine/CudaCheck.h"
#include "runtime/engine/CudaHandles.h"
#include "runtime/plan/AttentionChecks.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <vector>

#ifndef KILN_HAVE_CUDNN_FRONTEND
#define KILN_HAVE_CUDNN_FRONTEND 0 // CMake defines it to 1 where it found the headers
#endif
#if KILN_HAVE_CUDNN_FRONTEND
#include <cudnn_frontend.h>
#endif

namespace kiln::runtime {
namespace {

std::string list(const std::vector<int64_t> &values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      s += ',';
    s += std::to_string(values[i]);
  }
  return s + "]";
}

/// Shortest decimal that reads back as the same float.
std::string floatString(float value) {
  char buffer[32];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof(buffer), value).ptr);
}

/// The mask as cuDNN takes a bias: a broadcast dimension (stride 0 in the plan) has extent 1,
/// and its stride is what a packed layout would give it (cuDNN ignores it, but wants it sane).
void maskLayout(const plan::AttentionStep &s, std::vector<int64_t> &dims, std::vector<int64_t> &strides) {
  dims = {s.batch, s.heads, s.seqQ, s.seqKv};
  strides = s.maskStrides;
  for (int i = 2; i >= 0; --i)
    if (strides[i] == 0) {
      dims[i] = 1;
      strides[i] = strides[i + 1] * dims[i + 1];
    }
}

} // namespace

bool AttentionProblem::available() { return KILN_HAVE_CUDNN_FRONTEND; }

AttentionGraphCache::AttentionGraphCache() = default;
AttentionGraphCache::~AttentionGraphCache() = default;

StatusOr<std::unique_ptr<AttentionProblem>> AttentionProblem::create(const plan::Plan &plan,
                                                                     const plan::AttentionStep &s, std::string label) {
#if !KILN_HAVE_CUDNN_FRONTEND
  (void)plan;
  (void)s;
  return Status(StatusCode::kIncompatible,
                label + ": this runtime was built without the cuDNN frontend, which attention steps need; install its "
                        "headers with scripts/install-cudnn-frontend.sh (scripts/setup-deps.sh does) and rebuild the "
                        "runtime, or compile the model without fused attention");
#else
  std::vector<uint32_t> used = {s.q, s.k, s.v, s.o};
  if (s.mask)
    used.push_back(*s.mask);
  for (uint32_t idx : used)
    if (idx >= plan.buffers.size())
      return Status(StatusCode::kInvalidPlan, label + ": attention names buffer " + std::to_string(idx) +
                                                  " but the plan has " + std::to_string(plan.buffers.size()));
  // validatePlan's rules once more: they decide which bytes cuDNN reads and writes.
  if (std::optional<std::string> error = plan::detail::checkAttentionStep(plan, label, s))
    return Status(StatusCode::kInvalidPlan, *error);
  auto p = std::unique_ptr<AttentionProblem>(new AttentionProblem());
  p->plan_ = &plan;
  p->step_ = s;
  p->label_ = std::move(label);
  return p;
#endif
}

AttentionProblem::~AttentionProblem() = default;

std::string AttentionProblem::problemKey() const {
  const plan::AttentionStep &s = step_;
  std::string k = "type=" + operandTypeName(*plan_, s.q) + " mask=" + operandTypeName(*plan_, s.mask);
  k += " b=" + std::to_string(s.batch) + " h=" + std::to_string(s.heads) + " sq=" + std::to_string(s.seqQ) +
       " skv=" + std::to_string(s.seqKv) + " d=" + std::to_string(s.headDim) + " dv=" + std::to_string(s.headDimV);
  k += std::string(" causal=") + (s.causal ? "1" : "0");
  k += " q=" + list(s.qStrides) + " k=" + list(s.kStrides) + " v=" + list(s.vStrides) + " o=" + list(s.oStrides);
  if (s.mask)
    k += " m=" + list(s.maskStrides);
  return k;
}

#if !KILN_HAVE_CUDNN_FRONTEND

// create() refuses every step, so nothing below runs; it exists for the linker.
struct AttentionProblem::Built {};
namespace {
Status unavailable(const std::string &label) {
  return Status(StatusCode::kInternal, label + ": attention without the cuDNN frontend");
}
} // namespace
std::string AttentionProblem::key(uint64_t) const { return "sdpa unavailable " + problemKey(); }
StatusOr<TunedAlgorithm> AttentionProblem::tune(const DeviceResources &, uint64_t) { return unavailable(label_); }
StatusOr<uint64_t> AttentionProblem::check(const DeviceResources &, const TunedAlgorithm &) {
  return unavailable(label_);
}
Status AttentionProblem::prepare(const DeviceResources &, const TunedAlgorithm &) { return unavailable(label_); }
Status AttentionProblem::enqueue(const DeviceResources &) { return unavailable(label_); }

#else

namespace fe = cudnn_frontend;

namespace {

// Tensor uids in the graph; the variant pack maps them to the step's device pointers.
enum Uid : int64_t { kQ = 1, kK = 2, kV = 3, kO = 4, kMask = 5 };

constexpr const char *kFrontendVersion = "1.32"; // checked against the headers below
static_assert(
    CUDNN_FRONTEND_MAJOR_VERSION == 1 && CUDNN_FRONTEND_MINOR_VERSION == 32,
    "the runtime is written and tested against cuDNN frontend 1.32 (scripts/cudnn-frontend-requirements.txt); "
    "update kFrontendVersion and recheck AttentionProblem.cpp when upgrading");

} // namespace

struct AttentionProblem::Built {
  fe::graph::Graph graph;
  int64_t workspaceBytes = 0;
};

namespace {

/// The frontend's verdict as a Status naming the step and what was being done.
Status feStatus(fe::error_t error, const std::string &label, const std::string &what) {
  if (error.is_good())
    return Status::ok();
  return Status(StatusCode::kDeviceError, label + ": " + what + ": " + error.get_message());
}

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

/// The graph of the step, validated and lowered to a cuDNN operation graph on `handle`; no
/// engine config yet.
StatusOr<std::unique_ptr<AttentionProblem::Built>> buildGraph(const plan::Plan &plan, const plan::AttentionStep &s,
                                                              const std::string &label, cudnnHandle_t handle) {
  auto built = std::make_unique<AttentionProblem::Built>();
  fe::graph::Graph &g = built->graph;
  fe::DataType_t io = plan.buffers[s.q].dtype == plan::DType::BF16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF;
  // fp32 for S = QK^T, the softmax and both matmuls' accumulation; P is rounded to the I/O type
  // before P·V, inside cuDNN.
  g.set_io_data_type(io).set_intermediate_data_type(fe::DataType_t::FLOAT).set_compute_data_type(fe::DataType_t::FLOAT);
  auto tensor = [&](const char *name, Uid uid, std::vector<int64_t> dims, std::vector<int64_t> strides) {
    return g.tensor(fe::graph::Tensor_attributes()
                        .set_name(name)
                        .set_uid(uid)
                        .set_dim(std::move(dims))
                        .set_stride(std::move(strides))
                        .set_data_type(io));
  };
  auto q = tensor("Q", kQ, {s.batch, s.heads, s.seqQ, s.headDim}, s.qStrides);
  auto k = tensor("K", kK, {s.batch, s.heads, s.seqKv, s.headDim}, s.kStrides);
  auto v = tensor("V", kV, {s.batch, s.heads, s.seqKv, s.headDimV}, s.vStrides);
  auto options = fe::graph::SDPA_attributes()
                     .set_name("attention")
                     .set_generate_stats(false) // inference: no softmax statistics for a backward pass
                     .set_attn_scale(s.scale)
                     .set_implementation(fe::AttentionImplementation_t::COMPOSITE);
  if (s.causal)
    options.set_causal_mask(true); // top-left: key j visible to query i when j <= i
  if (s.mask) {
    std::vector<int64_t> dims, strides;
    maskLayout(s, dims, strides);
    options.set_bias(tensor("mask", kMask, std::move(dims), std::move(strides)));
  }
  auto outputs = g.sdpa(q, k, v, options);
  outputs[0]
      ->set_output(true)
      .set_uid(kO)
      .set_dim({s.batch, s.heads, s.seqQ, s.headDimV})
      .set_stride(s.oStrides)
      .set_data_type(io);
  KILN_RETURN_IF_ERROR(feStatus(g.validate(), label, "the cuDNN frontend refused the attention graph"));
  KILN_RETURN_IF_ERROR(feStatus(g.build_operation_graph(handle), label, "building cuDNN's operation graph"));
  return built;
}

} // namespace

std::string AttentionProblem::key(uint64_t workspaceLimit) const {
  return std::string("sdpa fe=") + kFrontendVersion + " " + problemKey() + " wslimit=" + std::to_string(workspaceLimit);
}

namespace {

/// The step's device pointers by uid: each view's buffer address plus its element offset.
std::unordered_map<int64_t, void *> variantPack(const plan::Plan &plan, const plan::AttentionStep &s,
                                                const DeviceResources &res) {
  size_t elem = plan::dtypeBytes(plan.buffers[s.q].dtype);
  auto at = [&](uint32_t buffer, int64_t offset) {
    return static_cast<void *>(static_cast<uint8_t *>(bufferAddress(plan, buffer, res)) + offset * elem);
  };
  std::unordered_map<int64_t, void *> pack = {
      {kQ, at(s.q, s.qOffset)}, {kK, at(s.k, s.kOffset)}, {kV, at(s.v, s.vOffset)}, {kO, at(s.o, s.oOffset)}};
  if (s.mask)
    pack[kMask] = at(*s.mask, s.maskOffset);
  return pack;
}

/// The graph with exactly `algo`'s engine config built (a cached choice, or the tuned one in a
/// context), and its workspace size.
StatusOr<std::unique_ptr<AttentionProblem::Built>> buildChoice(const plan::Plan &plan, const plan::AttentionStep &s,
                                                               const std::string &label, cudnnHandle_t handle,
                                                               const TunedAlgorithm &algo) {
  if (algo.kind != TunedAlgorithm::Kind::Attention)
    return Status(StatusCode::kInvalidArgument, label + ": the cached algorithm is not an attention engine");
  auto made = buildGraph(plan, s, label, handle);
  if (!made.isOk())
    return made.status();
  std::unique_ptr<AttentionProblem::Built> built = std::move(made).value();
  fe::graph::Graph &g = built->graph;
  std::unordered_map<fe::KnobType_t, int64_t> knobs;
  for (auto [type, value] : algo.attentionKnobs)
    knobs[static_cast<fe::KnobType_t>(type)] = value;
  std::string what =
      "building attention engine " + std::to_string(algo.attentionEngine) + " (" + formatTunedAlgorithm(algo) + ")";
  KILN_RETURN_IF_ERROR(feStatus(g.create_execution_plan(algo.attentionEngine, knobs), label, what));
  KILN_RETURN_IF_ERROR(feStatus(g.check_support(), label, what));
  KILN_RETURN_IF_ERROR(feStatus(g.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), label, what));
  KILN_RETURN_IF_ERROR(feStatus(g.get_workspace_size(built->workspaceBytes), label, "attention workspace size"));
  if (built->workspaceBytes < 0)
    return Status(StatusCode::kDeviceError, label + ": cuDNN reports a negative attention workspace size");
  return built;
}

} // namespace

StatusOr<TunedAlgorithm> AttentionProblem::tune(const DeviceResources &res, uint64_t workspaceLimit) {
  return guarded<StatusOr<TunedAlgorithm>>(label_, "tuning attention", [&]() -> StatusOr<TunedAlgorithm> {
    uint64_t limit = std::min<uint64_t>(workspaceLimit, res.workspaceBytes);
    auto made = buildGraph(*plan_, step_, label_, res.cudnn);
    if (!made.isOk())
      return made.status();
    // Built graphs stay inside this call: the tuner's handle goes away before its problems.
    std::unique_ptr<Built> built = std::move(made).value();
    fe::graph::Graph &g = built->graph;
    g.deselect_workspace_greater_than(static_cast<int64_t>(std::min<uint64_t>(limit, INT64_MAX)));
    KILN_RETURN_IF_ERROR(feStatus(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}), label_,
                                  "asking cuDNN's heuristics for attention engines"));
    std::string what = "cuDNN supports no engine for " + key(limit) + " on this GPU";
    KILN_RETURN_IF_ERROR(feStatus(g.check_support(), label_, what));
    // Builds every supported config (some compile kernels with NVRTC); a failure skips one.
    KILN_RETURN_IF_ERROR(feStatus(g.build_plans(fe::BuildPlanPolicy_t::ALL), label_, what));

    std::unordered_map<int64_t, void *> pack = variantPack(*plan_, step_, res);
    auto timerOr = CandidateTimer::create(label_);
    if (!timerOr.isOk())
      return timerOr.status();
    CandidateTimer &timer = timerOr.value();
    int64_t count = g.get_execution_plan_count();
    std::vector<std::pair<float, int64_t>> timed; // (median ms, heuristics rank)
    std::string lastError;
    for (int64_t i = 0; i < count; ++i) {
      int64_t ws = 0;
      if (g.get_workspace_size_plan_at_index(i, ws).is_bad() || ws < 0 || static_cast<uint64_t>(ws) > limit)
        continue; // not built (unsupported here) or over the limit
      auto run = [&]() { return feStatus(g.execute_plan_at_index(res.cudnn, pack, res.workspace, i), label_, "SDPA"); };
      auto median = timer.median(res, run, label_ + ": timing an attention engine");
      if (!median.isOk()) {
        // An engine that cannot run is skipped; a sticky device error surfaces here.
        lastError = median.status().message();
        KILN_RETURN_IF_ERROR(
            cudaStatus(cudaStreamSynchronize(res.stream), label_ + ": after a failed attention engine"));
        continue;
      }
      timed.push_back({median.value(), i});
    }
    // Fastest first, ties to the heuristics' earlier rank: the same timings give the same pick.
    std::sort(timed.begin(), timed.end());
    for (auto [ms, i] : timed) {
      TunedAlgorithm algo;
      algo.kind = TunedAlgorithm::Kind::Attention;
      std::unordered_map<fe::KnobType_t, int64_t> knobs;
      Status read = feStatus(g.get_engine_and_knobs_at_index(i, algo.attentionEngine, knobs), label_,
                             "reading an attention engine's configuration");
      if (!read.isOk()) {
        lastError = read.message();
        continue;
      }
      for (const auto &[type, value] : knobs)
        algo.attentionKnobs.push_back({static_cast<int64_t>(type), value});
      std::sort(algo.attentionKnobs.begin(), algo.attentionKnobs.end());
      // Contexts rebuild the choice from (engine, knobs): make sure that works before keeping it.
      auto replay = buildChoice(*plan_, step_, label_, res.cudnn, algo);
      if (!replay.isOk() || static_cast<uint64_t>(replay.value()->workspaceBytes) > limit) {
        lastError = replay.isOk() ? "its rebuilt plan needs more workspace" : replay.status().message();
        continue;
      }
      algo.workspaceBytes = static_cast<uint64_t>(replay.value()->workspaceBytes);
      return algo;
    }
    return Status(StatusCode::kDeviceError,
                  label_ + ": no cuDNN attention engine runs " + key(limit) + " within the workspace limit of " +
                      std::to_string(limit) + " bytes (" + std::to_string(count) + " candidates" +
                      (lastError.empty() ? "" : "; last error: " + lastError) +
                      "); raise RuntimeOptions::workspaceLimitBytes or compile the model without fused attention");
  });
}

StatusOr<uint64_t> AttentionProblem::check(const DeviceResources &res, const TunedAlgorithm &algo) {
  return guarded<StatusOr<uint64_t>>(label_, "checking a cached attention engine", [&]() -> StatusOr<uint64_t> {
    auto built = buildChoice(*plan_, step_, label_, res.cudnn, algo);
    if (!built.isOk())
      return built.status();
    return static_cast<uint64_t>(built.value()->workspaceBytes);
  });
}

Status AttentionProblem::prepare(const DeviceResources &res, const TunedAlgorithm &algo) {
  return guarded<Status>(label_, "preparing attention", [&]() -> Status {
    // The scale is a constant inside the graph, so it is part of what steps can share.
    std::string graphKey = problemKey() + " scale=" + floatString(step_.scale) + " " + formatTunedAlgorithm(algo);
    AttentionGraphCache *cache = res.attentionGraphs;
    if (cache) {
      auto it = cache->graphs_.find(graphKey);
      if (it != cache->graphs_.end()) {
        built_ = it->second;
        return Status::ok();
      }
    }
    auto built = buildChoice(*plan_, step_, label_, res.cudnn, algo);
    if (!built.isOk())
      return built.status();
    built_ = std::shared_ptr<Built>(std::move(built).value());
    if (cache)
      cache->graphs_.emplace(graphKey, built_);
    return Status::ok();
  });
}

Status AttentionProblem::enqueue(const DeviceResources &res) {
  if (!built_)
    return Status(StatusCode::kInternal, label_ + ": attention enqueued before prepare()");
  if (static_cast<uint64_t>(built_->workspaceBytes) > res.workspaceBytes)
    return Status(StatusCode::kInternal,
                  label_ + ": the chosen attention engine needs " + std::to_string(built_->workspaceBytes) +
                      " bytes of workspace, the context has " + std::to_string(res.workspaceBytes));
  return guarded<Status>(label_, "running attention", [&]() -> Status {
    std::unordered_map<int64_t, void *> pack = variantPack(*plan_, step_, res);
    return feStatus(built_->graph.execute(res.cudnn, pack, res.workspace), label_, "executing the cuDNN SDPA graph");
  });
}

#endif // KILN_HAVE_CUDNN_FRONTEND

} // namespace kiln::runtime
