// kiln-fold-quantization on convolutions: an INT8 channels-last conv (int8 input per tensor,
// int8 constant weight per output channel, zero points 0, C and K multiples of 16, one group)
// gets a dequantize of its input of its own, and kiln-form-fusion-groups takes both
// dequantizations, the epilogue and the next conv's int8 quantization into its `conv` group:
// the group reads and writes int8. Others are remarked, or with drop-unfoldable read their
// unquantized operands again.
// RUN: kiln-opt %s --kiln-fold-quantization 2>&1 | FileCheck %s
// RUN: kiln-opt %s --kiln-fold-quantization 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: kiln-opt %s --kiln-fold-quantization=drop-unfoldable 2>&1 | FileCheck %s --check-prefix=DROP
// RUN: kiln-opt %s --kiln-fold-quantization --kiln-form-fusion-groups 2>&1 | FileCheck %s --check-prefix=GROUP

// CHECK: remark: 8-bit convolution runs as its Q/DQ ops and a bf16 convolution (fake quantization): C = 8 or K = 16 is not a multiple of 16
// CHECK-LABEL: func.func @main
// Weights are int8 constants; the shared input dequantization is cloned for the second conv.
// CHECK-NOT: kiln.quantize %{{.*}} -> tensor<16x1x1x32xi8>
// CHECK-COUNT-2: kiln.dequantize %{{.*}} : (tensor<2x4x4x32xi8>

// DROP: remark: not quantized, stays bf16: C = 8 or K = 16 is not a multiple of 16
// DROP: kiln.conv %arg1, %{{.*}} : (tensor<2x4x4x8xbf16>, tensor<16x1x1x8xbf16>)

// The first conv: its input, weight and result's quantization inside; int8 in and out.
// GROUP: %[[A:.*]] = kiln.fusion_group "conv"({{.*}}) : ({{.*}}tensor<2x4x4x32xi8>{{.*}}) -> tensor<2x4x4x16xi8>
// GROUP: kiln.dequantize {{.*}} -> tensor<16x1x1x32xf32>
// GROUP: kiln.dequantize {{.*}} -> tensor<2x4x4x32xf32>
// GROUP: kiln.conv
// GROUP: kiln.relu
// GROUP: kiln.quantize {{.*}} -> tensor<2x4x4x16xi8>
// The conv over 8 channels keeps its Q/DQ ops.
// GROUP: kiln.conv {{.*}} : (tensor<2x4x4x8xbf16>, tensor<16x1x1x8xbf16>)
// The second conv's result is read twice, by its quantization and as it is: the group gives
// both, the value and its int8 quantization (one cuDNN graph with two outputs).
// GROUP: %[[B:.*]]:2 = kiln.fusion_group "conv"({{.*}}) : ({{.*}}tensor<2x4x4x32xi8>{{.*}}) -> (tensor<2x4x4x16xbf16>, tensor<2x4x4x16xi8>)
// GROUP: %[[V:.*]] = kiln.conv
// GROUP-DAG: %[[R:.*]] = kiln.cast %[[V]] {{.*}} to tensor<2x4x4x16xbf16>
// GROUP-DAG: %[[Q:.*]] = kiln.quantize %[[V]]
// GROUP: kiln.yield %[[R]], %[[Q]]
// GROUP: return %{{.*}}, %[[B]]#0, %[[B]]#1

