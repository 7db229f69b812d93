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

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_COMMANDS_H
