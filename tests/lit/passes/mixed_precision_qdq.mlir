// RUN: kiln-opt %s -kiln-mixed-precision="precision=bf16" 2>&1 | FileCheck %s
// RUN: kiln-opt %s -kiln-mixed-precision="precision=fp32" 2>&1 | FileCheck %s

// A model in ONNX's QDQ format whose conv cannot run as an INT8 convolution (4 channels; its
// weight's DequantizeLinear already folded, as constant folding leaves it): its activations'
// quantize/dequantize stay kernels around float ops, and a remark says so, with the form INT8
// kernels take and what runs 8-bit GEMMs.
// CHECK: remark: the model's 1 QuantizeLinear and 1 DequantizeLinear (QDQ format): no convolution reads int8 or E4M3 in the form 8-bit kernels take ({{.*}}C a multiple of 32 and K of 16: onnxruntime's quantize_static writes it with extra_options ActivationSymmetric), and no linear layer E4M3 in the form FP8 GEMMs take ({{.*}}); the other quantizations run as kernels of their own around float ops{{.*}}--precision fp8 --calibration for FP8 linear layers
func.func @qdq_conv(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %s = kiln.constant dense<0.02> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %q = kiln.quantize %x, %s, %z : (tensor<1x4x8x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4x8x8xi8>
  %d = kiln.dequantize %q, %s, %z : (tensor<1x4x8x8xi8>, tensor<f32>, tensor<i8>) -> tensor<1x4x8x8xf32>
  %w = kiln.constant dense<0.5> : tensor<4x4x3x3xf32>
  %y = kiln.conv %d, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}
