//===- RuntimeSession.h - load a plan and feed its inputs ------*- C++ -*-===//
//
// What `kiln run` and `kiln bench` share: the options that pick inputs and the timing cache,
// loading the engine with progress on stderr, and one execution context with its inputs set.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_RUNTIMESESSION_H
#define KILN_TOOLS_KILN_RUNTIMESESSION_H

#include "runtime/Runtime.h"

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

/// Consumes a session option at args[i] (advancing i past its value). Returns 1 when consumed,
/// 0 when args[i] is not a session option, -1 on a usage error (already printed).
int parseSessionOption(const std::string &command, const std::vector<std::string> &args, size_t &i,
                       SessionOptions &options);
/// The help lines of the session options.
extern const char *const kSessionOptionsHelp;

struct Session {
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<ExecutionContext> context;
};

/// Loads the plan, creates one context and sets every input (from its file or random).
/// Errors are printed with the command name; nullopt then.
std::unique_ptr<Session> openSession(const std::string &command, const SessionOptions &options);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_RUNTIMESESSION_H
