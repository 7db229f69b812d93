//===- InspectCommand.cpp - `kiln inspect` ---------------------------------===//

#include "Commands.h"

#include "runtime/plan/Plan.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

const char *const kInspectHelp = R"(kiln inspect - show what a plan file holds

USAGE: kiln inspect <model.kiln> [--json]

Validates the plan (checksums, bounds) and prints its metadata (compiler and library
versions, target GPU, precision), inputs and outputs, every buffer (arena or weights, offset,
size), every step in execution order (generated kernel with its launch shape, cuBLASLt
matmul, cuDNN convolution, copy), the kernel images, the arena size next to its liveness
lower bound, and the weights size. Needs no GPU.

OPTIONS:
  --json      The same content as JSON
  --help      Show this help

EXIT STATUS: 0 on success, 1 when the file is not a valid plan, 2 on a usage error.
)";

int runInspect(const std::vector<std::string> &args) {
  std::string path;
  bool json = false;
  for (const std::string &a : args) {
    if (a == "--help" || a == "-h") {
      llvm::outs() << kInspectHelp;
      return 0;
    }
    if (a == "--json") {
      json = true;
    } else if (!a.empty() && a[0] == '-') {
      llvm::errs() << "kiln inspect: unknown option '" << a << "'; run 'kiln inspect --help'\n";
      return 2;
    } else if (path.empty()) {
      path = a;
    } else {
      llvm::errs() << "kiln inspect: more than one plan given\n";
      return 2;
    }
  }
  if (path.empty()) {
    llvm::errs() << "kiln inspect: no plan given; run 'kiln inspect --help'\n";
    return 2;
  }
  auto plan = plan::readPlanFile(path);
  if (!plan.isOk()) {
    llvm::errs() << "kiln inspect: error: " << plan.status().message() << "\n";
    return 1;
  }
  llvm::outs() << (json ? plan::planToJson(plan.value()) : plan::planToText(plan.value()));
  return 0;
}

} // namespace kiln::cli
