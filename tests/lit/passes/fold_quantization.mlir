// kiln-fold-quantization: weights quantized at compile time; FP8 linear layers rewritten into
// the form a cuBLASLt FP8 GEMM runs (weight stored [N, K], a transpose back after its
// dequantize, a dequantize of the input per consumer); others remarked, or with
// drop-unfoldable read their unquantized operands again.
// RUN: kiln-opt %s --kiln-fold-quantization 2>&1 | FileCheck %s
// RUN: kiln-opt %s --kiln-fold-quantization=drop-unfoldable 2>&1 | FileCheck %s --check-prefix=DROP
// RUN: kiln-opt %s --kiln-fold-quantization --kiln-form-fusion-groups 2>&1 | FileCheck %s --check-prefix=GROUP

// CHECK: remark: 8-bit linear layer runs as its Q/DQ ops and a bf16 GEMM (fake quantization): K = 32 or N = 24 is not a multiple of 16
// CHECK: remark: 8-bit linear layer runs as its Q/DQ ops and a bf16 GEMM (fake quantization): 8-bit integer GEMMs are not implemented yet
// CHECK-LABEL: func.func @main
// CHECK: %[[XQ:.*]] = kiln.quantize %arg0
// The weight's quantize is gone: an f8 constant, stored [N, K] for the FP8 layer.
// CHECK-NOT: kiln.quantize
// CHECK: %[[W:.*]] = kiln.constant {{.*}} : tensor<16x32xf8E4M3FN>
// CHECK: %[[WD:.*]] = kiln.dequantize %[[W]], {{.*}} -> tensor<16x32xbf16>
// CHECK: %[[WT:.*]] = kiln.transpose %[[WD]] {perm = array<i64: 1, 0>} : (tensor<16x32xbf16>) -> tensor<32x16xbf16>
// CHECK: %[[XD:.*]] = kiln.dequantize %[[XQ]]
// CHECK: kiln.matmul %[[XD]], %[[WT]] : (tensor<4x32xbf16>, tensor<32x16xbf16>)
// N = 24 keeps its Q/DQ ops (its weight quantized once, at compile time).
// CHECK: kiln.constant {{.*}} : tensor<32x24xf8E4M3FN>
// CHECK: kiln.matmul {{.*}} : (tensor<4x32xbf16>, tensor<32x24xbf16>)

// DROP: remark: not quantized, stays bf16: K = 32 or N = 24 is not a multiple of 16
// DROP: remark: not quantized, stays bf16: 8-bit integer GEMMs are not implemented yet
// DROP: kiln.matmul %arg0, %{{.*}} : (tensor<4x32xbf16>, tensor<32x24xbf16>)
// DROP: kiln.matmul %arg0, %{{.*}} : (tensor<4x32xbf16>, tensor<32x16xbf16>)

// The gemm group takes both dequantizations and the transpose: its inputs are 8-bit.
// GROUP: kiln.fusion_group "gemm"({{.*}}) : (tensor<16x32xf8E4M3FN>, {{.*}}, tensor<4x32xf8E4M3FN>, tensor<16xbf16>) -> tensor<4x16xbf16>
// GROUP: kiln.dequantize {{.*}} -> tensor<16x32xf32>
// GROUP-NEXT: kiln.transpose
// GROUP: kiln.dequantize {{.*}} -> tensor<4x32xf32>
// GROUP-NEXT: kiln.matmul {{.*}} : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
// GROUP: kiln.relu

func.func @main(%x: tensor<4x32xbf16>) -> (tensor<4x16xbf16>, tensor<4x24xbf16>, tensor<4x16xbf16>) {
  %s = kiln.constant dense<0.01> : tensor<bf16>
  %z = kiln.constant dense<0.0> : tensor<f8E4M3FN>
  %xq = kiln.quantize %x, %s, %z : (tensor<4x32xbf16>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<4x32xf8E4M3FN>
  %xd = kiln.dequantize %xq, %s, %z : (tensor<4x32xf8E4M3FN>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<4x32xbf16>
  %w = kiln.constant dense<0.25> : tensor<32x16xbf16>
  %wq = kiln.quantize %w, %s, %z : (tensor<32x16xbf16>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<32x16xf8E4M3FN>
  %wd = kiln.dequantize %wq, %s, %z : (tensor<32x16xf8E4M3FN>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<32x16xbf16>
  %b = kiln.constant dense<0.5> : tensor<16xbf16>
  %m = kiln.matmul %xd, %wd : (tensor<4x32xbf16>, tensor<32x16xbf16>) -> tensor<4x16xbf16>
  %a = kiln.add %m, %b : (tensor<4x16xbf16>, tensor<16xbf16>) -> tensor<4x16xbf16>
  %r = kiln.relu %a : tensor<4x16xbf16>
  %v = kiln.constant dense<0.5> : tensor<32x24xbf16>
  %vq = kiln.quantize %v, %s, %z : (tensor<32x24xbf16>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<32x24xf8E4M3FN>
  %vd = kiln.dequantize %vq, %s, %z : (tensor<32x24xf8E4M3FN>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<32x24xbf16>
  %m2 = kiln.matmul %xd, %vd : (tensor<4x32xbf16>, tensor<32x24xbf16>) -> tensor<4x24xbf16>
  %si = kiln.constant dense<0.01> : tensor<bf16>
  %zi = kiln.constant dense<0> : tensor<i8>
  %xi = kiln.quantize %x, %si, %zi : (tensor<4x32xbf16>, tensor<bf16>, tensor<i8>) -> tensor<4x32xi8>
  %xid = kiln.dequantize %xi, %si, %zi : (tensor<4x32xi8>, tensor<bf16>, tensor<i8>) -> tensor<4x32xbf16>
  %wi = kiln.quantize %w, %si, %zi : (tensor<32x16xbf16>, tensor<bf16>, tensor<i8>) -> tensor<32x16xi8>
  %wid = kiln.dequantize %wi, %si, %zi : (tensor<32x16xi8>, tensor<bf16>, tensor<i8>) -> tensor<32x16xbf16>
  %m3 = kiln.matmul %xid, %wid : (tensor<4x32xbf16>, tensor<32x16xbf16>) -> tensor<4x16xbf16>
  return %r, %m2, %m3 : tensor<4x16xbf16>, tensor<4x24xbf16>, tensor<4x16xbf16>
}
