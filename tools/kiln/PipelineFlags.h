//===- PipelineFlags.h - the optimization pipeline's options ---*- C++ -*-===//
//
// `kiln compile`, `kiln eval` and `kiln import` take the same options for the optimization
// pipeline (passes/Pipelines.h) and run it the same way, with the same IR printing, so that
// the interpreter can run exactly the module a plan is built from.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_PIPELINEFLAGS_H
#define KILN_TOOLS_KILN_PIPELINEFLAGS_H

#include "CommandLine.h"

#include "passes/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {
/// What `--precision` names: one precision, or auto (`kiln compile` only: the precision search
/// of PrecisionSearch.h picks it under an error budget).
struct PrecisionFlag {
  std::optional<Precision> fixed; // std::nullopt: auto
  /// "fp8": a bf16 plan whose linear layers run as FP8 GEMMs; "int8": a bf16 plan whose
  /// convolutions run as INT8 cuDNN convolutions; empty: no 8-bit quantization.
  std::string quantization;
};
} // namespace kiln::cli

// llvm::cl parses values of a new type through a specialization of cl::parser.
namespace llvm::cl {

/// `--precision`: kiln::parsePrecision or "auto"; anything else is a usage error naming the
/// choices.
template <> class parser<kiln::cli::PrecisionFlag> : public basic_parser<kiln::cli::PrecisionFlag> {
public:
  parser(Option &option) : basic_parser(option) {}
  bool parse(Option &option, StringRef argName, StringRef arg, kiln::cli::PrecisionFlag &value);
  void printOptionDiff(const Option &option, const kiln::cli::PrecisionFlag &, const OptVal &,
                       size_t globalWidth) const {
    printOptionNoValue(option, globalWidth);
  }
};

/// `--precision`: kiln::parsePrecision; anything else is a usage error naming the choices.
template <> class parser<kiln::Precision> : public basic_parser<kiln::Precision> {
public:
  parser(Option &option) : basic_parser(option) {}
  bool parse(Option &option, StringRef argName, StringRef arg, kiln::Precision &value);
  void printOptionDiff(const Option &option, kiln::Precision, const OptVal &, size_t globalWidth) const {
    printOptionNoValue(option, globalWidth);
  }
};

/// One `--force-precision` value, NAME=PRECISION: kiln::parsePrecisionOverride.
template <> class parser<kiln::PrecisionOverride> : public basic_parser<kiln::PrecisionOverride> {
public:
  parser(Option &option) : basic_parser(option) {}
  bool parse(Option &option, StringRef argName, StringRef arg, kiln::PrecisionOverride &value);
  void printOptionDiff(const Option &option, const kiln::PrecisionOverride &, const OptVal &,
                       size_t globalWidth) const {
    printOptionNoValue(option, globalWidth);
  }
};

} // namespace llvm::cl

namespace kiln::cli {

/// One `--keep-fp32` target: any name but the empty one, which `a,,b` or `--keep-fp32=` give.
class OpTargetParser : public llvm::cl::parser<std::string> {
public:
  using parser::parser;
  bool parse(llvm::cl::Option &option, llvm::StringRef argName, llvm::StringRef arg, std::string &value);
};

/// The user's per-node precision options as a plan's metadata records them (plan::Metadata):
/// "--keep-fp32 TARGET", then "--force-precision TARGET=PRECISION", then "--keep-unquantized
/// TARGET", in the order given.
std::vector<std::string> precisionOverrideList(const PipelineOptions &options);

/// The pipeline options of one command, registered in its subcommand.
class PipelineFlags {
public:
  PipelineFlags(llvm::cl::SubCommand &sub, Categories &categories);

  /// What the options ask of buildOptimizationPipeline (for `--precision auto`: fp32, which the
  /// precision search replaces).
  PipelineOptions pipelineOptions() const;
  /// `--precision auto`: only `kiln compile` accepts it (its precision search).
  bool autoPrecision() const { return !precision.fixed; }
  /// `--precision fp8` or `int8`: 8-bit layers from the `--calibration` file ("fp8", "int8"),
  /// empty otherwise.
  const std::string &quantization() const { return precision.quantization; }
  /// `--calibration`: a directory of inputs (`--precision auto`) or a calibration file (fp8).
  const std::string &calibrationPath() const { return calibration; }
  /// A usage error for `--calibration` or `--keep-unquantized` given without the precision it
  /// serves, or fp8/int8 without a calibration file; std::nullopt when they fit.
  std::optional<std::string> calibrationUsageError() const;
  /// Whether an option that steers the optimization passes was given (`kiln import` runs the
  /// whole pipeline only then; by default it only folds constants).
  bool optimizationRequested() const;
  /// True unless --no-fold.
  bool foldConstants() const { return !noFold; }

  /// Runs the passes `addPasses` adds to a pass manager on `module`, printing the IR after
  /// each pass (--print-ir-after-all) and writing it to files (--dump-ir). Failures have been
  /// reported through the context's diagnostics when this returns failure.
  mlir::LogicalResult runPasses(mlir::ModuleOp module, llvm::function_ref<void(mlir::OpPassManager &)> addPasses) const;
  /// runPasses with the whole optimization pipeline for these options.
  mlir::LogicalResult runOptimizationPipeline(mlir::ModuleOp module) const;

private:
  llvm::cl::opt<PrecisionFlag> precision;
  llvm::cl::opt<bool> strictFp32;
  llvm::cl::list<std::string, bool, OpTargetParser> keepFp32;
  llvm::cl::list<std::string, bool, OpTargetParser> keepUnquantized;
  llvm::cl::opt<bool> keepFirstLayer;
  llvm::cl::opt<bool> keepLastLayer;
  llvm::cl::list<PrecisionOverride> forcePrecision;
  llvm::cl::opt<bool> noFold;
  llvm::cl::opt<bool> noFusion;
  llvm::cl::opt<bool> noFusedAttention;
  llvm::cl::opt<bool> exactGelu;
  llvm::cl::opt<Layout> layout;
  llvm::cl::opt<std::string> calibration;
  llvm::cl::opt<bool> printIRAfterAll;
  llvm::cl::opt<std::string> dumpIRDir;
};

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_PIPELINEFLAGS_H
