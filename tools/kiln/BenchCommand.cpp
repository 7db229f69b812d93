//===- BenchCommand.cpp - `kiln bench` -------------------------------------===//

#include "Commands.h"
#include "RuntimeSession.h"

#include "runtime/plan/Plan.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;

const char *const kBenchOverview =
    R"(Runs the plan --warmup times untimed, then --iterations times, each one synchronous request:
input copies from pinned staging, the CUDA graph (or the steps with --no-graph), output copies.
Prints the median, p90 and p99 latency of whole requests (host clock), items per second (the
first input's leading dimension is the batch), and the split of the median request into
host-to-device copies, compute and device-to-host copies (CUDA events), with the share of
time spent copying.

Exit status: 0 on success, 1 when the plan cannot be loaded or run, 2 on a usage error.
)";

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  if (values.empty())
    return 0;
  size_t index = static_cast<size_t>(p * (values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

/// A step's library algorithm as the profile shows it: the timing-cache text without its
/// workspace size; a cuBLASLt algorithm is 64 opaque bytes, so just "cublasLt".
std::string algorithmLabel(llvm::StringRef algorithm) {
  if (algorithm.empty())
    return "";
  if (algorithm.starts_with("gemm "))
    return "cublasLt";
  llvm::StringRef text = algorithm.split(" ws=").first;
  if (text.consume_front("graph "))
    return ("cudnn graph " + text).str();
  if (text.consume_front("conv "))
    return ("cudnn legacy " + text).str();
  return text.str();
}

/// How many steps run with each library algorithm (label -> count), e.g. the cuDNN engines the
/// channels-last convolutions chose.
std::map<std::string, int64_t> countAlgorithms(const std::vector<std::string> &algorithms) {
  std::map<std::string, int64_t> counts;
  for (const std::string &algorithm : algorithms)
    if (!algorithm.empty())
      ++counts[algorithmLabel(algorithm)];
  return counts;
}

/// The slowest steps (with their library algorithm) and the time by op, from one profiled pass.
int printProfile(const std::string &planPath, const Session &session, llvm::raw_ostream &os) {
  ExecutionContext &context = *session.context;
  std::vector<std::string> algorithms = session.engine->stepAlgorithms();
  auto plan = plan::readPlanFile(planPath);
  if (!plan.isOk()) {
    llvm::errs() << "kiln bench: error: " << plan.status().message() << "\n";
    return 1;
  }
  auto ms = context.profileSteps();
  if (!ms.isOk()) {
    llvm::errs() << "kiln bench: error: " << ms.status().message() << "\n";
    return 1;
  }
  const std::vector<plan::Step> &steps = plan.value().steps;
  const std::vector<float> &times = ms.value();
  double total = std::accumulate(times.begin(), times.end(), 0.0);
  std::vector<size_t> order(times.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return times[a] > times[b]; });
  os << llvm::format("profile: %zu steps, %.3f ms one by one (launch gaps included)\n", times.size(), total);
  os << "  slowest steps:\n";
  for (size_t i = 0; i < std::min<size_t>(10, order.size()); ++i) {
    const plan::Step &step = steps[order[i]];
    std::string algorithm = order[i] < algorithms.size() ? algorithmLabel(algorithms[order[i]]) : "";
    os << llvm::format("    %8.3f ms %5.1f%%  step %-4zu %-9s %-22s %s", times[order[i]],
                       100 * times[order[i]] / std::max(total, 1e-9), order[i], plan::stepRunner(step).data(), step.op.c_str(),
                       step.name.c_str())
       << (algorithm.empty() ? "" : "  [" + algorithm + "]") << "\n";
  }
  std::map<std::string, std::pair<double, int>> byOp;
  for (size_t i = 0; i < times.size(); ++i) {
    auto &entry = byOp[steps[i].op + " (" + std::string(plan::stepRunner(steps[i])) + ")"];
    entry.first += times[i];
    entry.second += 1;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> ops(byOp.begin(), byOp.end());
  std::stable_sort(ops.begin(), ops.end(), [](auto &a, auto &b) { return a.second.first > b.second.first; });
  os << "  by op:\n";
  for (auto &[op, entry] : ops)
    os << llvm::format("    %8.3f ms %5.1f%%  %4d x %s\n", entry.first, 100 * entry.first / std::max(total, 1e-9),
                       entry.second, op.c_str());
  return 0;
}

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
        json("json", cl::desc("Print the figures as one JSON object"), cl::sub(sub), cl::cat(categories.output)),
        profile("profile",
                cl::desc("Also time every step alone (steps run one by one, events between them)\n"
                         "and print the slowest steps and the time by op (on stderr with --json)"),
                cl::sub(sub), cl::cat(categories.output)) {}

  int run() override;

private:
  SessionFlags sessionFlags;
  cl::opt<int64_t> iterations;
  cl::opt<int64_t> warmup;
  cl::opt<bool> json;
  cl::opt<bool> profile;
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
  for (int64_t w = 0; w < warmup; ++w)
    if (Status status = session->context->run(); !status.isOk())
      return failure(status.message());
  std::vector<double> total, h2d, compute, d2h;
  for (int64_t it = 0; it < iterations; ++it) {
    auto start = std::chrono::steady_clock::now();
    auto timing = session->context->runTimed();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!timing.isOk())
      return failure(timing.status().message());
    total.push_back(ms);
    h2d.push_back(timing.value().hostToDeviceMs);
    compute.push_back(timing.value().computeMs);
    d2h.push_back(timing.value().deviceToHostMs);
  }
  int64_t batch = 1;
  if (!session->engine->inputs().empty() && !session->engine->inputs()[0].shape.empty())
    batch = session->engine->inputs()[0].shape[0];
  double median = percentile(total, 0.5), p90 = percentile(total, 0.9), p99 = percentile(total, 0.99);
  double mh2d = percentile(h2d, 0.5), mcompute = percentile(compute, 0.5), md2h = percentile(d2h, 0.5);
  double copyShare = (mh2d + md2h) / std::max(1e-9, mh2d + mcompute + md2h);
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
    // The profile goes to stderr so stdout stays one JSON object.
    return profile ? printProfile(options.plan, *session, llvm::errs()) : kExitOk;
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
  if (profile)
    return printProfile(options.plan, *session, llvm::outs());
  return kExitOk;
}

} // namespace

std::unique_ptr<Command> makeBenchCommand(Categories &categories) {
  return std::make_unique<BenchCommand>(categories);
}

} // namespace kiln::cli
