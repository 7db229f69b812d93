// RUN: kiln-opt %s -kiln-mixed-precision="precision=bf16" -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-mixed-precision="precision=fp16" -split-input-file | FileCheck %s --check-prefix=FP16
// RUN: kiln-opt %s -kiln-mixed-precision="precision=fp32" -split-input-file | FileCheck %s --check-prefix=FP32

// Compute-bound ops take the half type (weights and input cast at their use), elementwise ops
// follow their input, the graph output is cast back to its declared f32.
// CHECK-LABEL: func.func @conv_relu
// CHECK-DAG: %[[X:.*]] = kiln.cast %arg0 : tensor<1x3x8x8xf32> to tensor<1x3x8x8xbf16>
// CHECK-DAG: %[[W:.*]] = kiln.cast %{{.*}} : tensor<4x3x3x3xf32> to tensor<4x3x3x3xbf16>
// CHECK: %[[C:.*]] = kiln.conv %[[X]], %[[W]] {{.*}} -> tensor<1x4x8x8xbf16>
// CHECK: %[[R:.*]] = kiln.relu %[[C]] : tensor<1x4x8x8xbf16>
// CHECK: %[[O:.*]] = kiln.cast %[[R]] : tensor<1x4x8x8xbf16> to tensor<1x4x8x8xf32>
// CHECK: return %[[O]]
// FP16-LABEL: func.func @conv_relu
// FP16: kiln.conv {{.*}} -> tensor<1x4x8x8xf16>
// FP32-LABEL: func.func @conv_relu
// FP32-NOT: kiln.cast
// FP32: kiln.conv {{.*}} -> tensor<1x4x8x8xf32>
func.func @conv_relu(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<4x3x3x3xf32>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = kiln.relu %c : tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// -----

// Ops whose results can outgrow their inputs stay fp32: the half value is cast up once and the
// one cast serves both readers; the add meets an f32 operand and promotes to f32.
// CHECK-LABEL: func.func @fp32_ops
// CHECK: %[[M:.*]] = kiln.matmul {{.*}} -> tensor<2x4xbf16>
// CHECK: %[[UP:.*]] = kiln.cast %[[M]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK: %[[E:.*]] = kiln.exp %[[UP]] : tensor<2x4xf32>
// CHECK: kiln.reduce_sum %[[UP]] {{.*}} -> tensor<2x1xf32>
// CHECK: kiln.add %[[UP]], %[[E]] : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NOT: kiln.cast %[[M]]
func.func @fp32_ops(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) -> (tensor<2x4xf32>, tensor<2x1xf32>) {
  %m = kiln.matmul %a, %b : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %e = kiln.exp %m : tensor<2x4xf32>
  %axes = kiln.constant dense<[1]> : tensor<1xi64>
  %s = kiln.reduce_sum %m axes %axes : (tensor<2x4xf32>, tensor<1xi64>) -> tensor<2x1xf32>
  %r = kiln.add %m, %e : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %r, %s : tensor<2x4xf32>, tensor<2x1xf32>
}

// -----

// Normalizations and softmax follow their (half) input and compute in fp32 inside; their
// parameters are converted to the input's type, constants of an elementwise op too.
// CHECK-LABEL: func.func @follow
// CHECK: %[[M:.*]] = kiln.matmul {{.*}} -> tensor<2x4xbf16>
// CHECK: %[[S:.*]] = kiln.cast %{{.*}} : tensor<f32> to tensor<bf16>
// CHECK: %[[D:.*]] = kiln.div %[[M]], %[[S]] : (tensor<2x4xbf16>, tensor<bf16>) -> tensor<2x4xbf16>
// CHECK: %[[SM:.*]] = kiln.softmax %[[D]] {axis = 1 : i64} : tensor<2x4xbf16>
// CHECK: kiln.layer_norm %[[SM]], %{{.*}}, %{{.*}} {{.*}} : (tensor<2x4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
func.func @follow(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x4xf32> {
  %m = kiln.matmul %a, %b : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %scale = kiln.constant dense<8.0> : tensor<f32>
  %d = kiln.div %m, %scale : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %sm = kiln.softmax %d {axis = 1 : i64} : tensor<2x4xf32>
  %g = kiln.constant dense<1.0> : tensor<4xf32>
  %bb = kiln.constant dense<0.0> : tensor<4xf32>
  %ln = kiln.layer_norm %sm, %g, %bb {axis = 1 : i64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %ln : tensor<2x4xf32>
}

// -----

// Non-float and mixed-typed parts keep their types: comparisons take the widest operand type
// and still give i1, pow keeps its exponent's type, casts of the model keep their result type.
// CHECK-LABEL: func.func @types_kept
// CHECK: %[[M:.*]] = kiln.matmul {{.*}} -> tensor<2x4xbf16>
// CHECK: kiln.less %[[M]], %{{.*}} : (tensor<2x4xbf16>, tensor<bf16>) -> tensor<2x4xi1>
// CHECK: kiln.pow %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
// CHECK: kiln.cast %[[M]] : tensor<2x4xbf16> to tensor<2x4xi32>
func.func @types_kept(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) -> (tensor<2x4xi1>, tensor<2x4xf32>, tensor<2x4xi32>) {
  %m = kiln.matmul %a, %b : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %lt = kiln.less %m, %zero : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xi1>
  %two = kiln.constant dense<2.0> : tensor<f32>
  %p = kiln.pow %m, %two : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %i = kiln.cast %m : tensor<2x4xf32> to tensor<2x4xi32>
  return %lt, %p, %i : tensor<2x4xi1>, tensor<2x4xf32>, tensor<2x4xi32>
}

// -----

// An op already in another type is left alone; f64 stays f64.
// CHECK-LABEL: func.func @not_f32
// CHECK: kiln.matmul {{.*}} -> tensor<2x4xf64>
// CHECK-NOT: kiln.cast
func.func @not_f32(%a: tensor<2x8xf64>, %b: tensor<8x4xf64>) -> tensor<2x4xf64> {
  %m = kiln.matmul %a, %b : (tensor<2x8xf64>, tensor<8x4xf64>) -> tensor<2x4xf64>
  return %m : tensor<2x4xf64>
}

// -----

// Values computed from constants alone are weak: an embedding gathered from its table and a mask
// selected between two constants take the type of the half data they meet instead of promoting
// it to f32; the weak ops themselves run in f32. A graph input (strong f32) does promote.
// CHECK-LABEL: func.func @weak
// CHECK: %[[E:.*]] = kiln.gather %{{.*}}, %arg0 {{.*}} -> tensor<2x4xf32>
// CHECK: %[[M:.*]] = kiln.where %arg1, %{{.*}}, %{{.*}} : ({{.*}}) -> tensor<2x4xf32>
// CHECK: %[[P:.*]] = kiln.matmul {{.*}} -> tensor<2x4xbf16>
// CHECK: %[[EH:.*]] = kiln.cast %[[E]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK: %[[S:.*]] = kiln.add %[[P]], %[[EH]] : {{.*}} -> tensor<2x4xbf16>
// CHECK: %[[MH:.*]] = kiln.cast %[[M]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK: %[[T:.*]] = kiln.add %[[S]], %[[MH]] : {{.*}} -> tensor<2x4xbf16>
// CHECK: %[[TU:.*]] = kiln.cast %[[T]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK: kiln.add %[[TU]], %arg3 : {{.*}} -> tensor<2x4xf32>
func.func @weak(%ids: tensor<2xi64>, %keep: tensor<2x4xi1>, %a: tensor<2x8xf32>, %x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %table = kiln.constant dense<0.5> : tensor<10x4xf32>
  %e = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %neg = kiln.constant dense<-3.0e38> : tensor<f32>
  %m = kiln.where %keep, %zero, %neg : (tensor<2x4xi1>, tensor<f32>, tensor<f32>) -> tensor<2x4xf32>
  %w = kiln.constant dense<0.25> : tensor<8x4xf32>
  %p = kiln.matmul %a, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %s = kiln.add %p, %e : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %t = kiln.add %s, %m : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %u = kiln.add %t, %x : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %u : tensor<2x4xf32>
}
