// Importer: frontend/ops/MatMul.cpp (MatMul, Gemm, Einsum, Softmax, LogSoftmax).
// Each model comes from Inputs/make_model.py.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_model.py --out-dir %t \
// RUN:   gemm_trans_b \
// RUN:   gemm_trans_a_no_c \
// RUN:   matmul_batched \
// RUN:   matmul_vector \
// RUN:   softmax_opset11 \
// RUN:   softmax_opset11_last_axis \
// RUN:   softmax_opset13 \
// RUN:   einsum_bmm

// Gemm transB=1, alpha 0.5: trans_b; beta 1 and trans_a false are kiln's defaults.
// RUN: kiln import %t/gemm_trans_b.onnx --quiet | FileCheck %s --check-prefix=GEMM
// GEMM: kiln.gemm %arg0, %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32, trans_b = true} : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>

// Gemm transA=1 without C.
// RUN: kiln import %t/gemm_trans_a_no_c.onnx --quiet | FileCheck %s --check-prefix=GEMM-A
// GEMM-A: kiln.gemm %arg0, %arg1 {beta = 0.000000e+00 : f32, trans_a = true} : (tensor<4x3xf32>, tensor<4x6xf32>) -> tensor<3x6xf32>

// MatMul broadcasts batch dims.
// RUN: kiln import %t/matmul_batched.onnx --quiet | FileCheck %s --check-prefix=MM
// MM: kiln.matmul %arg0, %arg1 : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>

// A 1-d left operand is a row vector whose dim is dropped from the result.
// RUN: kiln import %t/matmul_vector.onnx --quiet | FileCheck %s --check-prefix=MV
// MV: kiln.matmul %arg0, %arg1 : (tensor<4xf32>, tensor<2x4x6xf32>) -> tensor<2x6xf32>

// Softmax-11 (legacy) with the default axis 1 on a rank-3 input works on the input coerced to
// 2-d: reshape to 2x12, softmax over axis 1, reshape back.
// RUN: kiln import %t/softmax_opset11.onnx --quiet | FileCheck %s --check-prefix=SM11
// SM11: %[[FLAT:.*]] = kiln.reshape %arg0 : tensor<2x3x4xf32> to tensor<2x12xf32>
// SM11: %[[SM:.*]] = kiln.softmax %[[FLAT]] {axis = 1 : i64} : tensor<2x12xf32>
// SM11: %[[OUT:.*]] = kiln.reshape %[[SM]] : tensor<2x12xf32> to tensor<2x3x4xf32>
// SM11: return %[[OUT]]

// Legacy LogSoftmax over the last axis needs no reshape.
// RUN: kiln import %t/softmax_opset11_last_axis.onnx --quiet | FileCheck %s --check-prefix=LSM11
// LSM11-NOT: kiln.reshape
// LSM11: kiln.log_softmax %arg0 {axis = 2 : i64} : tensor<2x3x4xf32>
// LSM11-NOT: kiln.reshape

// Softmax-13 axis=1 is a softmax over that one axis.
// RUN: kiln import %t/softmax_opset13.onnx --quiet | FileCheck %s --check-prefix=SM13
// SM13-NOT: kiln.reshape
// SM13: kiln.softmax %arg0 {axis = 1 : i64} : tensor<2x3x4xf32>
// SM13-NOT: kiln.reshape

// RUN: kiln import %t/einsum_bmm.onnx --quiet | FileCheck %s --check-prefix=EINSUM
// EINSUM: kiln.einsum %arg0, %arg1 {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
