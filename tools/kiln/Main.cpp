//===- Main.cpp - the kiln command-line tool -------------------------------===//
//
// `kiln <command> [options]`. Each command parses its own options and prints its own --help.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

namespace {

const char *const kMainHelp = R"(kiln - compile ONNX models into static-shape plans for NVIDIA GPUs

USAGE: kiln <command> [options]

COMMANDS:
  import    Import an ONNX model into the kiln MLIR dialect (every shape static)
  eval      Run a model (ONNX or kiln MLIR) on the CPU reference interpreter
  compile   Compile a model into a plan file for the GPU runtime (no GPU needed)
  run       Run a plan once on the GPU (inputs from .npy or random)
  bench     Time a plan on the GPU: latency percentiles, throughput, copy/compute split
  inspect   Show what a plan file holds: steps, kernels, buffers, arena, weights

Run 'kiln <command> --help' for a command's options.

OPTIONS:
  --help      Show this help
  --version   Show the compiler version
)";

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") ||
      !std::strcmp(argv[1], "help")) {
    llvm::outs() << kMainHelp;
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    llvm::outs() << "kiln " << KILN_VERSION << "\n";
    return 0;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  std::string command = argv[1];
  if (command == "import")
    return kiln::cli::runImport(args);
  if (command == "eval")
    return kiln::cli::runEval(args);
  if (command == "compile")
    return kiln::cli::runCompile(args);
  if (command == "run")
    return kiln::cli::runRun(args);
  if (command == "bench")
    return kiln::cli::runBench(args);
  if (command == "inspect")
    return kiln::cli::runInspect(args);
  llvm::errs() << "kiln: unknown command '" << command << "'; run 'kiln --help' for the list\n";
  return 2;
}
