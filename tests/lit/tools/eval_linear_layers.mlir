// kiln-normalize-linear-layers against the interpreter: a Gemm with trans_b, reshaped and added
// to a residual, gives (within one fp32 rounding of the bias add, which the Gemm does in the
// same step) what the Gemm gives, and what numpy gives.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(5); np.save('%t/a.npy', r.uniform(-1, 1, (3, 2)).astype(np.float32)); np.save('%t/r.npy', r.uniform(-1, 1, (1, 3, 2)).astype(np.float32))"
// RUN: kiln eval %s --precision fp32 --input a=%t/a.npy --input r=%t/r.npy --output-dir %t/fused --quiet
// RUN: kiln eval %s --precision fp32 --no-fusion --input a=%t/a.npy --input r=%t/r.npy --output-dir %t/unfused --quiet
// RUN: %python -c "import numpy as np; a, r = np.load('%t/a.npy').astype(np.float64), np.load('%t/r.npy'); w = np.array([[1.0, 2.0], [3.0, 4.0]]); t = (a @ w.T + [0.5, 0.25]).reshape(1, 3, 2) + r; f, u = np.load('%t/fused/y.npy'), np.load('%t/unfused/y.npy'); assert abs(f - u).max() <= 1e-6 and abs(f - t).max() <= 1e-6, (f, u, t)"
// RUN: kiln import %s --precision fp32 | FileCheck %s

// CHECK: kiln.fusion_group "gemm"
// CHECK-NOT: kiln.gemm
func.func @main(%a: tensor<3x2xf32> {kiln.name = "a"}, %r: tensor<1x3x2xf32> {kiln.name = "r"})
    -> (tensor<1x3x2xf32> {kiln.name = "y"}) {
  %w = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = kiln.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %g = kiln.gemm %a, %w, %b {trans_b = true} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %s = kiln.reshape %g : tensor<3x2xf32> to tensor<3x1x2xf32>
  %t = kiln.reshape %s : tensor<3x1x2xf32> to tensor<1x3x2xf32>
  %y = kiln.add %t, %r : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  return %y : tensor<1x3x2xf32>
}
