//===- BenchCommand.cpp - `kiln bench` -------------------------------------===//

#include "Commands.h"
#include "RuntimeSession.h"

#include "runtime/plan/Plan.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>

namespace kiln::cli {

const char *const kBenchHelp = R"(kiln bench - time a plan on the GPU

USAGE: kiln bench <model.kiln> [options]

Runs the plan --warmup times untimed, then --iterations times, each one synchronous request:
input copies from pinned staging, the CUDA graph (or the steps with --no-graph), output copies.
Prints the median, p90 and p99 latency of whole requests (host clock), items per second (the
first input's leading dimension is the batch), and the split of the median request into
host-to-device copies, compute and device-to-host copies (CUDA events), with the share of
time spent copying.

OPTIONS:
  --iterations <n>           Timed runs (default 100)
  --warmup <n>               Untimed runs first (default 10)
  --json                     Print the figures as one JSON object
  --profile                  Also time every step alone (steps run one by one, events between
                             them) and print the slowest steps and the time by op (on
                             stderr with --json)
)";

namespace {

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  if (values.empty())
    return 0;
  size_t index = static_cast<size_t>(p * (values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

/// The slowest steps and the time by op, from one profiled pass.
int printProfile(const std::string &planPath, ExecutionContext &context, llvm::raw_ostream &os) {
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
    os << llvm::format("    %8.3f ms %5.1f%%  step %-4zu %-9s %-22s %s\n", times[order[i]],
                       100 * times[order[i]] / std::max(total, 1e-9), order[i], plan::stepRunner(step).data(), step.op.c_str(),
                       step.name.c_str());
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

} // namespace

int runBench(const std::vector<std::string> &args) {
  SessionOptions options;
  int64_t iterations = 100, warmup = 10;
  bool json = false, profile = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--help" || a == "-h") {
      llvm::outs() << kBenchHelp << kSessionOptionsHelp << "  --help                     Show this help\n\n"
                   << "EXIT STATUS: 0 on success, 1 when the plan cannot be loaded or run, 2 on a usage error.\n";
      return 0;
    }
    int consumed = parseSessionOption("bench", args, i, options);
    if (consumed < 0)
      return 2;
    if (consumed)
      continue;
    if (a == "--iterations" || a == "--warmup") {
      int64_t n = 0;
      if (i + 1 >= args.size() || llvm::StringRef(args[i + 1]).getAsInteger(10, n) || n < (a == "--warmup" ? 0 : 1)) {
        llvm::errs() << "kiln bench: " << a << " needs a count (" << (a == "--warmup" ? ">= 0" : ">= 1") << ")\n";
        return 2;
      }
      ++i;
      (a == "--iterations" ? iterations : warmup) = n;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--profile") {
      profile = true;
    } else if (!a.empty() && a[0] == '-') {
      llvm::errs() << "kiln bench: unknown option '" << a << "'; run 'kiln bench --help'\n";
      return 2;
    } else if (options.plan.empty()) {
      options.plan = a;
    } else {
      llvm::errs() << "kiln bench: more than one plan given\n";
      return 2;
    }
  }
  if (options.plan.empty()) {
    llvm::errs() << "kiln bench: no plan given; run 'kiln bench --help'\n";
    return 2;
  }
  auto session = openSession("bench", options);
  if (!session)
    return 1;
  for (int64_t w = 0; w < warmup; ++w)
    if (Status status = session->context->run(); !status.isOk()) {
      llvm::errs() << "kiln bench: error: " << status.message() << "\n";
      return 1;
    }
  std::vector<double> total, h2d, compute, d2h;
  for (int64_t it = 0; it < iterations; ++it) {
    auto start = std::chrono::steady_clock::now();
    auto timing = session->context->runTimed();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!timing.isOk()) {
      llvm::errs() << "kiln bench: error: " << timing.status().message() << "\n";
      return 1;
    }
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
    llvm::outs() << llvm::format("{\"plan\": \"%s\", \"iterations\": %lld, \"warmup\": %lld, \"batch\": %lld, "
                                 "\"cuda_graph\": %s, \"median_ms\": %.4f, \"p90_ms\": %.4f, \"p99_ms\": %.4f, "
                                 "\"items_per_s\": %.2f, \"h2d_ms\": %.4f, \"compute_ms\": %.4f, \"d2h_ms\": %.4f, "
                                 "\"copy_share\": %.4f, \"tuned\": %u, \"tuned_from_cache\": %u}\n",
                                 options.plan.c_str(), (long long)iterations, (long long)warmup, (long long)batch,
                                 options.useCudaGraph ? "true" : "false", median, p90, p99, itemsPerSecond, mh2d,
                                 mcompute, md2h, copyShare, tuning.tuned, tuning.fromCache);
    // The profile goes to stderr so stdout stays one JSON object.
    return profile ? printProfile(options.plan, *session->context, llvm::errs()) : 0;
  }
  llvm::outs() << "bench " << options.plan << ": " << iterations << " runs after " << warmup << " warm-up, batch "
               << batch << (options.useCudaGraph ? ", CUDA graph" : ", no graph") << "\n"
               << llvm::format("  latency   median %.3f ms   p90 %.3f ms   p99 %.3f ms\n", median, p90, p99)
               << llvm::format("  throughput %.1f items/s\n", itemsPerSecond)
               << llvm::format("  split (median)   host->device %.3f ms   compute %.3f ms   device->host %.3f ms"
                               "   copies %.0f%%\n",
                               mh2d, mcompute, md2h, 100 * copyShare)
               << "  tuning: " << tuning.tuned << " problems timed at load, " << tuning.fromCache
               << " from the timing cache\n";
  if (profile)
    return printProfile(options.plan, *session->context, llvm::outs());
  return 0;
}

} // namespace kiln::cli
