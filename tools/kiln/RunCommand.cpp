//===- RunCommand.cpp - `kiln run` -----------------------------------------===//

#include "Commands.h"
#include "RuntimeSession.h"

#include "runtime/TensorData.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

namespace kiln::cli {

const char *const kRunHelp = R"(kiln run - run a plan once on the GPU

USAGE: kiln run <model.kiln> [options]

Loads the plan (checking it fits this GPU and these library versions; cuDNN/cuBLASLt choices
come from the timing cache or are timed now), sets the inputs, fills the activation arena with
0xFF (so an output element no step wrote shows as NaN), runs, and prints each output's
min/max/mean. With --output-dir each output is written as <output name>.npy (bf16 and f8 as
float32).

OPTIONS:
  --output-dir <dir>         Where to write the outputs (default: print the summary only)
)";

int runRun(const std::vector<std::string> &args) {
  SessionOptions options;
  std::string outputDir;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "--help" || a == "-h") {
      llvm::outs() << kRunHelp << kSessionOptionsHelp << "  --help                     Show this help\n\n"
                   << "EXIT STATUS: 0 on success, 1 when the plan cannot be loaded or run, 2 on a usage error.\n";
      return 0;
    }
    int consumed = parseSessionOption("run", args, i, options);
    if (consumed < 0)
      return 2;
    if (consumed)
      continue;
    if (a == "--output-dir") {
      if (i + 1 >= args.size()) {
        llvm::errs() << "kiln run: --output-dir needs a value\n";
        return 2;
      }
      outputDir = args[++i];
    } else if (!a.empty() && a[0] == '-') {
      llvm::errs() << "kiln run: unknown option '" << a << "'; run 'kiln run --help'\n";
      return 2;
    } else if (options.plan.empty()) {
      options.plan = a;
    } else {
      llvm::errs() << "kiln run: more than one plan given\n";
      return 2;
    }
  }
  if (options.plan.empty()) {
    llvm::errs() << "kiln run: no plan given; run 'kiln run --help'\n";
    return 2;
  }
  auto session = openSession("run", options);
  if (!session)
    return 1;
  auto fail = [](const Status &status) {
    llvm::errs() << "kiln run: error: " << status.message() << "\n";
    return 1;
  };
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
  return 0;
}

} // namespace kiln::cli
