//===- Commands.h - the kiln CLI's subcommands -----------------*- C++ -*-===//
#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include "CommandLine.h"

#include <memory>

namespace kiln::cli {

/// `kiln import`: ONNX to the kiln dialect.
std::unique_ptr<Command> makeImportCommand(Categories &categories);
/// `kiln eval`: the CPU reference interpreter on an ONNX or kiln MLIR model.
std::unique_ptr<Command> makeEvalCommand(Categories &categories);
/// `kiln calibrate`: activation ranges and weight scales for 8-bit quantization.
std::unique_ptr<Command> makeCalibrateCommand(Categories &categories);
/// `kiln compile`: a model to a plan file (no GPU needed).
std::unique_ptr<Command> makeCompileCommand(Categories &categories);
/// `kiln run`: a plan once on the GPU.
std::unique_ptr<Command> makeRunCommand(Categories &categories);
/// `kiln bench`: latency, throughput and the copy/compute split of a plan on the GPU.
std::unique_ptr<Command> makeBenchCommand(Categories &categories);
/// `kiln profile`: per-step time, achieved TFLOP/s and GB/s against the GPU's peaks, bottlenecks.
std::unique_ptr<Command> makeProfileCommand(Categories &categories);
/// `kiln compare`: two value dumps, error per ONNX value and the culprits.
std::unique_ptr<Command> makeCompareCommand(Categories &categories);
/// `kiln inspect`: what a plan holds (text or JSON).
std::unique_ptr<Command> makeInspectCommand(Categories &categories);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_COMMANDS_H
