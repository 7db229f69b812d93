//===- RuntimeSession.cpp - load a plan and feed its inputs ---------------===//

#include "RuntimeSession.h"

#include "runtime/TensorData.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <random>

namespace kiln::cli {

namespace cl = llvm::cl;

namespace {

std::string defaultTimingCache() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kiln/timing_cache.txt";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/kiln/timing_cache.txt";
  return "";
}

} // namespace

SessionFlags::SessionFlags(cl::SubCommand &sub, Categories &categories)
    : plan(cl::Positional, cl::desc("<model.kiln>"), cl::sub(sub), cl::cat(categories.input)),
      inputs(sub, categories),
      timingCache("timing-cache", cl::value_desc("file"),
                  cl::desc("Where tuned cuDNN/cuBLASLt choices are kept (default\n"
                                 "$XDG_CACHE_HOME/kiln/timing_cache.txt or ~/.cache/kiln/...),\n"
                                 "compiled cuDNN plans beside it in <stem>.cudnn-plans/;\n"
                                 "'none' tunes and compiles in memory only"),
                  cl::sub(sub), cl::cat(categories.runtime)),
      noGraph("no-graph", cl::desc("Run the steps one by one instead of replaying a CUDA graph"),
              cl::sub(sub), cl::cat(categories.runtime)),
      quiet("quiet", cl::desc("No progress on stderr"), cl::sub(sub), cl::cat(categories.output)) {}

llvm::Expected<SessionOptions> SessionFlags::sessionOptions() const {
  if (plan.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no plan given");
  auto files = inputs.inputFiles();
  if (!files)
    return files.takeError();
  SessionOptions options;
  options.plan = plan;
  options.inputFiles = std::move(*files);
  options.seed = inputs.seed();
  options.useCudaGraph = !noGraph;
  options.timingCache = timingCache;
  options.quiet = quiet;
  return options;
}

std::unique_ptr<Session> openSession(const std::string &prefix, const SessionOptions &options) {
  auto fail = [&](const Status &status) -> std::unique_ptr<Session> {
    llvm::errs() << prefix << ": error: " << status.message() << "\n";
    return nullptr;
  };
  RuntimeOptions runtimeOptions;
  runtimeOptions.timingCachePath = options.timingCache.empty()   ? defaultTimingCache()
                                   : options.timingCache == "none" ? ""
                                                                   : options.timingCache;
  if (!options.quiet)
    runtimeOptions.progress = [prefix](const std::string &line) {
      llvm::errs() << prefix << ": " << line << "\n";
    };
  auto session = std::make_unique<Session>();
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  Clock::time_point phase = Clock::now();
  auto runtime = Runtime::create(runtimeOptions);
  if (!runtime.isOk())
    return fail(runtime.status());
  session->runtime = std::move(runtime.value());
  session->runtimeSeconds = since(phase);
  phase = Clock::now();
  auto engine = session->runtime->loadEngine(options.plan);
  if (!engine.isOk())
    return fail(engine.status());
  session->engine = std::move(engine.value());
  session->engineSeconds = since(phase);
  phase = Clock::now();
  ContextOptions contextOptions;
  contextOptions.useCudaGraph = options.useCudaGraph;
  auto context = session->engine->createContext(contextOptions);
  if (!context.isOk())
    return fail(context.status());
  session->context = std::move(context.value());
  session->contextSeconds = since(phase);
  phase = Clock::now();

  std::mt19937_64 rng(options.seed);
  std::map<std::string, std::string> unused = options.inputFiles;
  for (const TensorDesc &input : session->engine->inputs()) {
    plan::TensorBinding binding{input.name, input.dtype, input.shape, 0};
    std::vector<uint8_t> bytes;
    auto file = options.inputFiles.find(input.name);
    if (file == options.inputFiles.end()) {
      int64_t count = 1;
      for (int64_t d : input.shape)
        count *= d;
      bytes = runtime::randomBytes(input.dtype, count, rng);
    } else {
      unused.erase(input.name);
      auto array = runtime::readNpy(file->second);
      if (!array.isOk())
        return fail(array.status());
      auto converted = runtime::bytesFromNpy(array.value(), binding);
      if (!converted.isOk())
        return fail(converted.status());
      bytes = std::move(converted.value());
    }
    if (Status status = session->context->setInput(input.name, bytes.data(), bytes.size()); !status.isOk())
      return fail(status);
  }
  if (!unused.empty())
    return fail(Status(runtime::StatusCode::kInvalidArgument,
                       "--input names '" + unused.begin()->first + "', which is not an input of the plan"));
  session->inputSeconds = since(phase);
  return session;
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  if (values.empty())
    return 0;
  size_t index = static_cast<size_t>(p * (values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

double RequestTimes::copyShare() const {
  return (hostToDeviceMs + deviceToHostMs) / std::max(1e-9, hostToDeviceMs + computeMs + deviceToHostMs);
}

StatusOr<RequestTimes> timeRequests(ExecutionContext &context, int64_t warmup, int64_t iterations) {
  for (int64_t w = 0; w < warmup; ++w)
    if (Status status = context.run(); !status.isOk())
      return status;
  std::vector<double> total, h2d, compute, d2h;
  for (int64_t it = 0; it < iterations; ++it) {
    auto start = std::chrono::steady_clock::now();
    auto timing = context.runTimed();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!timing.isOk())
      return timing.status();
    total.push_back(ms);
    h2d.push_back(timing.value().hostToDeviceMs);
    compute.push_back(timing.value().computeMs);
    d2h.push_back(timing.value().deviceToHostMs);
  }
  RequestTimes times;
  times.medianMs = percentile(total, 0.5);
  times.p90Ms = percentile(total, 0.9);
  times.p99Ms = percentile(total, 0.99);
  times.hostToDeviceMs = percentile(h2d, 0.5);
  times.computeMs = percentile(compute, 0.5);
  times.deviceToHostMs = percentile(d2h, 0.5);
  return times;
}

} // namespace kiln::cli