func.func @main(%x: tensor<2x4x4x32xbf16>, %y: tensor<2x4x4x8xbf16>)
    -> (tensor<2x4x4x16xi8>, tensor<2x4x4x16xbf16>, tensor<2x4x4x16xi8>, tensor<2x4x4x16xbf16>) {
  %s = kiln.constant dense<0.05> : tensor<bf16>
  %z = kiln.constant dense<0> : tensor<i8>
  %xq = kiln.quantize %x, %s, %z : (tensor<2x4x4x32xbf16>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x32xi8>
  %xd = kiln.dequantize %xq, %s, %z : (tensor<2x4x4x32xi8>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x32xbf16>
  %ws = kiln.constant dense<0.01> : tensor<16xbf16>
  %wz = kiln.constant dense<0> : tensor<16xi8>
  %w = kiln.constant dense<0.25> : tensor<16x1x1x32xbf16>
  %wq = kiln.quantize %w, %ws, %wz {axis = 0 : i64} : (tensor<16x1x1x32xbf16>, tensor<16xbf16>, tensor<16xi8>) -> tensor<16x1x1x32xi8>
  %wd = kiln.dequantize %wq, %ws, %wz {axis = 0 : i64} : (tensor<16x1x1x32xi8>, tensor<16xbf16>, tensor<16xi8>) -> tensor<16x1x1x32xbf16>
  %b = kiln.constant dense<0.5> : tensor<16xbf16>
  %c = kiln.conv %xd, %wd, %b {channels_last = true, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x4x32xbf16>, tensor<16x1x1x32xbf16>, tensor<16xbf16>) -> tensor<2x4x4x16xbf16>
  %r = kiln.relu %c : tensor<2x4x4x16xbf16>
  %rq = kiln.quantize %r, %s, %z : (tensor<2x4x4x16xbf16>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x16xi8>
  %w2 = kiln.constant dense<0.5> : tensor<16x1x1x32xbf16>
  %w2q = kiln.quantize %w2, %ws, %wz {axis = 0 : i64} : (tensor<16x1x1x32xbf16>, tensor<16xbf16>, tensor<16xi8>) -> tensor<16x1x1x32xi8>
  %w2d = kiln.dequantize %w2q, %ws, %wz {axis = 0 : i64} : (tensor<16x1x1x32xi8>, tensor<16xbf16>, tensor<16xi8>) -> tensor<16x1x1x32xbf16>
  %c2 = kiln.conv %xd, %w2d {channels_last = true, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x4x32xbf16>, tensor<16x1x1x32xbf16>) -> tensor<2x4x4x16xbf16>
  %c2q = kiln.quantize %c2, %s, %z : (tensor<2x4x4x16xbf16>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x16xi8>
  %yq = kiln.quantize %y, %s, %z : (tensor<2x4x4x8xbf16>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x8xi8>
  %yd = kiln.dequantize %yq, %s, %z : (tensor<2x4x4x8xi8>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x8xbf16>
  %v = kiln.constant dense<0.25> : tensor<16x1x1x8xbf16>
  %vq = kiln.quantize %v, %ws, %wz {axis = 0 : i64} : (tensor<16x1x1x8xbf16>, tensor<16xbf16>, tensor<16xi8>) -> tensor<16x1x1x8xi8>
  %vd = kiln.dequantize %vq, %ws, %wz {axis = 0 : i64} : (tensor<16x1x1x8xi8>, tensor<16xbf16>, tensor<16xi8>) -> tensor<16x1x1x8xbf16>
  %c3 = kiln.conv %yd, %vd {channels_last = true, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x4x8xbf16>, tensor<16x1x1x8xbf16>) -> tensor<2x4x4x16xbf16>
  return %rq, %c2, %c2q, %c3 : tensor<2x4x4x16xi8>, tensor<2x4x4x16xbf16>, tensor<2x4x4x16xi8>, tensor<2x4x4x16xbf16>
}

// A float conv (a first layer kept in bf16) whose only reader is the next INT8 conv's
// quantization takes it: its graph writes int8.
// GROUP-LABEL: func.func @kept
// GROUP: %[[K:.*]] = kiln.fusion_group "conv"({{.*}}) : ({{.*}}tensor<2x4x4x32xbf16>{{.*}}) -> tensor<2x4x4x16xi8>
// GROUP-NOT: kiln.dequantize
// GROUP: kiln.conv
// GROUP: kiln.relu
// GROUP: kiln.quantize {{.*}} -> tensor<2x4x4x16xi8>
// GROUP: return %[[K]]
func.func @kept(%x: tensor<2x4x4x32xbf16>) -> tensor<2x4x4x16xi8> {
  %s = kiln.constant dense<0.05> : tensor<bf16>
  %z = kiln.constant dense<0> : tensor<i8>
  %w = kiln.constant dense<0.25> : tensor<16x1x1x32xbf16>
  %c = kiln.conv %x, %w {channels_last = true, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x4x32xbf16>, tensor<16x1x1x32xbf16>) -> tensor<2x4x4x16xbf16>
  %r = kiln.relu %c : tensor<2x4x4x16xbf16>
  %rq = kiln.quantize %r, %s, %z : (tensor<2x4x4x16xbf16>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x16xi8>
  return %rq : tensor<2x4x4x16xi8>
}

// A residual read through its int8 quantization joins the group of a conv that writes int8
// (the next INT8 conv's input): the graph reads it int8 (residualScale). Its dequantization,
// shared with another reader, is cloned for the group.
// GROUP-LABEL: func.func @residual
// GROUP: %[[RD:.*]] = kiln.dequantize %arg1
// GROUP: kiln.fusion_group "conv"(%{{.*}}, %arg1, %{{.*}}) : ({{.*}}tensor<2x4x4x16xi8>{{.*}}) -> tensor<2x4x4x16xi8>
// GROUP: %[[V:.*]] = kiln.conv
// GROUP: %[[D:.*]] = kiln.dequantize
// GROUP: kiln.add %[[V]], %[[D]]
// GROUP: kiln.relu
// GROUP: kiln.quantize
// GROUP: return %{{.*}}, %[[RD]]
func.func @residual(%x: tensor<2x4x4x32xbf16>, %rq: tensor<2x4x4x16xi8>) -> (tensor<2x4x4x16xi8>, tensor<2x4x4x16xbf16>) {
  %s = kiln.constant dense<0.05> : tensor<bf16>
  %z = kiln.constant dense<0> : tensor<i8>
  %w = kiln.constant dense<0.25> : tensor<16x1x1x32xbf16>
  %rd = kiln.dequantize %rq, %s, %z : (tensor<2x4x4x16xi8>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x16xbf16>
  %c = kiln.conv %x, %w {channels_last = true, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x4x32xbf16>, tensor<16x1x1x32xbf16>) -> tensor<2x4x4x16xbf16>
  %a = kiln.add %c, %rd : (tensor<2x4x4x16xbf16>, tensor<2x4x4x16xbf16>) -> tensor<2x4x4x16xbf16>
  %r = kiln.relu %a : tensor<2x4x4x16xbf16>
  %q = kiln.quantize %r, %s, %z : (tensor<2x4x4x16xbf16>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x16xi8>
  return %q, %rd : tensor<2x4x4x16xi8>, tensor<2x4x4x16xbf16>
}

// A conv that writes bf16 (a network's last block) reads its residual dequantized, as a bf16
// group input: cuDNN's graphs that scale an int8 residual and write bf16 computed wrong values.
// GROUP-LABEL: func.func @residual_bf16_result
// GROUP: %[[RD:.*]] = kiln.dequantize %arg1
// GROUP: kiln.fusion_group "conv"(%{{.*}}, %[[RD]]) : ({{.*}}tensor<2x4x4x16xbf16>) -> tensor<2x4x4x16xbf16>
// GROUP-NOT: kiln.dequantize
// GROUP: kiln.relu
// GROUP: return
func.func @residual_bf16_result(%x: tensor<2x4x4x32xbf16>, %rq: tensor<2x4x4x16xi8>) -> tensor<2x4x4x16xbf16> {
  %s = kiln.constant dense<0.05> : tensor<bf16>
  %z = kiln.constant dense<0> : tensor<i8>
  %w = kiln.constant dense<0.25> : tensor<16x1x1x32xbf16>
  %rd = kiln.dequantize %rq, %s, %z : (tensor<2x4x4x16xi8>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x16xbf16>
  %c = kiln.conv %x, %w {channels_last = true, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x4x32xbf16>, tensor<16x1x1x32xbf16>) -> tensor<2x4x4x16xbf16>
  %a = kiln.add %c, %rd : (tensor<2x4x4x16xbf16>, tensor<2x4x4x16xbf16>) -> tensor<2x4x4x16xbf16>
  %r = kiln.relu %a : tensor<2x4x4x16xbf16>
  return %r : tensor<2x4x4x16xbf16>
}

// FP8: a conv of two E4M3 dequantizations is the same 8-bit conv group, E4M3 in and out with
// an E4M3 residual; a conv mixing int8 and E4M3 is none (remark), and an E4M3 quantization
// moves above a max pool as an int8 one does (the pool then runs on E4M3 values).
// MIXED: remark: 8-bit convolution runs as its Q/DQ ops and a bf16 convolution (fake quantization): its input and weight are not both int8 or both float8e4m3fn
// GROUP-LABEL: func.func @fp8
// GROUP: kiln.fusion_group "conv"({{.*}}) : ({{.*}}tensor<2x4x4x32xf8E4M3FN>{{.*}}tensor<2x4x4x16xf8E4M3FN>{{.*}}) -> tensor<2x4x4x16xf8E4M3FN>
// GROUP: kiln.dequantize {{.*}} -> tensor<2x4x4x32xf32>
// GROUP: %[[RD8:.*]] = kiln.dequantize {{.*}} -> tensor<2x4x4x16xf32>
// GROUP: kiln.dequantize {{.*}} -> tensor<16x1x1x32xf32>
// GROUP: %[[C8:.*]] = kiln.conv
// GROUP: kiln.add %[[C8]], %[[RD8]]
// GROUP: kiln.relu
// GROUP: kiln.quantize {{.*}} -> tensor<2x4x4x16xf8E4M3FN>
// GROUP: %[[PQ:.*]] = kiln.quantize %arg0, {{.*}} -> tensor<2x4x4x32xf8E4M3FN>
// GROUP: kiln.max_pool %[[PQ]] {{.*}} -> tensor<2x2x2x32xf8E4M3FN>
func.func @fp8(%x: tensor<2x4x4x32xbf16>, %res: tensor<2x4x4x16xf8E4M3FN>) -> (tensor<2x4x4x16xf8E4M3FN>, tensor<2x4x4x16xbf16>, tensor<2x2x2x32xf8E4M3FN>) {
  %s = kiln.constant dense<0.05> : tensor<bf16>
  %z = kiln.constant dense<0.0> : tensor<f8E4M3FN>
  %xq = kiln.quantize %x, %s, %z : (tensor<2x4x4x32xbf16>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<2x4x4x32xf8E4M3FN>
  %xd = kiln.dequantize %xq, %s, %z : (tensor<2x4x4x32xf8E4M3FN>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<2x4x4x32xbf16>
  %ws = kiln.constant dense<0.01> : tensor<16xbf16>
  %wz = kiln.constant dense<0.0> : tensor<16xf8E4M3FN>
  %w = kiln.constant dense<0.25> : tensor<16x1x1x32xbf16>
  %wq = kiln.quantize %w, %ws, %wz {axis = 0 : i64} : (tensor<16x1x1x32xbf16>, tensor<16xbf16>, tensor<16xf8E4M3FN>) -> tensor<16x1x1x32xf8E4M3FN>
  %wd = kiln.dequantize %wq, %ws, %wz {axis = 0 : i64} : (tensor<16x1x1x32xf8E4M3FN>, tensor<16xbf16>, tensor<16xf8E4M3FN>) -> tensor<16x1x1x32xbf16>
  %rd = kiln.dequantize %res, %s, %z : (tensor<2x4x4x16xf8E4M3FN>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<2x4x4x16xbf16>
  %c = kiln.conv %xd, %wd {channels_last = true, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x4x32xbf16>, tensor<16x1x1x32xbf16>) -> tensor<2x4x4x16xbf16>
  %a = kiln.add %c, %rd : (tensor<2x4x4x16xbf16>, tensor<2x4x4x16xbf16>) -> tensor<2x4x4x16xbf16>
  %r = kiln.relu %a : tensor<2x4x4x16xbf16>
  %q = kiln.quantize %r, %s, %z : (tensor<2x4x4x16xbf16>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<2x4x4x16xf8E4M3FN>
  // int8 input, E4M3 weight: no 8-bit conv.
  %iz = kiln.constant dense<0> : tensor<i8>
  %xq8 = kiln.quantize %x, %s, %iz : (tensor<2x4x4x32xbf16>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x32xi8>
  %xd8 = kiln.dequantize %xq8, %s, %iz : (tensor<2x4x4x32xi8>, tensor<bf16>, tensor<i8>) -> tensor<2x4x4x32xbf16>
  %m = kiln.conv %xd8, %wd {channels_last = true, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x4x32xbf16>, tensor<16x1x1x32xbf16>) -> tensor<2x4x4x16xbf16>
  %p = kiln.max_pool %x {channels_last = true, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<2x4x4x32xbf16>) -> tensor<2x2x2x32xbf16>
  %pq = kiln.quantize %p, %s, %z : (tensor<2x2x2x32xbf16>, tensor<bf16>, tensor<f8E4M3FN>) -> tensor<2x2x2x32xf8E4M3FN>
  return %q, %m, %pq : tensor<2x4x4x16xf8E4M3FN>, tensor<2x4x4x16xbf16>, tensor<2x2x2x32xf8E4M3FN>
}
