//===- InspectCommand.cpp - `kiln inspect` ---------------------------------===//

#include "Commands.h"

#include "runtime/plan/Plan.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

namespace {

namespace cl = llvm::cl;

const char *const kInspectOverview =
    R"(Validates the plan (checksums, bounds) and prints its metadata (compiler and library
versions, target GPU, precision), inputs and outputs, every buffer (arena or weights, offset,
size), every step in execution order (generated kernel with its launch shape, cuBLASLt
matmul, cuDNN convolution or attention, copy), the kernel images, the arena size next to its
liveness lower bound, and the weights size. Each step lists the ONNX nodes it covers
(`nodes=[...]`): several for a fused step, none for a copy to an output. Needs no GPU.

Exit status: 0 on success, 1 when the file is not a valid plan, 2 on a usage error.
)";

class InspectCommand : public Command {
public:
  explicit InspectCommand(Categories &categories)
      : Command("inspect", "Show what a plan file holds: steps, kernels, buffers, arena, weights", kInspectOverview),
        plan(cl::Positional, cl::desc("<model.kiln>"), cl::sub(sub), cl::cat(categories.input)),
        json("json", cl::desc("The same content as JSON"), cl::sub(sub), cl::cat(categories.output)) {}

  int run() override {
    if (plan.empty())
      return usageError("no plan given");
    auto read = plan::readPlanFile(plan);
    if (!read.isOk())
      return failure(read.status().message());
    llvm::outs() << (json ? plan::planToJson(read.value()) : plan::planToText(read.value()));
    return kExitOk;
  }

private:
  cl::opt<std::string> plan;
  cl::opt<bool> json;
};

} // namespace

std::unique_ptr<Command> makeInspectCommand(Categories &categories) {
  return std::make_unique<InspectCommand>(categories);
}

} // namespace kiln::cli
