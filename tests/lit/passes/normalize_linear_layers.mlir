// RUN: kiln-opt %s -kiln-normalize-linear-layers -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-normalize-linear-layers -kiln-form-fusion-groups -split-input-file | FileCheck %s --check-prefix=GROUPS

// MultiheadAttention's out_proj at batch 1: Gemm(a, B, bias) with trans_b, then the [S·B, E] →
// [S, B, E] → [B, S, E] reshapes and the residual add. The Gemm becomes a matmul by Bᵀ
// (computed now) in the residual's shape, plus the bias add; fusion then makes the matmul,
// bias and residual one gemm group.
// CHECK-LABEL: func.func @out_proj
// CHECK: %[[W:.*]] = kiln.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK: %[[A:.*]] = kiln.reshape %arg0 : tensor<3x2xf32> to tensor<1x3x2xf32>
// CHECK: %[[M:.*]] = kiln.matmul %[[A]], %[[W]] : (tensor<1x3x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2xf32>
// CHECK: %[[B:.*]] = kiln.add %[[M]], %{{.*}} : (tensor<1x3x2xf32>, tensor<2xf32>) -> tensor<1x3x2xf32>
// CHECK: kiln.add %[[B]], %arg1
// CHECK-NOT: kiln.gemm
// GROUPS-LABEL: func.func @out_proj
// GROUPS: kiln.fusion_group "gemm"
// GROUPS: kiln.matmul
// GROUPS: kiln.add
// GROUPS: kiln.add
// GROUPS: kiln.yield
// GROUPS-NEXT: }
// GROUPS-NEXT: return
func.func @out_proj(%a: tensor<3x2xf32>, %r: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  %w = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = kiln.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %g = kiln.gemm %a, %w, %b {trans_b = true} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %s = kiln.reshape %g : tensor<3x2xf32> to tensor<3x1x2xf32>
  %t = kiln.reshape %s : tensor<3x1x2xf32> to tensor<1x3x2xf32>
  %y = kiln.add %t, %r : (tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  return %y : tensor<1x3x2xf32>
}

// -----

// alpha != 1, and a B computed at run time: both stay Gemms.
// CHECK-LABEL: func.func @stays_gemm
// CHECK-COUNT-2: kiln.gemm
func.func @stays_gemm(%a: tensor<3x2xf32>, %b: tensor<2x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %w = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %g = kiln.gemm %a, %w {alpha = 2.0 : f32} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h = kiln.gemm %a, %b : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %g, %h : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// A matmul whose result is reshaped keeping rows of N: the reshape moves to its left operand.
// A reshape that splits rows (to [.., 4]) does not.
// CHECK-LABEL: func.func @matmul_reshape
// CHECK: %[[A:.*]] = kiln.reshape %arg0 : tensor<6x8xf32> to tensor<2x3x8xf32>
// CHECK: kiln.matmul %[[A]], %{{.*}} -> tensor<2x3x8xf32>
// CHECK: kiln.matmul %arg0, %{{.*}} -> tensor<6x8xf32>
// CHECK: kiln.reshape %{{.*}} : tensor<6x8xf32> to tensor<12x4xf32>
func.func @matmul_reshape(%x: tensor<6x8xf32>) -> (tensor<2x3x8xf32>, tensor<12x4xf32>) {
  %w = kiln.constant dense<0.5> : tensor<8x8xf32>
  %m = kiln.matmul %x, %w : (tensor<6x8xf32>, tensor<8x8xf32>) -> tensor<6x8xf32>
  %r = kiln.reshape %m : tensor<6x8xf32> to tensor<2x3x8xf32>
  %m2 = kiln.matmul %x, %w : (tensor<6x8xf32>, tensor<8x8xf32>) -> tensor<6x8xf32>
  %r2 = kiln.reshape %m2 : tensor<6x8xf32> to tensor<12x4xf32>
  return %r, %r2 : tensor<2x3x8xf32>, tensor<12x4xf32>
}

// -----

// ONNX value names follow what computes them: the Gemm's output is now the bias add's, and with
// a reshape after it the product computes the reshaped value (the reshape's name).
// CHECK-LABEL: func.func @value_names
// CHECK: kiln.matmul
// CHECK-NOT: onnx_values
// CHECK-SAME: tensor<3x2xf32>
// CHECK: kiln.add {{.*}}kiln.onnx_values = ["g"]
func.func @value_names(%a: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = kiln.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %g = kiln.gemm %a, %w, %b {trans_b = true, kiln.onnx_values = ["g"]} : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  return %g : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @reshaped_names
// CHECK: kiln.matmul {{.*}}kiln.onnx_values = ["t"]
// CHECK-NOT: onnx_values
// CHECK: return
func.func @reshaped_names(%a: tensor<3x2xf32>, %w: tensor<2x2xf32>) -> tensor<1x3x2xf32> {
  %m = kiln.matmul %a, %w {kiln.onnx_values = ["m"]} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %t = kiln.reshape %m {kiln.onnx_values = ["t"]} : tensor<3x2xf32> to tensor<1x3x2xf32>
  return %t : tensor<1x3x2xf32>
}
