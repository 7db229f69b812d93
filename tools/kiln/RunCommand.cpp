//===- RunCommand.cpp - `kiln run` -----------------------------------------===//

#include "Commands.h"
#include "RuntimeSession.h"
#include "StepAlgorithms.h"
#include "ValueDump.h"

#include "runtime/TensorData.h"
#include "runtime/plan/Plan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;

const char *const kRunOverview =
    R"(Loads the plan (checking it fits this GPU and these library versions; cuDNN/cuBLASLt choices
come from the timing cache or are timed now), sets the inputs, fills the activation arena with
0xFF (so an output element no step wrote shows as NaN), runs, and prints each output's
min/max/mean. With --output-dir each output is written as <output name>.npy (bf16 and f8 as
float32). With --dump it then runs the steps one by one and writes every intermediate ONNX
value the plan completes, for `kiln compare` against another plan or `kiln eval --dump`.

Exit status: 0 on success, 1 when the plan cannot be loaded or run, 2 on a usage error.
)";

class RunCommand : public Command {
public:
  explicit RunCommand(Categories &categories)
      : Command("run", "Run a plan once on the GPU (inputs from .npy or random)", kRunOverview),
        sessionFlags(sub, categories),
        outputDir("output-dir", cl::value_desc("dir"),
                  cl::desc("Where to write the outputs (default: print the summary only)"), cl::sub(sub),
                  cl::cat(categories.output)),
        dumpDir("dump", cl::value_desc("dir"),
                cl::desc("Then run the steps again one by one and write every ONNX value the plan\n"
                         "completes (kiln inspect: values=[...]) as <dir>/<NNNN>_<name>.npy with\n"
                         "<dir>/manifest.json, as computed (bf16 as float32, channels-last NHWC),\n"
                         "with the runner, algorithm and time (each step alone, median of 5) of the\n"
                         "step that completed it: the GPU side of `kiln compare`"),
                cl::sub(sub), cl::cat(categories.output)) {}

  int run() override;

private:
  /// `kiln run --dump`: every step's completed values through a ValueDumpWriter.
  int dumpValues(Session &session, const std::string &planPath, const std::string &dir);

  SessionFlags sessionFlags;
  cl::opt<std::string> outputDir;
  cl::opt<std::string> dumpDir;
};

int RunCommand::dumpValues(Session &session, const std::string &planPath, const std::string &dir) {
  auto writer = ValueDumpWriter::create(dir);
  if (!writer)
    return failure(llvm::toString(writer.takeError()));
  const plan::Plan &plan = session.engine->plan();
  const std::vector<plan::Step> &steps = plan.steps;
  // Each step timed alone as `kiln profile` times it (median of kTimingPasses), so kiln compare
  // can set the time of the step that completed a value beside its error.
  constexpr int kTimingPasses = 5;
  std::vector<std::vector<double>> samples(steps.size());
  for (int p = 0; p < kTimingPasses; ++p) {
    auto ms = session.context->profileSteps();
    if (!ms.isOk())
      return failure(ms.status().message());
    for (size_t i = 0; i < steps.size() && i < ms.value().size(); ++i)
      samples[i].push_back(ms.value()[i]);
  }
  std::vector<std::string> algorithms = session.engine->stepAlgorithms();
  std::vector<StepTiming> timings(steps.size());
  double stepsMs = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    timings[i].index = static_cast<int64_t>(i);
    timings[i].runner = std::string(plan::stepRunner(steps[i]));
    timings[i].algorithm = i < algorithms.size() ? algorithmLabel(algorithms[i]) : "";
    timings[i].ms = percentile(samples[i], 0.5);
    stepsMs += timings[i].ms;
  }
  Status status = session.context->runStepsObserved(
      [&](size_t i, std::vector<ExecutionContext::StepValue> values) -> Status {
        for (ExecutionContext::StepValue &value : values) {
          llvm::Error err = writer->add(value.name, runtime::npyFromBytes(value.bytes, value.dtype, value.shape),
                                        std::string(plan::dtypeName(value.dtype)), steps[i].op, steps[i].nodes, {},
                                        &timings[i]);
          if (err)
            return Status(runtime::StatusCode::kInvalidArgument, llvm::toString(std::move(err)));
        }
        return Status::ok();
      });
  if (!status.isOk())
    return failure(status.message());
  const plan::Metadata &m = plan.metadata;
  auto version = [](uint32_t v) { return std::to_string(v); };
  std::map<std::string, std::string> metadata{{"compiler", m.compilerVersion},
                                              {"precision", m.precision},
                                              {"model", m.model},
                                              {"compute_capability", version(m.computeCapability)},
                                              {"cuda", version(m.cudaVersion)},
                                              {"cudnn", version(m.cudnnVersion)},
                                              {"cublaslt", version(m.cublasLtVersion)},
                                              {"arena_bytes", std::to_string(m.arenaBytes)},
                                              {"weights_bytes", std::to_string(session.engine->weightsBytes())},
                                              {"steps", std::to_string(steps.size())}};
  if (!m.precisionOverrides.empty())
    metadata["precision_overrides"] = llvm::join(m.precisionOverrides, ",");
  if (!m.precisionChoice.empty())
    metadata["precision_choice"] = m.precisionChoice;
  metadata["plan"] = llvm::sys::path::filename(planPath).str();
  auto count = writer->finish("gpu", m.model, m.precision, metadata, stepsMs);
  if (!count)
    return failure(llvm::toString(count.takeError()));
  llvm::outs() << "dumped " << *count << " values into " << dir << "\n";
  return kExitOk;
}

