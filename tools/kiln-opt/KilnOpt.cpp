//===- KilnOpt.cpp - the kiln-opt driver -----------------------------------===//
//
// mlir-opt for the kiln dialect: parses, verifies, runs passes and prints. lit tests drive it.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnDialect.h"
#include "passes/Passes.h"
#include "passes/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::func::FuncDialect>();
  // The generic MLIR passes our pipelines build on (canonicalize, cse, ...).
  mlir::registerTransformsPasses();
  kiln::registerKilnPasses();
  kiln::registerKilnPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
