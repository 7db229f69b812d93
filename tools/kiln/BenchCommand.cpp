//===- BenchCommand.cpp - `kiln bench` -------------------------------------===//

#include "Commands.h"
#include "RuntimeSession.h"
#include "StepAlgorithms.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;

const char *const kBenchOverview =
    R"(Runs the plan --warmup times untimed, then --iterations times, each one synchronous request:
input copies from pinned staging, the CUDA graph (or the steps with --no-graph), output copies.
Prints the median, p90 and p99 latency of whole requests (host clock), items per second (the
first input's leading dimension is the batch), and the split of the median request into
host-to-device copies, compute and device-to-host copies (CUDA events), with the share of
time spent copying, the load time and the library algorithms the steps run with. Per-step
times, bottlenecks and achieved FLOP rates: `kiln profile`.

Exit status: 0 on success, 1 when the plan cannot be loaded or run, 2 on a usage error.
)";

class BenchCommand : public Command {
public:
  explicit BenchCommand(Categories &categories)
      : Command("bench", "Time a plan on the GPU: latency percentiles, throughput, copy/compute split",
                kBenchOverview),
        sessionFlags(sub, categories),
        iterations("iterations", cl::value_desc("n"), cl::init(100), cl::desc("Timed runs (default 100)"),
                   cl::sub(sub), cl::cat(categories.runtime)),
        warmup("warmup", cl::value_desc("n"), cl::init(10), cl::desc("Untimed runs first (default 10)"),
               cl::sub(sub), cl::cat(categories.runtime)),
        json("json", cl::desc("Print the figures as one JSON object"), cl::sub(sub), cl::cat(categories.output)) {}

  int run() override;

private:
  SessionFlags sessionFlags;
  cl::opt<int64_t> iterations;
  cl::opt<int64_t> warmup;
  cl::opt<bool> json;
};

int BenchCommand::run() {
  auto parsed = sessionFlags.sessionOptions();
  if (!parsed)
    return usageError(llvm::toString(parsed.takeError()));
  const SessionOptions &options = *parsed;
  if (iterations < 1 || warmup < 0)
    return usageError(iterations < 1 ? "--iterations needs a count >= 1" : "--warmup needs a count >= 0");
  std::unique_ptr<Session> session = openSession(prefix(), options);
  if (!session)
    return kExitFailure;
  // Load time: the plan read, weights uploaded, every library step tuned (or taken from the
  // timing cache) and the execution context built with its CUDA graph; reading the --input
  // files is reported apart (a batch-256 image input is 150 MB of .npy).
  double loadSeconds = session->loadSeconds();
  auto timed = timeRequests(*session->context, warmup, iterations);
  if (!timed.isOk())
    return failure(timed.status().message());
  const RequestTimes &t = timed.value();
  int64_t batch = 1;
  if (!session->engine->inputs().empty() && !session->engine->inputs()[0].shape.empty())
    batch = session->engine->inputs()[0].shape[0];
  double median = t.medianMs, p90 = t.p90Ms, p99 = t.p99Ms;
  double mh2d = t.hostToDeviceMs, mcompute = t.computeMs, md2h = t.deviceToHostMs;
  double copyShare = t.copyShare();
  double itemsPerSecond = batch * 1000.0 / median;
  TuningStats tuning = session->engine->tuningStats();
  if (json) {
    llvm::json::Object figures{{"plan", options.plan},
                               {"iterations", int64_t(iterations)},
                               {"warmup", int64_t(warmup)},
                               {"batch", batch},
                               {"cuda_graph", options.useCudaGraph},
                               {"median_ms", median},
                               {"p90_ms", p90},
                               {"p99_ms", p99},
                               {"items_per_s", itemsPerSecond},
                               {"h2d_ms", mh2d},
                               {"compute_ms", mcompute},
                               {"d2h_ms", md2h},
                               {"copy_share", copyShare},
                               {"tuned", tuning.tuned},
                               {"tuned_from_cache", tuning.fromCache},
                               {"cudnn_plans_loaded", tuning.cudnnPlansLoaded},
                               {"cudnn_plans_stored", tuning.cudnnPlansStored},
                               {"cudnn_plans_unstorable", tuning.cudnnPlansUnstorable},
                               {"load_s", loadSeconds},
                               {"load_runtime_s", session->runtimeSeconds},
                               {"load_engine_s", session->engineSeconds},
                               {"load_context_s", session->contextSeconds},
                               {"inputs_s", session->inputSeconds}};
    llvm::json::Object algorithmCounts;
    for (const auto &[label, count] : countAlgorithms(session->engine->stepAlgorithms()))
      algorithmCounts[label] = count;
    figures["algorithms"] = std::move(algorithmCounts);
    llvm::outs() << llvm::json::Value(std::move(figures)) << "\n";
    return kExitOk;
  }
  llvm::outs() << "bench " << options.plan << ": " << iterations << " runs after " << warmup << " warm-up, batch "
               << batch << (options.useCudaGraph ? ", CUDA graph" : ", no graph") << "\n"
               << llvm::format("  latency   median %.3f ms   p90 %.3f ms   p99 %.3f ms\n", median, p90, p99)
               << llvm::format("  throughput %.1f items/s\n", itemsPerSecond)
               << llvm::format("  split (median)   host->device %.3f ms   compute %.3f ms   device->host %.3f ms"
                               "   copies %.0f%%\n",
                               mh2d, mcompute, md2h, 100 * copyShare)
               << "  tuning: " << tuning.tuned << " problems timed at load, " << tuning.fromCache
               << " from the timing cache; cuDNN plans " << tuning.cudnnPlansLoaded << " loaded, "
               << tuning.cudnnPlansStored << " built and stored, " << tuning.cudnnPlansUnstorable
               << " built (not serializable)\n"
               << llvm::format("  load %.2f s: CUDA runtime %.2f s, engine (plan, weights, kernels, algorithms) %.2f s, "
                               "context %.2f s; inputs read in %.2f s\n",
                               loadSeconds, session->runtimeSeconds, session->engineSeconds, session->contextSeconds,
                               session->inputSeconds);
  std::map<std::string, int64_t> algorithmCounts = countAlgorithms(session->engine->stepAlgorithms());
  if (!algorithmCounts.empty()) {
    llvm::outs() << "  library algorithms (steps x algorithm):\n";
    for (const auto &[label, count] : algorithmCounts)
      llvm::outs() << llvm::format("    %4lld x ", (long long)count) << label << "\n";
  }
  return kExitOk;
}

} // namespace

std::unique_ptr<Command> makeBenchCommand(Categories &categories) {
  return std::make_unique<BenchCommand>(categories);
}

} // namespace kiln::cli
