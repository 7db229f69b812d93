//===- CommandLine.h - the kiln CLI on llvm::cl subcommands ----*- C++ -*-===//
//
// Every `kiln` command is an llvm::cl::SubCommand with its own options. Options that several
// commands share (the model and its shapes, the optimization pipeline, the inputs of a run)
// are small classes of which each command holds one, bound to its own subcommand, so one
// class says what such an option means. Nothing registers itself from a static initializer:
// main constructs the commands, then parses the command line.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_COMMANDLINE_H
#define KILN_TOOLS_KILN_COMMANDLINE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"

#include <string>
#include <vector>

namespace kiln::cli {

/// Every command's exit status: 0 on success, 1 when the work failed, 2 on a usage error.
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

/// The groups `kiln <command> --help` lists Kiln's options in. Everything else LLVM and MLIR
/// register (debug flags and the like) is hidden, so the help shows only what Kiln means.
struct Categories {
  llvm::cl::OptionCategory input{"Input options"};
  llvm::cl::OptionCategory optimization{"Optimization options"};
  llvm::cl::OptionCategory irPrinting{"IR printing options"};
  llvm::cl::OptionCategory output{"Output options"};
  llvm::cl::OptionCategory runtime{"Runtime options", "Loading and running the plan on the GPU"};

  std::vector<const llvm::cl::OptionCategory *> all() const {
    return {&input, &optimization, &irPrinting, &output, &runtime};
  }
};

/// One `kiln <name>` command: its subcommand (which its options are registered in), the prose
/// its --help starts with, and what it does once the command line parsed.
class Command {
public:
  /// `summary` is the line of `kiln --help`; `overview` the prose of `kiln <name> --help`.
  Command(llvm::StringRef name, llvm::StringRef summary, llvm::StringRef overview)
      : sub(name, summary), overviewText(overview) {}
  virtual ~Command() = default;
  Command(const Command &) = delete;
  Command &operator=(const Command &) = delete;

  llvm::StringRef name() const { return sub.getName(); }
  llvm::StringRef overview() const { return overviewText; }
  llvm::cl::SubCommand &subCommand() { return sub; }
  /// Whether the command line chose this command.
  bool isActive() const { return static_cast<bool>(sub); }

  /// Does the work; returns the exit status.
  virtual int run() = 0;

protected:
  /// Prints `kiln <name>: <message>; run 'kiln <name> --help'` and returns kExitUsage.
  int usageError(const llvm::Twine &message) const;
  /// Prints `kiln <name>: error: <message>` and returns kExitFailure.
  int failure(const llvm::Twine &message) const;
  /// `kiln <name>`, how messages start.
  std::string prefix() const { return ("kiln " + name()).str(); }

  llvm::cl::SubCommand sub;

private:
  llvm::StringRef overviewText;
};

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_COMMANDLINE_H
