// An imported QDQ model's convolutions (the form onnxruntime's quantize_static writes with
// symmetric activations: DequantizeLinear of int8 weights per output channel, Q/DQ pairs on
// activations) run as INT8 convolutions with the model's own f32 scales, in any plan
// precision: kiln-fold-constants keeps the weight's dequantization, kiln-mixed-precision keeps
// the conv in its dequantizations' type, the layout pass puts it channels last (its int8 weight
// permuted), kiln-fold-quantization moves the input's dequantization below the transpose, and the
// conv group reads and writes int8. A conv over 8 channels cannot run one: its weight folds into
// float values and a remark says why.
// RUN: kiln-opt %s --kiln-pipeline="precision=bf16" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s
// RUN: kiln-opt %s --kiln-pipeline="precision=fp32" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s
// RUN: kiln-opt %s --kiln-pipeline="precision=bf16 layout=nchw" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=NCHW
// RUN: kiln-opt %s --kiln-pipeline="precision=bf16 force-precision=kiln.conv=bf16" 2>/dev/null | FileCheck %s --check-prefix=OVERRIDE

// CHECK: remark: 8-bit convolution runs as its Q/DQ ops around a float convolution (fake quantization; its weight folds into float values): C = 8 or K = 16 is not a multiple of 16
// CHECK: remark: the model's 3 QuantizeLinear and 4 DequantizeLinear (QDQ format): 1 convolution keeps its 8-bit inputs, weights and scales for INT8 or FP8 kernels
// CHECK-LABEL: func.func @main(%arg0
// CHECK: %[[X:.*]] = kiln.transpose %{{.*}} {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x32x4x4xi8>) -> tensor<2x4x4x32xi8>
// CHECK: kiln.fusion_group "conv"(%{{.*}}, %{{.*}}, %{{.*}}, %[[X]], {{.*}}) : (tensor<16x1x1x32xi8>, tensor<16xf32>, tensor<16xi8>, tensor<2x4x4x32xi8>, {{.*}}) -> tensor<2x4x4x16xi8>
// CHECK: kiln.dequantize %{{.*}} {axis = 0 : i64} : (tensor<16x1x1x32xi8>, tensor<16xf32>, tensor<16xi8>) -> tensor<16x1x1x32xf32>
// CHECK: kiln.conv
// CHECK: kiln.quantize {{.*}} -> tensor<2x4x4x16xi8>
// The 8-channel conv reads a float weight.
// CHECK-NOT: kiln.dequantize {{.*}}tensor<16x8x1x1xi8>

// Channels first, no INT8 kernel: the weight folds and the conv stays in its f32.
// NCHW: remark: 8-bit convolution runs as its Q/DQ ops and a f32 convolution (fake quantization): it is not a channels-last convolution
// NCHW-NOT: fusion_group "conv"
// NCHW: kiln.conv %{{.*}}, %{{.*}}, %{{.*}} {{.*}} : (tensor<2x32x4x4xf32>, tensor<16x32x1x1xf32>, tensor<16xf32>)

// A precision override makes the QDQ conv a bf16 one: its weight's dequantization, cast and
// layout transpose fold into one bf16 constant (no weight work at run time).
// OVERRIDE-NOT: fusion_group "conv"
// OVERRIDE: %[[W:.*]] = kiln.constant dense_resource<{{.*}}> : tensor<16x1x1x32xbf16>
// OVERRIDE-NOT: kiln.dequantize {{.*}}xi8>, tensor<16xf32>
// OVERRIDE: kiln.conv %{{.*}}, %[[W]], %{{.*}} {channels_last = true
// OVERRIDE-NOT: kiln.dequantize {{.*}}xi8>, tensor<16xf32>

func.func @main(%x: tensor<2x32x4x4xf32>, %y: tensor<2x8x4x4xf32>) -> (tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32>) {
  %s = kiln.constant dense<0.05> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %xq = kiln.quantize %x, %s, %z : (tensor<2x32x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<2x32x4x4xi8>
  %xd = kiln.dequantize %xq, %s, %z : (tensor<2x32x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x32x4x4xf32>
  %w = kiln.constant dense<3> : tensor<16x32x1x1xi8>
  %ws = kiln.constant dense<0.01> : tensor<16xf32>
  %wz = kiln.constant dense<0> : tensor<16xi8>
  %wd = kiln.dequantize %w, %ws, %wz {axis = 0 : i64} : (tensor<16x32x1x1xi8>, tensor<16xf32>, tensor<16xi8>) -> tensor<16x32x1x1xf32>
  %b = kiln.constant dense<0.5> : tensor<16xf32>
  %c = kiln.conv %xd, %wd, %b {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x32x4x4xf32>, tensor<16x32x1x1xf32>, tensor<16xf32>) -> tensor<2x16x4x4xf32>
  %s2 = kiln.constant dense<0.1> : tensor<f32>
  %cq = kiln.quantize %c, %s2, %z : (tensor<2x16x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<2x16x4x4xi8>
  %cd = kiln.dequantize %cq, %s2, %z : (tensor<2x16x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x16x4x4xf32>
  %yq = kiln.quantize %y, %s, %z : (tensor<2x8x4x4xf32>, tensor<f32>, tensor<i8>) -> tensor<2x8x4x4xi8>
  %yd = kiln.dequantize %yq, %s, %z : (tensor<2x8x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x8x4x4xf32>
  %v = kiln.constant dense<2> : tensor<16x8x1x1xi8>
  %vd = kiln.dequantize %v, %ws, %wz {axis = 0 : i64} : (tensor<16x8x1x1xi8>, tensor<16xf32>, tensor<16xi8>) -> tensor<16x8x1x1xf32>
  %c2 = kiln.conv %yd, %vd {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<2x16x4x4xf32>
  return %cd, %c2 : tensor<2x16x4x4xf32>, tensor<2x16x4x4xf32>
}
