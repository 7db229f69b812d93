// RUN: kiln-opt %s -kiln-mixed-precision="precision=bf16" 2>&1 | FileCheck %s
// RUN: kiln-opt %s -kiln-mixed-precision="precision=fp32" 2>&1 | FileCheck %s

// A model in ONNX's QDQ format (the weight's DequantizeLinear already folded, as constant
// folding leaves it): its activations' quantize/dequantize stay kernels around float ops, and a
// remark says so, with what runs 8-bit convolutions.
// CHECK: remark: the model's 1 QuantizeLinear and 1 DequantizeLinear of activations (QDQ format) run as kernels of their own around float ops{{.*}}compile the float model with --precision int8 (INT8 convolutions) or fp8 (FP8 linear layers) and --calibration
func.func @qdq_conv(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %s = kiln.constant dense<0.02> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %q = kiln.quantize %x, %s, %z : (tensor<1x4x8x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4x8x8xi8>
  %d = kiln.dequantize %q, %s, %z : (tensor<1x4x8x8xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4x8x8xf32>
  %w = kiln.constant dense<0.5> : tensor<4x4x3x3xf32>
  %y = kiln.conv %d, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}
