//===- RuntimeSession.cpp - load a plan and feed its inputs ---------------===//

#include "RuntimeSession.h"

#include "runtime/TensorData.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <random>

namespace kiln::cli {

const char *const kSessionOptionsHelp =
    R"(  --input <name>=<file.npy>  Value of a plan input (repeatable); inputs not given are random
                             with a fixed seed, the same values `kiln eval` uses
  --seed <n>                 Seed of the random inputs (default 0)
  --timing-cache <file>      Where tuned cuDNN/cuBLASLt choices are kept (default
                             $XDG_CACHE_HOME/kiln/timing_cache.txt or ~/.cache/kiln/...;
                             'none' tunes in memory only)
  --no-graph                 Run the steps one by one instead of replaying a CUDA graph
  --quiet                    No progress on stderr
)";

namespace {

std::string defaultTimingCache() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/kiln/timing_cache.txt";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/kiln/timing_cache.txt";
  return "";
}

} // namespace

int parseSessionOption(const std::string &command, const std::vector<std::string> &args, size_t &i,
                       SessionOptions &options) {
  const std::string &a = args[i];
  if (a == "--no-graph") {
    options.useCudaGraph = false;
    return 1;
  }
  if (a == "--quiet") {
    options.quiet = true;
    return 1;
  }
  if (a != "--input" && a != "--seed" && a != "--timing-cache")
    return 0;
  if (i + 1 >= args.size()) {
    llvm::errs() << "kiln " << command << ": " << a << " needs a value\n";
    return -1;
  }
  const std::string &v = args[++i];
  if (a == "--seed") {
    if (llvm::StringRef(v).getAsInteger(10, options.seed)) {
      llvm::errs() << "kiln " << command << ": --seed '" << v << "' is not a number\n";
      return -1;
    }
  } else if (a == "--timing-cache") {
    options.timingCache = v;
  } else {
    auto [name, file] = llvm::StringRef(v).split('=');
    if (name.empty() || file.empty()) {
      llvm::errs() << "kiln " << command << ": --input '" << v << "' is not name=file.npy\n";
      return -1;
    }
    options.inputFiles[name.str()] = file.str();
  }
  return 1;
}

std::unique_ptr<Session> openSession(const std::string &command, const SessionOptions &options) {
  auto fail = [&](const Status &status) -> std::unique_ptr<Session> {
    llvm::errs() << "kiln " << command << ": error: " << status.message() << "\n";
    return nullptr;
  };
  RuntimeOptions runtimeOptions;
  runtimeOptions.timingCachePath = options.timingCache.empty()   ? defaultTimingCache()
                                   : options.timingCache == "none" ? ""
                                                                   : options.timingCache;
  if (!options.quiet)
    runtimeOptions.progress = [command](const std::string &line) {
      llvm::errs() << "kiln " << command << ": " << line << "\n";
    };
  auto session = std::make_unique<Session>();
  auto runtime = Runtime::create(runtimeOptions);
  if (!runtime.isOk())
    return fail(runtime.status());
  session->runtime = std::move(runtime.value());
  auto engine = session->runtime->loadEngine(options.plan);
  if (!engine.isOk())
    return fail(engine.status());
  session->engine = std::move(engine.value());
  ContextOptions contextOptions;
  contextOptions.useCudaGraph = options.useCudaGraph;
  auto context = session->engine->createContext(contextOptions);
  if (!context.isOk())
    return fail(context.status());
  session->context = std::move(context.value());

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
  return session;
}

} // namespace kiln::cli
