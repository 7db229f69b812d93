// Not valid kiln MLIR: the parser's error must reach the user with its position.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = kiln.relu %x : tensor<3xf32>
  return %y : tensor<2xf32>
}
