// RUN: kiln-opt %s -kiln-mixed-precision="precision=bf16" 2>/dev/null | FileCheck %s

// An FP8 (E4M3) QuantizeLinear of a value computed in bf16 computes in its input's f32, as an
// int8 one does: the value is cast back to f32 and the f32 scale stays (an 8-bit float result is
// storage, not the type the quantize computes in). Before, the quantize was left with a bf16
// input and an f32 scale, which its verifier refuses.
// CHECK-LABEL: func.func @fp8_quantize
// CHECK: %[[M:.*]] = kiln.matmul {{.*}} -> tensor<2x16xbf16>
// CHECK: %[[F:.*]] = kiln.cast %[[M]] : tensor<2x16xbf16> to tensor<2x16xf32>
// CHECK: kiln.quantize %[[F]], %{{.*}}, %{{.*}} : (tensor<2x16xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<2x16xf8E4M3FN>
func.func @fp8_quantize(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %w = kiln.constant dense<0.5> : tensor<16x16xf32>
  %m = kiln.matmul %x, %w : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32>
  %s = kiln.constant dense<0.02> : tensor<f32>
  %z = kiln.constant dense<0.0> : tensor<f8E4M3FN>
  %q = kiln.quantize %m, %s, %z : (tensor<2x16xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<2x16xf8E4M3FN>
  %d = kiln.dequantize %q, %s, %z : (tensor<2x16xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<2x16xf32>
  return %d : tensor<2x16xf32>
}
