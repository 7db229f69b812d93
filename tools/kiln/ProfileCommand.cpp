//===- ProfileCommand.cpp - `kiln profile` ---------------------------------===//
//
// Where a plan's time goes on the GPU: the request split into copies and compute, every step
// timed alone with its achieved TFLOP/s and GB/s against the device's peaks (and so whether it
// is compute-, memory- or latency-bound), the time by op and by ONNX node, and the bottleneck.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "RuntimeSession.h"
#include "StepAlgorithms.h"

#include "runtime/plan/Plan.h"
#include "runtime/plan/StepWork.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;

const char *const kProfileOverview =
    R"(Loads the plan like `kiln run`, times --iterations whole requests (the CUDA graph between
the input and output copies) and then runs the steps one by one --passes times with a CUDA
event between consecutive steps, keeping each step's median. For every step it prints the time,
its share of the step total, the work it does (FLOPs of convolutions, matmuls and attention;
bytes of the distinct buffers it touches) as achieved TFLOP/s and GB/s, each against the GPU's
peak for the step's math (bf16/fp16 or TF32 tensor cores, fp32 CUDA cores; DRAM bandwidth),
and what bounds it: compute or memory (the larger fraction of its peak); when both are under
10%, latency for a step under 50 us (launch, a tail too small to fill the GPU) and underused
for a longer one (its kernel does not fit the problem). Then the time by op, by
ONNX node (a fused step's time is split evenly over the nodes it covers) and the bottleneck:
the slowest step.

Step times include the launch gap before each step, so their total exceeds the graph's compute
time; shares are of the step total. FLOP peaks come from a per-architecture table (sm_80,
sm_90); on other GPUs only the bandwidth fraction is shown.

Exit status: 0 on success, 1 when the plan cannot be loaded or run, 2 on a usage error.
)";

/// A step at this fraction of a peak is bound by it; below it on both, a short step is bound
/// by latency (launch, a tail too small for the GPU) and a long one underuses the GPU (its
/// kernel does not fit the problem, e.g. a 3-channel stem convolution).
constexpr double kBusy = 0.1;
constexpr double kShortStepMs = 0.05;

struct StepRow {
  size_t index = 0;
  const plan::Step *step = nullptr;
  std::string algorithm; // label, empty for kernels and copies
  double ms = 0, share = 0;
  plan::StepWork work;
  double tflops = 0, gbs = 0;
  double computeFraction = 0, memoryFraction = 0; // of the peaks; 0 where unknown
  const char *bound = "latency"; // compute, memory, latency or underused
};

double peakFor(const DevicePeaks &peaks, plan::MathClass math) {
  switch (math) {
  case plan::MathClass::Half: return peaks.halfTflops;
  case plan::MathClass::Eight: return peaks.eightBitTflops;
  case plan::MathClass::Tf32: return peaks.tf32Tflops;
  case plan::MathClass::Fp32: return peaks.fp32Tflops;
  case plan::MathClass::None: return 0;
  }
  return 0;
}

/// A time split among keys (op or ONNX node), with the steps that contributed.
struct Group {
  std::string key;
  double ms = 0;
  std::vector<size_t> steps;
};

std::vector<Group> sortedGroups(std::map<std::string, Group> groups) {
  std::vector<Group> out;
  for (auto &[key, group] : groups)
    out.push_back(std::move(group));
  std::stable_sort(out.begin(), out.end(), [](const Group &a, const Group &b) { return a.ms > b.ms; });
  return out;
}

class ProfileCommand : public Command {
public:
  explicit ProfileCommand(Categories &categories)
      : Command("profile", "Where a plan's GPU time goes: per-step time, TFLOP/s and GB/s, bottlenecks",
                kProfileOverview),
        sessionFlags(sub, categories),
        passes("passes", cl::value_desc("n"), cl::init(5),
               cl::desc("Step-by-step passes; each step's median is kept (default 5)"), cl::sub(sub),
               cl::cat(categories.runtime)),
        iterations("iterations", cl::value_desc("n"), cl::init(20),
                   cl::desc("Timed whole requests for the copy/compute split (default 20)"), cl::sub(sub),
                   cl::cat(categories.runtime)),
        warmup("warmup", cl::value_desc("n"), cl::init(5), cl::desc("Untimed requests first (default 5)"),
               cl::sub(sub), cl::cat(categories.runtime)),
        top("top", cl::value_desc("n"), cl::init(10),
            cl::desc("Steps and ONNX nodes listed, slowest first (default 10; 0: all)"), cl::sub(sub),
            cl::cat(categories.output)),
        json("json", cl::desc("Print one JSON object: every step, the groups and the bottleneck"), cl::sub(sub),
             cl::cat(categories.output)) {}

