// An i32 matmul: the interpreter runs it, GPU codegen has no library step for it
// (operand-types.mlir checks the error).
func.func @main(%x: tensor<2x8xi32> {kiln.name = "x"}, %w: tensor<8x5xi32> {kiln.name = "w"})
    -> (tensor<2x5xi32> {kiln.name = "y"}) {
  %mm = kiln.matmul %x, %w : (tensor<2x8xi32>, tensor<8x5xi32>) -> tensor<2x5xi32> loc("mm")
  return %mm : tensor<2x5xi32>
}
