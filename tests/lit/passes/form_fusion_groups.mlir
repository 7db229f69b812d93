// RUN: kiln-opt %s -kiln-form-fusion-groups -split-input-file | FileCheck %s

// Bias + GELU (erf) as the TorchScript exporter writes it, in bf16: one group. The bf16 inputs
// are widened once each, the whole chain computes in f32, one cast rounds the result.
// CHECK-LABEL: func.func @bias_gelu_erf
// CHECK: %[[G:.*]] = kiln.fusion_group "elementwise"(%arg0, %arg1, {{.*}}) : (tensor<2x8xbf16>, tensor<8xbf16>, tensor<bf16>, tensor<bf16>, tensor<bf16>) -> tensor<2x8xbf16> {
// CHECK: ^bb0(%[[X:.*]]: tensor<2x8xbf16>, %[[B:.*]]: tensor<8xbf16>,
// CHECK-DAG: %[[WX:.*]] = kiln.cast %[[X]] : tensor<2x8xbf16> to tensor<2x8xf32>
// CHECK-DAG: %[[WB:.*]] = kiln.cast %[[B]] : tensor<8xbf16> to tensor<8xf32>
// CHECK: %[[Y:.*]] = kiln.add %[[WX]], %[[WB]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK: kiln.div %[[Y]], {{.*}} -> tensor<2x8xf32>
// CHECK: kiln.erf {{.*}} : tensor<2x8xf32>
// CHECK: kiln.add {{.*}} -> tensor<2x8xf32>
// CHECK: kiln.mul %[[Y]], {{.*}} -> tensor<2x8xf32>
// CHECK: %[[R:.*]] = kiln.mul {{.*}} -> tensor<2x8xf32>
// CHECK: %[[N:.*]] = kiln.cast %[[R]] : tensor<2x8xf32> to tensor<2x8xbf16>
// CHECK: kiln.yield %[[N]] : tensor<2x8xbf16>
// CHECK: return %[[G]]
func.func @bias_gelu_erf(%x: tensor<2x8xbf16>, %b: tensor<8xbf16>) -> tensor<2x8xbf16> {
  %half = kiln.constant dense<0.5> : tensor<bf16>
  %one = kiln.constant dense<1.0> : tensor<bf16>
  %sqrt2 = kiln.constant dense<1.414> : tensor<bf16>
  %y = kiln.add %x, %b : (tensor<2x8xbf16>, tensor<8xbf16>) -> tensor<2x8xbf16>
  %d = kiln.div %y, %sqrt2 : (tensor<2x8xbf16>, tensor<bf16>) -> tensor<2x8xbf16>
  %e = kiln.erf %d : tensor<2x8xbf16>
  %a = kiln.add %e, %one : (tensor<2x8xbf16>, tensor<bf16>) -> tensor<2x8xbf16>
  %m = kiln.mul %y, %a : (tensor<2x8xbf16>, tensor<2x8xbf16>) -> tensor<2x8xbf16>
  %r = kiln.mul %m, %half : (tensor<2x8xbf16>, tensor<bf16>) -> tensor<2x8xbf16>
  return %r : tensor<2x8xbf16>
}

// -----

