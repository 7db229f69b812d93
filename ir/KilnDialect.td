//===- KilnDialect.td - the kiln dialect --------------------*- tablegen -*-===//
//
// The `kiln` dialect: static-shape tensor ops for inference graphs imported from ONNX.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECT_TD
#define KILN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Static-shape tensor ops for ONNX inference graphs";
  let description = [{
    Every value is a ranked tensor with a fully static shape. Ops mirror ONNX's newest opset with
    one rule for parameters: what ONNX passes as an input stays an operand (so a module can hold
    any ONNX graph, constant or not), what ONNX passes as an attribute stays an attribute, and a
    parameter that only determines a shape (Reshape's shape, Expand's shape, Tile's repeats,
    TopK's k, Split's sizes, Squeeze/Unsqueeze axes, Resize's sizes) is carried by the static
    result type instead of an operand. Weights are `kiln.constant` ops whose large payloads live
    in MLIR resource blobs.
  }];
  let useDefaultAttributePrinterParser = 0;
  let useDefaultTypePrinterParser = 0;
  let hasConstantMaterializer = 1;
  let usePropertiesForAttributes = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []> : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_TD
