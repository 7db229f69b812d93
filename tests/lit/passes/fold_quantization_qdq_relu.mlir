// kiln-fold-quantization: onnxruntime's QDQ form of a ReLU, quantize -> dequantize -> relu ->
// quantize with one scale and zero point (two initializers of equal value), is the ReLU before
// the quantization (both are max(q, zero point)): the relu can join the conv's epilogue and the
// quantize its int8 result. Different scales, or a dequantized value read twice, stay.
// RUN: kiln-opt %s --kiln-fold-quantization | FileCheck %s

// CHECK-LABEL: func.func @equal_scales
// CHECK: %[[R:.*]] = kiln.relu %arg0 : tensor<2x8xf32>
// CHECK-NEXT: %[[Q:.*]] = kiln.quantize %[[R]]
// CHECK-NEXT: return %[[Q]]
func.func @equal_scales(%v: tensor<2x8xf32>) -> tensor<2x8xi8> {
  %s = kiln.constant dense<0.05> : tensor<f32>
  %s2 = kiln.constant dense<0.05> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %q = kiln.quantize %v, %s, %z : (tensor<2x8xf32>, tensor<f32>, tensor<i8>) -> tensor<2x8xi8>
  %d = kiln.dequantize %q, %s, %z : (tensor<2x8xi8>, tensor<f32>, tensor<i8>) -> tensor<2x8xf32>
  %r = kiln.relu %d : tensor<2x8xf32>
  %q2 = kiln.quantize %r, %s2, %z : (tensor<2x8xf32>, tensor<f32>, tensor<i8>) -> tensor<2x8xi8>
  return %q2 : tensor<2x8xi8>
}

// CHECK-LABEL: func.func @different_scales
// CHECK: kiln.quantize %arg0
// CHECK: kiln.dequantize
// CHECK: kiln.relu
// CHECK: kiln.quantize
func.func @different_scales(%v: tensor<2x8xf32>) -> tensor<2x8xi8> {
  %s = kiln.constant dense<0.05> : tensor<f32>
  %s2 = kiln.constant dense<0.04> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %q = kiln.quantize %v, %s, %z : (tensor<2x8xf32>, tensor<f32>, tensor<i8>) -> tensor<2x8xi8>
  %d = kiln.dequantize %q, %s, %z : (tensor<2x8xi8>, tensor<f32>, tensor<i8>) -> tensor<2x8xf32>
  %r = kiln.relu %d : tensor<2x8xf32>
  %q2 = kiln.quantize %r, %s2, %z : (tensor<2x8xf32>, tensor<f32>, tensor<i8>) -> tensor<2x8xi8>
  return %q2 : tensor<2x8xi8>
}

// CHECK-LABEL: func.func @read_twice
// CHECK: kiln.quantize %arg0
// CHECK: %[[D:.*]] = kiln.dequantize
// CHECK: kiln.relu %[[D]]
// CHECK: kiln.quantize
func.func @read_twice(%v: tensor<2x8xf32>) -> (tensor<2x8xi8>, tensor<2x8xf32>) {
  %s = kiln.constant dense<0.05> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %q = kiln.quantize %v, %s, %z : (tensor<2x8xf32>, tensor<f32>, tensor<i8>) -> tensor<2x8xi8>
  %d = kiln.dequantize %q, %s, %z : (tensor<2x8xi8>, tensor<f32>, tensor<i8>) -> tensor<2x8xf32>
  %r = kiln.relu %d : tensor<2x8xf32>
  %q2 = kiln.quantize %r, %s, %z : (tensor<2x8xf32>, tensor<f32>, tensor<i8>) -> tensor<2x8xi8>
  return %q2, %d : tensor<2x8xi8>, tensor<2x8xf32>
}

// A quantize of a dequantization with the same scale and zero point is the 8-bit value itself
// (a QDQ model's pairs around a max pool, once moved next to each other); with another scale it
// is a requantization and stays.
// CHECK-LABEL: func.func @requantize_one_scale
// CHECK-NOT: kiln.quantize
// CHECK: return %arg0
func.func @requantize_one_scale(%q: tensor<2x8xi8>) -> tensor<2x8xi8> {
  %s = kiln.constant dense<0.05> : tensor<f32>
  %s2 = kiln.constant dense<0.05> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %d = kiln.dequantize %q, %s, %z : (tensor<2x8xi8>, tensor<f32>, tensor<i8>) -> tensor<2x8xf32>
  %q2 = kiln.quantize %d, %s2, %z : (tensor<2x8xf32>, tensor<f32>, tensor<i8>) -> tensor<2x8xi8>
  return %q2 : tensor<2x8xi8>
}

// CHECK-LABEL: func.func @requantize_two_scales
// CHECK: kiln.dequantize
// CHECK: kiln.quantize
func.func @requantize_two_scales(%q: tensor<2x8xi8>) -> tensor<2x8xi8> {
  %s = kiln.constant dense<0.05> : tensor<f32>
  %s2 = kiln.constant dense<0.04> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %d = kiln.dequantize %q, %s, %z : (tensor<2x8xi8>, tensor<f32>, tensor<i8>) -> tensor<2x8xf32>
  %q2 = kiln.quantize %d, %s2, %z : (tensor<2x8xf32>, tensor<f32>, tensor<i8>) -> tensor<2x8xi8>
  return %q2 : tensor<2x8xi8>
}
