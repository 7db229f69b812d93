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

// -----

// A ViT patch embedding after the layout pass: a channels-last conv whose kernel is its stride
// (4x4 patches of a 3-channel 8x8 image), read through the transpose to channels-last and
// flattened to [N, patches, K] through the transpose back. It becomes the matmul of the
// patches (one transpose of the channels-first image, split into [N, C, Hp, kh, Wp, kw]) by the
// weight read as [kh·kw·C, K], plus the bias; the result is read as [N, Hp·Wp, K] in place.
// CHECK-LABEL: func.func @patch_embedding
// CHECK-NOT: kiln.conv
// CHECK: %[[S:.*]] = kiln.reshape %arg0 : tensor<2x3x8x8xbf16> to tensor<2x3x2x4x2x4xbf16>
// CHECK: %[[T:.*]] = kiln.transpose %[[S]] {perm = array<i64: 0, 2, 4, 3, 5, 1>} : (tensor<2x3x2x4x2x4xbf16>) -> tensor<2x2x2x4x4x3xbf16>
// CHECK: %[[R:.*]] = kiln.reshape %[[T]] : tensor<2x2x2x4x4x3xbf16> to tensor<2x2x2x48xbf16>
// CHECK: %[[W:.*]] = kiln.constant {{.*}} : tensor<48x16xbf16>
// CHECK: %[[M:.*]] = kiln.matmul %[[R]], %[[W]] : (tensor<2x2x2x48xbf16>, tensor<48x16xbf16>) -> tensor<2x2x2x16xbf16>
// CHECK: %[[B:.*]] = kiln.add %[[M]], %arg1
// CHECK: %[[V:.*]] = kiln.reshape %[[B]] : tensor<2x2x2x16xbf16> to tensor<2x4x16xbf16>
// CHECK-NOT: kiln.transpose
// CHECK: return %[[V]]
func.func @patch_embedding(%x: tensor<2x3x8x8xbf16>, %b: tensor<16xbf16>) -> tensor<2x4x16xbf16> {
  %w = kiln.constant dense<0.5> : tensor<16x4x4x3xbf16>
  %xl = kiln.transpose %x {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x3x8x8xbf16>) -> tensor<2x8x8x3xbf16>
  %c = kiln.conv %xl, %w, %b {channels_last = true, strides = array<i64: 4, 4>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<2x8x8x3xbf16>, tensor<16x4x4x3xbf16>, tensor<16xbf16>) -> tensor<2x2x2x16xbf16>
  %cf = kiln.transpose %c {perm = array<i64: 0, 3, 1, 2>} : (tensor<2x2x2x16xbf16>) -> tensor<2x16x2x2xbf16>
  %f = kiln.reshape %cf : tensor<2x16x2x2xbf16> to tensor<2x16x4xbf16>
  %y = kiln.transpose %f {perm = array<i64: 0, 2, 1>} : (tensor<2x16x4xbf16>) -> tensor<2x4x16xbf16>
  return %y : tensor<2x4x16xbf16>
}

// -----

// Patches that overlap (stride below the kernel) or pad stay a convolution.
// CHECK-LABEL: func.func @overlapping_patches
// CHECK: kiln.conv
// CHECK-NOT: kiln.matmul
func.func @overlapping_patches(%x: tensor<2x8x8x3xbf16>) -> tensor<2x3x3x16xbf16> {
  %w = kiln.constant dense<0.5> : tensor<16x4x4x3xbf16>
  %c = kiln.conv %x, %w {channels_last = true, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<2x8x8x3xbf16>, tensor<16x4x4x3xbf16>) -> tensor<2x3x3x16xbf16>
  return %c : tensor<2x3x3x16xbf16>
}
