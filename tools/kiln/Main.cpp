//===- Main.cpp - the kiln command-line tool -------------------------------===//
//
// `kiln <command> [options]`: each command is an llvm::cl subcommand (Commands.h). main builds
// them, parses the command line once and runs the command it names.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace cl = llvm::cl;
using namespace kiln::cli;

static const char *const kOverview =
    R"(kiln - compile ONNX models into static-shape plans for NVIDIA GPUs

Every command exits with 0 on success, 1 when its work failed (the error names the ONNX node
and its op where there is one), 2 on a usage error.
)";

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  Categories categories;
  std::unique_ptr<Command> commands[] = {
      makeImportCommand(categories),  makeEvalCommand(categories),    makeCalibrateCommand(categories),
      makeCompileCommand(categories), makeRunCommand(categories),     makeBenchCommand(categories),
      makeProfileCommand(categories), makeCompareCommand(categories), makeInspectCommand(categories)};

  // `kiln <command> --help` starts with that command's prose. llvm::cl takes the subcommand
  // from the first argument in the same way: a word that names one.
  llvm::StringRef overview = kOverview;
  for (const std::unique_ptr<Command> &command : commands)
    if (argc >= 2 && command->name() == argv[1])
      overview = command->overview();

  // The options LLVM and MLIR register for themselves (debug flags and the like) mean nothing
  // to a Kiln user; --help shows Kiln's options and the generic ones (--help, --version).
  std::vector<const cl::OptionCategory *> kilnCategories = categories.all();
  cl::HideUnrelatedOptions(kilnCategories);
  for (const std::unique_ptr<Command> &command : commands)
    cl::HideUnrelatedOptions(kilnCategories, command->subCommand());
  cl::SetVersionPrinter([](llvm::raw_ostream &os) { os << "kiln " << KILN_VERSION << "\n"; });

  // Given an error stream, llvm::cl reports a bad command line and returns false instead of
  // exiting with 1: a usage error exits with 2. --help and --version exit 0 from inside.
  if (!cl::ParseCommandLineOptions(argc, argv, overview, &llvm::errs(), /*VFS=*/nullptr, /*EnvVar=*/nullptr,
                                   /*LongOptionsUseDoubleDash=*/true))
    return kExitUsage;
  for (const std::unique_ptr<Command> &command : commands)
    if (command->isActive())
      return command->run();
  cl::PrintHelpMessage();
  return kExitUsage;
}
