//===- RunCommand.cpp - `kiln run` -----------------------------------------===//

#include "Commands.h"
#include "PlanDump.h"
#include "RuntimeSession.h"

#include "runtime/TensorData.h"
#include "runtime/plan/Plan.h"

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
  SessionFlags sessionFlags;
  cl::opt<std::string> outputDir;
  cl::opt<std::string> dumpDir;
};

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
  if (!dumpDir.empty()) {
    auto count = dumpPlanValues(*session, options.plan, dumpDir);
    if (!count)
      return failure(llvm::toString(count.takeError()));
    llvm::outs() << "dumped " << *count << " values into " << dumpDir << "\n";
  }
  return kExitOk;
}

} // namespace

std::unique_ptr<Command> makeRunCommand(Categories &categories) { return std::make_unique<RunCommand>(categories); }

} // namespace kiln::cli
