// A conv-relu-gemm network with ONNX node locations (what `kiln import` gives every op), a
// weight as a resource blob and a 20-element constant: the tools tests compile, evaluate and
// dump it.
func.func @main(%x: tensor<1x2x5x5xf32> {kiln.name = "x"}) -> (tensor<1x20xf32> {kiln.name = "y"}) {
  %w = kiln.constant dense_resource<conv_w> : tensor<3x2x2x2xf32> loc("conv_w")
  %conv = kiln.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x3x3xf32> loc(fused<"Conv">["conv1"("model.onnx":1:0)])
  %relu = kiln.relu %conv : tensor<1x3x3x3xf32> loc(fused<"Relu">["relu1"("model.onnx":2:0)])
  %flat = kiln.reshape %relu : tensor<1x3x3x3xf32> to tensor<1x27xf32> loc(fused<"Flatten">["flat"("model.onnx":3:0)])
  %fw = kiln.constant dense<0.25> : tensor<20x27xf32> loc("fc_w")
  %fb = kiln.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0]> : tensor<20xf32> loc("fc_b")
  %y = kiln.gemm %flat, %fw, %fb {trans_b = true} : (tensor<1x27xf32>, tensor<20x27xf32>, tensor<20xf32>) -> tensor<1x20xf32> loc(fused<"Gemm">["fc"("model.onnx":4:0)])
  return %y : tensor<1x20xf32>
}

{-#
  dialect_resources: {
    builtin: {
      conv_w: "0x040000000000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F0000003F"
    }
  }
#-}
