//===- CommandLine.cpp - the kiln CLI on llvm::cl subcommands -------------===//

#include "CommandLine.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

int Command::usageError(const llvm::Twine &message) const {
  llvm::errs() << prefix() << ": " << message << "; run '" << prefix() << " --help'\n";
  return kExitUsage;
}

int Command::failure(const llvm::Twine &message) const {
  llvm::errs() << prefix() << ": error: " << message << "\n";
  return kExitFailure;
}

} // namespace kiln::cli
