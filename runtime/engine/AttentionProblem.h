//===- AttentionProblem.h - a plan AttentionStep as a cuDNN SDPA graph -*- C++ -*-===//
//
// The step is one cuDNN frontend graph: sdpa(Q, K, V) with the step's scale as a fused scalar,
// the mask as an additive bias and the causal mask as cuDNN's top-left diagonal band, in the
// frontend's composite implementation (cuDNN's flash-attention fprop engines; the "unified"
// one accepts a bias and a causal band only from cuDNN 9.21, and the runtime must run on every
// cuDNN 9 from 9.14). Inference only: no softmax statistics, no dropout. Q, K, V, O and the
// mask are the plan's strided views, handed to cuDNN as they are (no copies).
//
// Lifecycle, as for gemm and conv (Tuning.cpp, StepExecutor.cpp):
// - At engine load, tune() builds the graph on the tuner's cuDNN handle, takes the engine
//   configs the heuristics offer (mode A, then the fallback list), builds every one cuDNN
//   supports within the workspace limit, times each on the device with the real buffer layout
//   and returns the fastest as (global engine index, knob choices), checked to rebuild from
//   just those (which is all a context gets): that goes into the timing cache. check()
//   rebuilds a cached choice to see that it still builds here and how much workspace it needs.
// - In each execution context, prepare() builds the graph again on the context's own handle
//   with exactly the chosen engine config (frontend objects are never shared between handles
//   or threads), once per distinct problem (AttentionGraphCache); enqueue() executes it on the
//   context's stream, which is how it lands in the context's CUDA graph.
// All of the cuDNN frontend lives in AttentionProblem.cpp, the one file that includes it (it
// is slow to compile). A runtime built without it refuses attention steps in create().
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_ATTENTIONPROBLEM_H
#define KILN_RUNTIME_ENGINE_ATTENTIONPROBLEM_H

#include "runtime/engine/StepExecutor.h"

#include <map>
#include <memory>
#include <string>

namespace kiln::runtime {

class AttentionProblem {
public:
  /// Checks the step (validatePlan's rules, again: they decide what cuDNN touches). Fails with
  /// kIncompatible when this runtime was built without the cuDNN frontend.
  static StatusOr<std::unique_ptr<AttentionProblem>> create(const plan::Plan &plan, const plan::AttentionStep &step,
                                                            std::string label);
  /// Whether this runtime was built with the cuDNN frontend (else create() refuses every step).
  static bool available();
  ~AttentionProblem();
  AttentionProblem(const AttentionProblem &) = delete;
  AttentionProblem &operator=(const AttentionProblem &) = delete;

  /// Everything the engine choice depends on besides the device: the frontend version, types,
  /// sizes, strides, causal, the mask's broadcast, the workspace limit (not the scale).
  std::string key(uint64_t workspaceLimit) const;

  /// Builds and times every supported engine config within the limit (res.workspace must be at
  /// least that big); the fastest that rebuilds from its (engine, knobs) wins, ties to the
  /// heuristics' earlier rank.
  StatusOr<TunedAlgorithm> tune(const DeviceResources &res, uint64_t workspaceLimit);
  /// Whether a cached choice builds here; returns its workspace size.
  StatusOr<uint64_t> check(const DeviceResources &res, const TunedAlgorithm &algo);
  /// Builds the graph with `algo`'s engine config on res.cudnn (or takes the one another step
  /// of the context built, from res.attentionGraphs). Outside stream capture.
  Status prepare(const DeviceResources &res, const TunedAlgorithm &algo);
  /// Runs the prepared graph on res.stream; never synchronizes.
  Status enqueue(const DeviceResources &res);

  struct Built; // a cuDNN frontend graph with one engine config built (AttentionProblem.cpp)

private:
  AttentionProblem() = default;
  std::string problemKey() const;

  const plan::Plan *plan_ = nullptr;
  plan::AttentionStep step_;
  std::string label_;
  std::shared_ptr<Built> built_; // set by prepare()
};

/// The graphs one execution context has built, by problem and engine config: its attention
/// steps with the same shapes, layouts, types and scale (the twelve layers of a BERT) execute
/// one graph with their own pointers, built once. Destroy it before the context's cuDNN handle.
class AttentionGraphCache {
public:
  AttentionGraphCache();
  ~AttentionGraphCache();
  AttentionGraphCache(const AttentionGraphCache &) = delete;
  AttentionGraphCache &operator=(const AttentionGraphCache &) = delete;

private:
  friend class AttentionProblem;
  std::map<std::string, std::shared_ptr<AttentionProblem::Built>> graphs_;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_ATTENTIONPROBLEM_H