  int run() override;

private:
  void printText(const std::string &planPath, const DevicePeaks &peaks, const RequestTimes &request,
                 const std::vector<StepRow> &rows, const std::vector<Group> &byOp,
                 const std::vector<Group> &byNode, double total) const;
  llvm::json::Object toJson(const std::string &planPath, const std::string &device, const DevicePeaks &peaks,
                            const RequestTimes &request, const std::vector<StepRow> &rows,
                            const std::vector<Group> &byOp, const std::vector<Group> &byNode, double total) const;

  SessionFlags sessionFlags;
  cl::opt<int64_t> passes;
  cl::opt<int64_t> iterations;
  cl::opt<int64_t> warmup;
  cl::opt<int64_t> top;
  cl::opt<bool> json;
};

int ProfileCommand::run() {
  auto parsed = sessionFlags.sessionOptions();
  if (!parsed)
    return usageError(llvm::toString(parsed.takeError()));
  const SessionOptions &options = *parsed;
  if (passes < 1 || iterations < 1 || warmup < 0 || top < 0)
    return usageError(passes < 1       ? "--passes needs a count >= 1"
                      : iterations < 1 ? "--iterations needs a count >= 1"
                      : warmup < 0     ? "--warmup needs a count >= 0"
                                       : "--top needs a count >= 0");
  std::unique_ptr<Session> session = openSession(prefix(), options);
  if (!session)
    return kExitFailure;
  const plan::Plan &plan = session->engine->plan();
  auto peaks = session->runtime->devicePeaks();
  if (!peaks.isOk())
    return failure(peaks.status().message());
  auto request = timeRequests(*session->context, warmup, iterations);
  if (!request.isOk())
    return failure(request.status().message());

  const std::vector<plan::Step> &steps = plan.steps;
  std::vector<std::vector<double>> samples(steps.size());
  for (int64_t p = 0; p < passes; ++p) {
    auto ms = session->context->profileSteps();
    if (!ms.isOk())
      return failure(ms.status().message());
    if (ms.value().size() != steps.size())
      return failure("internal: the engine timed " + std::to_string(ms.value().size()) + " steps of a plan with " +
                     std::to_string(steps.size()));
    for (size_t i = 0; i < steps.size(); ++i)
      samples[i].push_back(ms.value()[i]);
  }
  std::vector<std::string> algorithms = session->engine->stepAlgorithms();
  std::vector<StepRow> rows(steps.size());
  double total = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    StepRow &row = rows[i];
    row.index = i;
    row.step = &steps[i];
    row.algorithm = i < algorithms.size() ? algorithmLabel(algorithms[i]) : "";
    row.ms = percentile(samples[i], 0.5);
    total += row.ms;
    row.work = plan::stepWork(plan, steps[i]);
    double seconds = std::max(row.ms, 1e-6) * 1e-3;
    row.tflops = row.work.flops / seconds / 1e12;
    row.gbs = row.work.bytes / seconds / 1e9;
    double flopPeak = peakFor(peaks.value(), row.work.math);
    row.computeFraction = flopPeak > 0 ? row.tflops / flopPeak : 0;
    row.memoryFraction = peaks.value().memoryGBs > 0 ? row.gbs / peaks.value().memoryGBs : 0;
    double busiest = std::max(row.computeFraction, row.memoryFraction);
    row.bound = busiest >= kBusy ? (row.computeFraction >= row.memoryFraction ? "compute" : "memory")
                : row.ms < kShortStepMs ? "latency"
                                        : "underused";
  }
  std::map<std::string, Group> ops, nodes;
  for (StepRow &row : rows) {
    row.share = row.ms / std::max(total, 1e-12);
    std::string opKey = row.step->op + " (" + std::string(plan::stepRunner(*row.step)) + ")";
    Group &op = ops[opKey];
    op.key = opKey;
    op.ms += row.ms;
    op.steps.push_back(row.index);
    // Copies for graph outputs cover no node: they go under their own name.
    std::vector<std::string> covered = row.step->nodes;
    if (covered.empty())
      covered.push_back(row.step->name);
    for (const std::string &node : covered) {
      Group &group = nodes[node];
      group.key = node;
      group.ms += row.ms / covered.size();
      group.steps.push_back(row.index);
    }
  }
  std::vector<Group> byOp = sortedGroups(std::move(ops)), byNode = sortedGroups(std::move(nodes));
  if (json) {
    llvm::outs() << llvm::json::Value(toJson(options.plan, session->runtime->deviceName(), peaks.value(),
                                             request.value(), rows, byOp, byNode, total))
                 << "\n";
    return kExitOk;
  }
  printText(options.plan, peaks.value(), request.value(), rows, byOp, byNode, total);
  return kExitOk;
}