int RunCommand::run() {
  auto parsed = sessionFlags.sessionOptions();
  if (!parsed)
    return usageError(llvm::toString(parsed.takeError()));
  const SessionOptions &options = *parsed;
  std::unique_ptr<Session> session = openSession(prefix(), options);
  if (!session)
    return kExitFailure;
  auto fail = [&](const Status &status) { return failure(status.message()); };
  if (Status status = session->context->poison(0xFF); !status.isOk())
    return fail(status);
  auto start = std::chrono::steady_clock::now();
  if (Status status = session->context->run(); !status.isOk())
    return fail(status);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!outputDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return fail(Status(runtime::StatusCode::kInvalidArgument,
                         "cannot create '" + outputDir + "': " + ec.message()));
  llvm::outs() << "ran " << options.plan << " in " << llvm::format("%.3f", ms) << " ms (first run)\n";
  for (const TensorDesc &output : session->engine->outputs()) {
    std::vector<uint8_t> bytes(output.bytes);
    if (Status status = session->context->getOutput(output.name, bytes.data(), bytes.size()); !status.isOk())
      return fail(status);
    runtime::TensorStats stats = runtime::statsOf(bytes, output.dtype);
    llvm::outs() << "  " << output.name << " " << plan::dtypeName(output.dtype) << "[";
    for (size_t d = 0; d < output.shape.size(); ++d)
      llvm::outs() << (d ? "x" : "") << output.shape[d];
    llvm::outs() << "] min " << llvm::format("%g", stats.min) << " max " << llvm::format("%g", stats.max)
                 << " mean " << llvm::format("%g", stats.mean);
    if (stats.nonFinite)
      llvm::outs() << " non-finite " << stats.nonFinite;
    llvm::outs() << "\n";
    if (outputDir.empty())
      continue;
    llvm::SmallString<256> path(outputDir);
    llvm::sys::path::append(path, runtime::npyFileName(output.name));
    Status status = runtime::writeNpy(std::string(path), runtime::npyFromBytes(bytes, output.dtype, output.shape));
    if (!status.isOk())
      return fail(status);
  }
  if (!dumpDir.empty())
    return dumpValues(*session, options.plan, dumpDir);
  return kExitOk;
}

} // namespace

std::unique_ptr<Command> makeRunCommand(Categories &categories) { return std::make_unique<RunCommand>(categories); }

} // namespace kiln::cli
