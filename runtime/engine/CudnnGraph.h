//===- CudnnGraph.h - plan steps run as cuDNN frontend graphs --*- C++ -*-===//
//
// Fused attention and channels-last convolutions are cuDNN frontend graphs. What differs
// between them is the graph (a CudnnGraphSpec: its tensors, operations and device pointers);
// the lifecycle is shared (CudnnGraphRunner), as for gemm and conv (Tuning.cpp,
// StepExecutor.cpp):
// - At engine load, tune() builds the graph on the tuner's cuDNN handle, takes the engine
//   configs the heuristics offer (mode A, then the fallback list), builds up to
//   kMaxTimedCandidates that cuDNN supports within the workspace limit (runtime-fusion engines
//   compile kernels with NVRTC, 0.2-0.5 s each, so not all of them), times each on the device
//   with the real buffer layout and returns the fastest as (global engine index, knob choices),
//   checked to rebuild from just those (which is all a context gets): that goes into the
//   timing cache. check() rebuilds a cached choice to see that it still builds here and how
//   much workspace it needs.
// - In each execution context, prepare() builds the graph again on the context's own handle
//   with exactly the chosen engine config (frontend objects are never shared between handles
//   or threads), once per distinct graph (CudnnGraphCache); enqueue() executes it on the
//   context's stream, which is how it lands in the context's CUDA graph.
// The frontend is slow to compile; only the .cpp files of graphs include it. A runtime built
// without it refuses attention and channels-last convolution steps when they are created.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_ENGINE_CUDNNGRAPH_H
#define KILN_RUNTIME_ENGINE_CUDNNGRAPH_H

#include "runtime/engine/StepExecutor.h"

#include <map>
#include <memory>
#include <string>
#include <unordered_map>

namespace cudnn_frontend::graph {
class Graph;
} // namespace cudnn_frontend::graph

namespace kiln::runtime {

/// Whether this runtime was built with the cuDNN frontend.
bool cudnnFrontendAvailable();

/// One step's graph. Implemented next to the frontend (AttentionProblem.cpp, ConvGraph.cpp).
class CudnnGraphSpec {
public:
  virtual ~CudnnGraphSpec() = default;
  /// The graph's kind in keys and messages: "sdpa", "conv".
  virtual const char *kind() const = 0;
  /// What the graph computes, in progress lines: "attention", "conv".
  virtual const char *what() const = 0;
  /// Everything the engine choice depends on besides the device, frontend version and
  /// workspace limit: types, sizes, strides, the epilogue.
  virtual std::string problemKey() const = 0;
  /// problemKey() and the constants baked into the graph: steps of one context with equal
  /// graph keys and engine configs execute one built graph with their own pointers.
  virtual std::string graphKey() const { return problemKey(); }
  /// Adds the step's tensors (with uids) and operations to `g`, outputs marked.
  virtual Status define(cudnn_frontend::graph::Graph &g) const = 0;
  /// Deselects engine configs the step must not run (before the heuristics are asked).
  virtual void filterEngines(cudnn_frontend::graph::Graph &) const {}
  /// The device pointer of every uid define() gave a tensor.
  virtual std::unordered_map<int64_t, void *> pointers(const DeviceResources &res) const = 0;
  /// What a user can do when no engine runs the graph ("compile the model without fused
  /// attention").
  virtual std::string remedy() const = 0;
};

class CudnnGraphRunner {
public:
  CudnnGraphRunner(std::unique_ptr<CudnnGraphSpec> spec, std::string label);
  ~CudnnGraphRunner();
  CudnnGraphRunner(const CudnnGraphRunner &) = delete;
  CudnnGraphRunner &operator=(const CudnnGraphRunner &) = delete;

  const CudnnGraphSpec &spec() const { return *spec_; }
  /// The timing cache key: kind, frontend version, problem, workspace limit.
  std::string key(uint64_t workspaceLimit) const;
  /// Builds and times the supported engine configs within the limit (res.workspace must be at
  /// least that big); the fastest that rebuilds from its (engine, knobs) wins, ties to the
  /// heuristics' earlier rank.
  StatusOr<TunedAlgorithm> tune(const DeviceResources &res, uint64_t workspaceLimit);
  /// Whether a cached choice builds here; returns its workspace size.
  StatusOr<uint64_t> check(const DeviceResources &res, const TunedAlgorithm &algo);
  /// Builds the graph with `algo`'s engine config on res.cudnn (or takes the one another step
  /// of the context built, from res.cudnnGraphs). Outside stream capture.
  Status prepare(const DeviceResources &res, const TunedAlgorithm &algo);
  /// Runs the prepared graph on res.stream; never synchronizes.
  Status enqueue(const DeviceResources &res);

  struct Built; // a frontend graph with one engine config built (CudnnGraph.cpp)

  /// Engine configs tune() builds and times at most, in the heuristics' order.
  static constexpr int64_t kMaxTimedCandidates = 8;

private:
  std::unique_ptr<CudnnGraphSpec> spec_;
  std::string label_;
  std::shared_ptr<Built> built_; // set by prepare()
};

/// The graphs one execution context has built, by graph key and engine config: steps with the
/// same graph (the twelve attention layers of a BERT, ResNet's repeated blocks) execute one
/// graph with their own pointers, built once. Destroy it before the context's cuDNN handle.
class CudnnGraphCache {
public:
  CudnnGraphCache();
  ~CudnnGraphCache();
  CudnnGraphCache(const CudnnGraphCache &) = delete;
  CudnnGraphCache &operator=(const CudnnGraphCache &) = delete;

private:
  friend class CudnnGraphRunner;
  std::map<std::string, std::shared_ptr<CudnnGraphRunner::Built>> graphs_;
};

} // namespace kiln::runtime

#endif // KILN_RUNTIME_ENGINE_CUDNNGRAPH_H
