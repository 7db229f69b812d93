// An imported QDQ model's linear layer in E4M3 (onnxruntime's quantize_static with
// QFLOAT8E4M3FN around Gemm/MatMul: one scale each, zero points 0) runs as an FP8 GEMM with the
// model's f32 scales: kiln-fold-constants keeps the weight's dequantization, kiln-mixed-precision
// keeps the layer in f32, kiln-normalize-linear-layers makes the Gemm's trans_b a transpose after
// the dequantization (the [N, K] weight FP8 GEMMs read), and the gemm group reads E4M3 and
// writes f32. Its f32 bias add stays out of the group, in the elementwise group after it:
// cuBLASLt's FP8 kernels writing f32 read a bias as bf16 (an f32 one gave wrong values on the
// H100).
// RUN: kiln-opt %s --kiln-pipeline="precision=bf16" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s

// CHECK: remark: the model's 1 QuantizeLinear and 2 DequantizeLinear (QDQ format): 1 linear layer keeps its E4M3 inputs, weights and scales for FP8 GEMMs
// CHECK: remark: 1 linear layers keep the op after their cuBLASLt epilogue as a separate step: an FP8 layer writing f32 (an imported QDQ model's exact scales) keeps its f32 bias add out: cuBLASLt's FP8 kernels writing f32 read a bias as bf16: kiln.matmul
// CHECK-LABEL: func.func @main(%arg0
// CHECK: kiln.fusion_group "gemm"({{.*}}) : (tensor<4x32xf8E4M3FN>, {{.*}}, tensor<64x32xf8E4M3FN>, tensor<f32>) -> tensor<4x64xf32>
// CHECK: kiln.dequantize {{.*}} -> tensor<4x32xf32>
// CHECK: kiln.dequantize {{.*}} -> tensor<64x32xf32>
// CHECK-NEXT: kiln.transpose {{.*}} {perm = array<i64: 1, 0>}
// CHECK-NEXT: kiln.matmul
// CHECK: kiln.fusion_group "elementwise"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.relu

func.func @main(%x: tensor<4x32xf32>) -> tensor<4x64xf32> {
  %s = kiln.constant dense<0.02> : tensor<f32>
  %z = kiln.constant dense<0.0> : tensor<f8E4M3FN>
  %xq = kiln.quantize %x, %s, %z : (tensor<4x32xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4x32xf8E4M3FN>
  %xd = kiln.dequantize %xq, %s, %z : (tensor<4x32xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4x32xf32>
  %w = kiln.constant dense<1.0> : tensor<64x32xf8E4M3FN>
  %ws = kiln.constant dense<0.01> : tensor<f32>
  %wd = kiln.dequantize %w, %ws, %z : (tensor<64x32xf8E4M3FN>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<64x32xf32>
  %b = kiln.constant dense<0.5> : tensor<64xf32>
  %g = kiln.gemm %xd, %wd, %b {trans_b = true} : (tensor<4x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  %r = kiln.relu %g : tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}
