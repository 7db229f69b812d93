//===- RuntimeSession.h - load a plan and feed its inputs ------*- C++ -*-===//
//
// What `kiln run` and `kiln bench` share: the options that pick inputs and the timing cache,
// loading the engine with progress on stderr, and one execution context with its inputs set.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_RUNTIMESESSION_H
#define KILN_TOOLS_KILN_RUNTIMESESSION_H

#include "CommandLine.h"
#include "InputFlags.h"

#include "runtime/Runtime.h"

#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln::cli {

struct SessionOptions {
  std::string plan;
  std::map<std::string, std::string> inputFiles; // input name -> .npy
  uint64_t seed = 0;
  bool useCudaGraph = true;
  std::string timingCache; // "" = the default file, "none" = no file
  bool quiet = false;
};

/// The options of run and bench: the plan, its inputs, the timing cache, graph or no graph.
class SessionFlags {
public:
  SessionFlags(llvm::cl::SubCommand &sub, Categories &categories);

  /// The options given; an error (a usage error) when no plan was named or an --input value is
  /// malformed.
  llvm::Expected<SessionOptions> sessionOptions() const;

private:
  llvm::cl::opt<std::string> plan;
  InputFlags inputs;
  llvm::cl::opt<std::string> timingCache;
  llvm::cl::opt<bool> noGraph;
  llvm::cl::opt<bool> quiet;
};

struct Session {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<ExecutionContext> context;
  // Seconds spent opening it: the CUDA runtime and device, loading the plan into an engine
  // (weights, kernels, algorithms), the context (cuDNN graphs, CUDA graph capture).
  double runtimeSeconds = 0, engineSeconds = 0, contextSeconds = 0;
  // Reading (or drawing) the inputs and copying them into the context: not part of the load.
  double inputSeconds = 0;
  double loadSeconds() const { return runtimeSeconds + engineSeconds + contextSeconds; }
};

/// Whole requests timed back to back (`kiln bench`, `kiln profile`): host-clock latency
/// percentiles and the median of each phase by CUDA events.
struct RequestTimes {
  double medianMs = 0, p90Ms = 0, p99Ms = 0;
  double hostToDeviceMs = 0, computeMs = 0, deviceToHostMs = 0;
  /// The copies' share of the median request's device time.
  double copyShare() const;
};

/// `warmup` untimed runs, then `iterations` (>= 1) timed synchronous requests.
StatusOr<RequestTimes> timeRequests(ExecutionContext &context, int64_t warmup, int64_t iterations);

/// The value at quantile p (0..1) of `values` (nearest rank; 0 when empty).
double percentile(std::vector<double> values, double p);

/// Loads the plan, creates one context and sets every input (from its file or random).
/// Progress and errors are printed after `prefix` ("kiln run"); nullptr after an error.
std::unique_ptr<Session> openSession(const std::string &prefix, const SessionOptions &options);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_RUNTIMESESSION_H