/// "12.3 (4%)" or "-" where the figure or its peak is unknown.
std::string rateText(double value, double fraction, bool known) {
  if (!known)
    return "-";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format(value >= 100 ? "%.0f" : "%.1f", value);
  if (fraction > 0)
    os << llvm::format(" (%.0f%%)", 100 * fraction);
  return text;
}

void ProfileCommand::printText(const std::string &planPath, const DevicePeaks &peaks, const RequestTimes &request,
                               const std::vector<StepRow> &rows, const std::vector<Group> &byOp,
                               const std::vector<Group> &byNode, double total) const {
  llvm::raw_ostream &os = llvm::outs();
  os << "profile " << planPath << "\n";
  os << llvm::format("  device: %d SMs at %.2f GHz; peaks: ", peaks.smCount, peaks.smClockGHz);
  if (peaks.halfTflops > 0)
    os << llvm::format("int8/fp8 %.0f, bf16/fp16 %.0f, tf32 %.0f, fp32 %.0f TFLOP/s; ", peaks.eightBitTflops,
                       peaks.halfTflops, peaks.tf32Tflops, peaks.fp32Tflops);
  else
    os << "FLOP peaks unknown for this architecture; ";
  os << llvm::format("DRAM %.0f GB/s\n", peaks.memoryGBs);
  os << llvm::format("  request (median of %lld): %.3f ms; host->device %.3f ms, compute %.3f ms, device->host "
                     "%.3f ms; copies %.1f%%\n",
                     (long long)iterations, request.medianMs, request.hostToDeviceMs, request.computeMs,
                     request.deviceToHostMs, 100 * request.copyShare());
  os << llvm::format("  steps one by one (median of %lld passes): %zu steps, %.3f ms with launch gaps\n",
                     (long long)passes, rows.size(), total);
  if (rows.empty())
    return;
  std::vector<const StepRow *> order;
  for (const StepRow &row : rows)
    order.push_back(&row);
  std::stable_sort(order.begin(), order.end(), [](const StepRow *a, const StepRow *b) { return a->ms > b->ms; });
  const StepRow &worst = *order.front();
  os << llvm::format("  bottleneck: step %zu %s (%s, %s) %.3f ms, %.1f%% of the step time, %s-bound\n", worst.index,
                     worst.step->name.c_str(), worst.step->op.c_str(), plan::stepRunner(*worst.step).data(), worst.ms,
                     100 * worst.share, worst.bound);
  size_t shown = top == 0 ? order.size() : std::min<size_t>(top, order.size());
  os << "\n  slowest steps:\n";
  os << llvm::format("  %9s %6s %15s %15s %-8s %5s %-9s %-20s %s\n", "ms", "share", "TFLOP/s (peak)",
                     "GB/s (peak)", "bound", "step", "runner", "op", "name [algorithm]");
  for (size_t i = 0; i < shown; ++i) {
    const StepRow &row = *order[i];
    os << llvm::format("  %9.4f %5.1f%% %15s %15s %-8s %5zu %-9s %-20s ", row.ms, 100 * row.share,
                       rateText(row.tflops, row.computeFraction, row.work.flops > 0).c_str(),
                       rateText(row.gbs, row.memoryFraction, true).c_str(), row.bound, row.index,
                       plan::stepRunner(*row.step).data(), row.step->op.c_str())
       << row.step->name << (row.algorithm.empty() ? "" : "  [" + row.algorithm + "]") << "\n";
  }
  os << "\n  by op:\n";
  for (const Group &group : byOp)
    os << llvm::format("  %9.4f %5.1f%% %5zu x ", group.ms, 100 * group.ms / std::max(total, 1e-12),
                       group.steps.size())
       << group.key << "\n";
  size_t nodesShown = top == 0 ? byNode.size() : std::min<size_t>(top, byNode.size());
  os << "\n  slowest ONNX nodes (a fused step's time split over its nodes):\n";
  for (size_t i = 0; i < nodesShown; ++i) {
    const Group &group = byNode[i];
    os << llvm::format("  %9.4f %5.1f%%  ", group.ms, 100 * group.ms / std::max(total, 1e-12)) << group.key;
    if (group.steps.size() == 1)
      os << "  (step " << group.steps.front() << ")";
    else
      os << "  (" << group.steps.size() << " steps)";
    os << "\n";
  }
}