// Residual add + ReLU whose add is also read by another op: the add's value is needed outside,
// so it cannot be computed inside the group; the ReLU's chain (relu, mul) forms one group and
// the add stays a step of its own. f32: no casts appear.
// CHECK-LABEL: func.func @shared_value
// CHECK: %[[S:.*]] = kiln.add %arg0, %arg1
// CHECK: %[[G:.*]] = kiln.fusion_group "elementwise"(%[[S]], %arg1)
// CHECK-NOT: kiln.cast
// CHECK: kiln.relu
// CHECK: kiln.mul
// CHECK: kiln.yield
// CHECK: kiln.softmax %[[S]]
func.func @shared_value(%x: tensor<4x16xf32>, %r: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %s = kiln.add %x, %r : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %t = kiln.relu %s : tensor<4x16xf32>
  %u = kiln.mul %t, %r : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %v = kiln.softmax %s {axis = 1 : i64} : tensor<4x16xf32>
  return %u, %v : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Scale and additive mask before softmax (attention scores): the mask [B,1,1,S] broadcasts to
// the scores inside the group; the softmax is not elementwise and stays out.
// CHECK-LABEL: func.func @scale_mask_softmax
// CHECK: %[[G:.*]] = kiln.fusion_group "elementwise"(%arg0, %{{.*}}, %arg1) : (tensor<2x3x5x5xf32>, tensor<f32>, tensor<2x1x1x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK: kiln.div
// CHECK: kiln.add {{.*}} : (tensor<2x3x5x5xf32>, tensor<2x1x1x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK: kiln.softmax %[[G]]
func.func @scale_mask_softmax(%scores: tensor<2x3x5x5xf32>, %mask: tensor<2x1x1x5xf32>) -> tensor<2x3x5x5xf32> {
  %scale = kiln.constant dense<8.0> : tensor<f32>
  %d = kiln.div %scores, %scale : (tensor<2x3x5x5xf32>, tensor<f32>) -> tensor<2x3x5x5xf32>
  %m = kiln.add %d, %mask : (tensor<2x3x5x5xf32>, tensor<2x1x1x5xf32>) -> tensor<2x3x5x5xf32>
  %p = kiln.softmax %m {axis = 3 : i64} : tensor<2x3x5x5xf32>
  return %p : tensor<2x3x5x5xf32>
}

// -----

// The mask chain that BERT computes once per request ((1 - mask) * -10000 on [B,1,1,S]) joins
// the scores' group (it broadcasts to the result), and comparison/where chains with bool
// intermediates fuse too. A lone op forms no group.
// CHECK-LABEL: func.func @mask_chain
// CHECK: kiln.fusion_group "elementwise"
// CHECK: kiln.sub
// CHECK: kiln.mul
// CHECK: kiln.greater
// CHECK: kiln.where
// CHECK: kiln.yield
// CHECK: %[[L:.*]] = kiln.neg %{{.*}} : tensor<7xf32>
// CHECK-NOT: kiln.fusion_group
func.func @mask_chain(%scores: tensor<2x3x5x5xf32>, %mask: tensor<2x1x1x5xf32>, %z: tensor<7xf32>) -> (tensor<2x3x5x5xf32>, tensor<7xf32>) {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %big = kiln.constant dense<-10000.0> : tensor<f32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %inv = kiln.sub %one, %mask : (tensor<f32>, tensor<2x1x1x5xf32>) -> tensor<2x1x1x5xf32>
  %add = kiln.mul %inv, %big : (tensor<2x1x1x5xf32>, tensor<f32>) -> tensor<2x1x1x5xf32>
  %pos = kiln.greater %scores, %zero : (tensor<2x3x5x5xf32>, tensor<f32>) -> tensor<2x3x5x5xi1>
  %w = kiln.where %pos, %scores, %add : (tensor<2x3x5x5xi1>, tensor<2x3x5x5xf32>, tensor<2x1x1x5xf32>) -> tensor<2x3x5x5xf32>
  %n = kiln.neg %z : tensor<7xf32>
  return %w, %n : tensor<2x3x5x5xf32>, tensor<7xf32>
}

// -----

// An explicit cast to a narrow type inside the chain still rounds: the f32 -> bf16 cast stays,
// followed by the widening the next op needs.
// CHECK-LABEL: func.func @explicit_cast
// CHECK: kiln.fusion_group
// CHECK: %[[E:.*]] = kiln.exp %{{.*}} : tensor<8xf32>
// CHECK: %[[N:.*]] = kiln.cast %[[E]] : tensor<8xf32> to tensor<8xbf16>
// CHECK: %[[W:.*]] = kiln.cast %[[N]] : tensor<8xbf16> to tensor<8xf32>
// CHECK: kiln.relu %[[W]] : tensor<8xf32>
func.func @explicit_cast(%x: tensor<8xf32>) -> tensor<8xbf16> {
  %e = kiln.exp %x : tensor<8xf32>
  %c = kiln.cast %e : tensor<8xf32> to tensor<8xbf16>
  %r = kiln.relu %c : tensor<8xbf16>
  return %r : tensor<8xbf16>
}

// -----

// A linear layer: matmul of a 2-d weight, bias row, residual and ReLU become one gemm group
// (cuBLASLt: D = relu(A x B + C + bias)). The GELU chain after another linear layer's bias is
// erf-based, which no epilogue computes: that matmul takes only its bias, and the chain forms an
// elementwise group.
// CHECK-LABEL: func.func @linear_layers
// CHECK: %[[L:.*]] = kiln.fusion_group "gemm"(%arg0, %{{.*}}, %{{.*}}, %arg1) : (tensor<2x5x16xf32>, tensor<16x8xf32>, tensor<8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
// CHECK: kiln.matmul
// CHECK: kiln.add
// CHECK: kiln.add
// CHECK: kiln.relu
// CHECK: kiln.yield
// CHECK: %[[F:.*]] = kiln.fusion_group "gemm"(%[[L]], {{.*}}) : (tensor<2x5x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
// CHECK: kiln.fusion_group "elementwise"(%[[F]])
// CHECK: kiln.erf
func.func @linear_layers(%x: tensor<2x5x16xf32>, %r: tensor<2x5x8xf32>) -> tensor<2x5x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<16x8xf32>
  %b = kiln.constant dense<0.25> : tensor<8xf32>
  %m = kiln.matmul %x, %w : (tensor<2x5x16xf32>, tensor<16x8xf32>) -> tensor<2x5x8xf32>
  %a = kiln.add %m, %b : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %s = kiln.add %r, %a : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  %y = kiln.relu %s : tensor<2x5x8xf32>
  %w2 = kiln.constant dense<0.125> : tensor<8x8xf32>
  %m2 = kiln.matmul %y, %w2 : (tensor<2x5x8xf32>, tensor<8x8xf32>) -> tensor<2x5x8xf32>
  %a2 = kiln.add %m2, %b : (tensor<2x5x8xf32>, tensor<8xf32>) -> tensor<2x5x8xf32>
  %e = kiln.erf %a2 : tensor<2x5x8xf32>
  %g = kiln.mul %a2, %e : (tensor<2x5x8xf32>, tensor<2x5x8xf32>) -> tensor<2x5x8xf32>
  return %g : tensor<2x5x8xf32>
}

// -----

// A batched matmul of two activations (attention scores) is no linear layer: no gemm group, and
// a matmul whose value is needed elsewhere keeps it.
// CHECK-LABEL: func.func @not_linear
// CHECK-NOT: kiln.fusion_group "gemm"
func.func @not_linear(%q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>, %x: tensor<3x8xf32>) -> (tensor<2x4x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %b = kiln.constant dense<0.25> : tensor<4xf32>
  %s = kiln.matmul %q, %k : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %t = kiln.add %s, %b : (tensor<2x4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32>
  %w = kiln.constant dense<0.5> : tensor<8x4xf32>
  %m = kiln.matmul %x, %w : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  %a = kiln.add %m, %b : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  return %t, %a, %m : tensor<2x4x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
