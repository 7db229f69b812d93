// `kiln eval` runs the optimization pipeline before the interpreter, with the options of
// `kiln compile`: in bf16 the matmul's input 1 + 2^-8 rounds to 1 (bf16 keeps 8 significant
// bits), in fp32 it does not.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.array([[1.00390625, 0.0]], np.float32))"
// RUN: kiln eval %s --input x=%t/x.npy --output-dir %t/fp32 --quiet
// RUN: kiln eval %s --input x=%t/x.npy --output-dir %t/bf16 --quiet --precision bf16
// RUN: kiln eval %s --input x=%t/x.npy --output-dir %t/kept --quiet --precision bf16 --keep-fp32 MatMul
// RUN: %python -c "import numpy as np; assert np.load('%t/fp32/y.npy').tolist() == [[1.00390625]]"
// RUN: %python -c "import numpy as np; assert np.load('%t/bf16/y.npy').tolist() == [[1.0]]"
// RUN: %python -c "import numpy as np; assert np.load('%t/kept/y.npy').tolist() == [[1.00390625]]"

func.func @main(%x: tensor<1x2xf32> {kiln.name = "x"}) -> (tensor<1x1xf32> {kiln.name = "y"}) {
  %w = kiln.constant dense<[[1.0], [1.0]]> : tensor<2x1xf32>
  %y = kiln.matmul %x, %w : (tensor<1x2xf32>, tensor<2x1xf32>) -> tensor<1x1xf32> loc(fused<"MatMul">["mm"("model.onnx":1:0)])
  return %y : tensor<1x1xf32>
}
