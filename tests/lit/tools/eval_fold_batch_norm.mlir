// BatchNorm folding against the interpreter: the module with its BatchNorms folded (one into the
// conv before it, one after a ReLU into a multiply-add) gives what the BatchNorms give, up to the
// reassociation: |folded - unfolded| <= 1e-5 |unfolded| + 1e-6 max|unfolded|. `--no-fold` keeps
// them, which the same checks show.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.random.default_rng(0).uniform(-2, 2, (2, 3, 6, 6)).astype(np.float32))"
// RUN: kiln eval %s --input x=%t/x.npy --output-dir %t/folded --quiet
// RUN: kiln eval %s --input x=%t/x.npy --output-dir %t/unfolded --quiet --no-fold
// RUN: %python -c "import numpy as np; a, b = (np.load('%t/' + d + '/y.npy').astype(np.float64) for d in ('folded', 'unfolded')); err = abs(a - b) - 1e-5 * abs(b) - 1e-6 * abs(b).max(); print(abs(a - b).max()); assert (err <= 0).all(), abs(a - b).max()"
// RUN: kiln import %s --precision fp32 --quiet | FileCheck %s --check-prefix=FOLDED
// RUN: kiln import %s --precision fp32 --quiet --no-fold | FileCheck %s --check-prefix=KEPT

// FOLDED-NOT: kiln.batch_norm
// FOLDED: kiln.conv
// FOLDED: kiln.mul
// FOLDED: kiln.add
// KEPT-COUNT-2: kiln.batch_norm
func.func @main(%x: tensor<2x3x6x6xf32> {kiln.name = "x"}) -> (tensor<2x4x6x6xf32> {kiln.name = "y"}) {
  %w = kiln.constant dense<[[[[0.25, 0.794, 0.551], [-0.55, -0.4, 0.747], [-0.989, 0.642, 0.594]], [[-0.064, -0.394, -0.443], [-0.49, -0.11, 0.009], [0.107, 0.991, 0.585]], [[0.244, 0.978, -0.569], [-0.68, 0.225, -0.912], [-0.929, 0.03, -0.068]]], [[[0.834, 0.258, 0.028], [-0.006, -0.505, -0.976], [-0.615, 0.384, -0.599]], [[-0.261, -0.993, 0.66], [-0.691, -0.465, 0.761], [0.02, 0.694, 0.279]], [[0.484, -0.817, 0.082], [0.016, 0.743, -0.277], [0.196, -0.881, -0.225]]], [[[-0.354, -0.7, 0.633], [-0.241, 0.957, 0.18], [0.21, 0.276, 0.353]], [[-0.698, -0.119, -0.521], [-0.195, -0.807, 0.936], [-0.57, 0.344, -0.399]], [[0.748, 0.324, -0.737], [0.69, 0.89, 0.808], [0.139, -0.709, -0.615]]], [[[0.856, 0.105, -0.639], [0.768, 0.283, 0.139], [-0.247, -0.178, -0.521]], [[-0.924, 0.752, -0.065], [0.095, -0.356, 0.503], [-0.95, -0.256, -0.939]], [[-0.754, 0.934, 0.316], [-0.144, 0.047, 0.746], [-0.312, 0.181, 0.367]]]]> : tensor<4x3x3x3xf32>
  %b = kiln.constant dense<[-0.289, 0.038, 0.53, 0.818]> : tensor<4xf32>
  %c = kiln.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32> loc(fused<"Conv">["conv"("m.onnx":1:0)])
  %s1 = kiln.constant dense<[0.727, 1.9, 0.508, 1.629]> : tensor<4xf32>
  %b1 = kiln.constant dense<[0.621, -0.726, -0.162, 0.631]> : tensor<4xf32>
  %m1 = kiln.constant dense<[-0.971, 0.257, 0.586, 0.026]> : tensor<4xf32>
  %v1 = kiln.constant dense<[1.479, 0.53, 0.477, 0.79]> : tensor<4xf32>
  %n1 = kiln.batch_norm %c, %s1, %b1, %m1, %v1 : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32> loc(fused<"BatchNormalization">["bn1"("m.onnx":2:0)])
  %r = kiln.relu %n1 : tensor<2x4x6x6xf32> loc(fused<"Relu">["relu"("m.onnx":3:0)])
  %s2 = kiln.constant dense<[0.769, 1.019, 1.922, 1.36]> : tensor<4xf32>
  %b2 = kiln.constant dense<[-0.32, -0.457, 0.904, -0.111]> : tensor<4xf32>
  %m2 = kiln.constant dense<[0.961, 0.031, 0.042, 0.793]> : tensor<4xf32>
  %v2 = kiln.constant dense<[1.511, 1.203, 0.911, 1.769]> : tensor<4xf32>
  %y = kiln.batch_norm %r, %s2, %b2, %m2, %v2 {epsilon = 1.0e-3 : f32} : (tensor<2x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x6x6xf32> loc(fused<"BatchNormalization">["bn2"("m.onnx":4:0)])
  return %y : tensor<2x4x6x6xf32>
}