llvm::json::Object ProfileCommand::toJson(const std::string &planPath, const std::string &device,
                                          const DevicePeaks &peaks, const RequestTimes &request,
                                          const std::vector<StepRow> &rows, const std::vector<Group> &byOp,
                                          const std::vector<Group> &byNode, double total) const {
  llvm::json::Array stepArray;
  size_t worst = 0;
  for (const StepRow &row : rows) {
    if (row.ms > rows[worst].ms)
      worst = row.index;
    llvm::json::Array covered;
    for (const std::string &node : row.step->nodes)
      covered.push_back(node);
    stepArray.push_back(llvm::json::Object{{"index", int64_t(row.index)},
                                           {"name", row.step->name},
                                           {"op", row.step->op},
                                           {"runner", std::string(plan::stepRunner(*row.step))},
                                           {"nodes", std::move(covered)},
                                           {"algorithm", row.algorithm},
                                           {"ms", row.ms},
                                           {"share", row.share},
                                           {"flops", row.work.flops},
                                           {"bytes", int64_t(row.work.bytes)},
                                           {"math", std::string(plan::mathClassName(row.work.math))},
                                           {"tflops", row.tflops},
                                           {"gbs", row.gbs},
                                           {"compute_fraction", row.computeFraction},
                                           {"memory_fraction", row.memoryFraction},
                                           {"bound", row.bound}});
  }
  auto groups = [&](const std::vector<Group> &list, const char *keyName) {
    llvm::json::Array out;
    for (const Group &group : list) {
      llvm::json::Array indices;
      for (size_t index : group.steps)
        indices.push_back(int64_t(index));
      out.push_back(llvm::json::Object{{keyName, group.key},
                                       {"ms", group.ms},
                                       {"share", group.ms / std::max(total, 1e-12)},
                                       {"steps", std::move(indices)}});
    }
    return out;
  };
  llvm::json::Object result{
      {"plan", planPath},
      {"device", llvm::json::Object{{"name", device},
                                    {"sm_count", peaks.smCount},
                                    {"sm_clock_ghz", peaks.smClockGHz},
                                    {"memory_gbs", peaks.memoryGBs},
                                    {"eight_bit_tflops", peaks.eightBitTflops},
                                    {"half_tflops", peaks.halfTflops},
                                    {"tf32_tflops", peaks.tf32Tflops},
                                    {"fp32_tflops", peaks.fp32Tflops}}},
      {"request", llvm::json::Object{{"iterations", int64_t(iterations)},
                                     {"median_ms", request.medianMs},
                                     {"h2d_ms", request.hostToDeviceMs},
                                     {"compute_ms", request.computeMs},
                                     {"d2h_ms", request.deviceToHostMs},
                                     {"copy_share", request.copyShare()}}},
      {"passes", int64_t(passes)},
      {"steps_ms", total},
      {"steps", std::move(stepArray)},
      {"by_op", groups(byOp, "op")},
      {"by_node", groups(byNode, "node")}};
  if (!rows.empty()) {
    const StepRow &row = rows[worst];
    result["bottleneck"] = llvm::json::Object{{"index", int64_t(row.index)}, {"name", row.step->name},
                                              {"op", row.step->op},          {"share", row.share},
                                              {"ms", row.ms},                {"bound", row.bound}};
  }
  return result;
}

} // namespace

std::unique_ptr<Command> makeProfileCommand(Categories &categories) {
  return std::make_unique<ProfileCommand>(categories);
}

} // namespace kiln::cli
