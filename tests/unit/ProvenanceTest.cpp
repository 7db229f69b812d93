//===- ProvenanceTest.cpp - reading ONNX nodes back from locations ---------===//
//
// nodeNames lists every ONNX node of a location (what a plan step records as the nodes it
// covers), in the order of the location, each once; its first is the node onnxNodeOf reads.
//
//===----------------------------------------------------------------------===//

#include "ir/Provenance.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

namespace {

using Names = std::vector<std::string>;

TEST(Provenance, NodeNamesOfOneNode) {
  mlir::MLIRContext context;
  mlir::Location conv = kiln::onnxNodeLoc(&context, "conv1", "Conv", "m.onnx", 0);
  EXPECT_EQ(kiln::nodeNames(conv), Names{"conv1"});
  EXPECT_EQ(kiln::nodeNames(mlir::UnknownLoc::get(&context)), Names{});
  EXPECT_EQ(kiln::nodeNames(mlir::FileLineColLoc::get(&context, "m.onnx", 1, 0)), Names{});
}

TEST(Provenance, NodeNamesOfAFusedOpInOrderEachOnce) {
  // How kiln-form-fusion-groups fuses its members' locations: the named op first, then the
  // others in block order. Two ops of one ONNX node (a Gemm's matmul and bias add) list it once;
  // ops without provenance add nothing; a call site counts its callee.
  mlir::MLIRContext context;
  auto node = [&](llvm::StringRef name, llvm::StringRef type, unsigned index) {
    return kiln::onnxNodeLoc(&context, name, type, "m.onnx", index);
  };
  auto inner = mlir::CallSiteLoc::get(mlir::NameLoc::get(mlir::StringAttr::get(&context, "called")),
                                      mlir::UnknownLoc::get(&context));
  mlir::Location unknown = mlir::UnknownLoc::get(&context);
  llvm::SmallVector<mlir::Location> members{node("relu", "Relu", 2), node("fc", "Gemm", 0), unknown,
                                            node("fc", "Gemm", 1), inner};
  mlir::Location group = mlir::FusedLoc::get(&context, members, mlir::StringAttr::get(&context, "kiln.fusion_group"));
  EXPECT_EQ(kiln::nodeNames(group), (Names{"relu", "fc", "called"}));
  EXPECT_EQ(kiln::onnxNodeOf(group)->name, kiln::nodeNames(group).front());
}

} // namespace
