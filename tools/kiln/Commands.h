//===- Commands.h - the kiln CLI's subcommands -----------------*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include <string>
#include <vector>

namespace kiln::cli {

/// `kiln import`: ONNX to the kiln dialect. Returns the process exit code.
int runImport(const std::vector<std::string> &args);
extern const char *const kImportHelp;

/// `kiln eval`: the CPU reference interpreter on an ONNX or kiln MLIR model.
int runEval(const std::vector<std::string> &args);
extern const char *const kEvalHelp;

/// `kiln compile`: a model to a plan file (no GPU needed).
int runCompile(const std::vector<std::string> &args);
extern const char *const kCompileHelp;

/// `kiln inspect`: what a plan holds (text or JSON).
int runInspect(const std::vector<std::string> &args);
extern const char *const kInspectHelp;

/// `kiln run`: a plan once on the GPU.
int runRun(const std::vector<std::string> &args);

/// `kiln bench`: latency, throughput and the copy/compute split of a plan on the GPU.
int runBench(const std::vector<std::string> &args);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_COMMANDS_H
