// RUN: kiln-opt %s -split-input-file -kiln-convert-layout | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-convert-layout -canonicalize | FileCheck %s --check-prefix=CANON
// RUN: kiln-opt %s -split-input-file -kiln-convert-layout="layout=nchw" | FileCheck %s --check-prefix=NCHW
// RUN: kiln-opt %s -split-input-file -kiln-convert-layout="layout=nhwc" | FileCheck %s --check-prefix=NHWC
// RUN: not kiln-opt %s -split-input-file -kiln-convert-layout="layout=nhcw" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not kiln-opt %s -split-input-file --kiln-pipeline="layout=nhcw" 2>&1 | FileCheck %s --check-prefix=BAD-PIPELINE

// BAD: error: kiln-convert-layout: layout 'nhcw' is not one of auto, nchw, nhwc
// BAD-PIPELINE: kiln-pipeline: layout 'nhcw' is not one of auto, nchw, nhwc

// A residual block in bf16: one transpose in, one out. The weights become KRSC constants, the
// [C,1,1] bias add a [1,1,1,C] constant, the max pool follows, the residual add meets two
// channels-last values.
// NCHW-LABEL: func.func @block
// NCHW-NOT: kiln.transpose
// NCHW-NOT: channels_last
// CHECK-LABEL: func.func @block
// CHECK-DAG: kiln.constant dense<{{\[\[\[\[}}1.000000e+00, 2.000000e+00]]]]> : tensor<1x1x1x2xbf16>
// CHECK: %[[IN:.*]] = kiln.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x2x4x4xbf16>) -> tensor<1x4x4x2xbf16>
// CHECK-NOT: kiln.transpose
// CHECK: %[[C1:.*]] = kiln.conv %[[IN]], %{{.*}} {channels_last = true
// CHECK: %[[R:.*]] = kiln.relu %[[C1]] : tensor<1x4x4x2xbf16>
// CHECK: %[[P:.*]] = kiln.max_pool %[[R]] {channels_last = true{{.*}} -> tensor<1x2x2x2xbf16>
// CHECK: %[[C2:.*]] = kiln.conv %[[P]], {{.*}}channels_last = true
// CHECK: %[[B:.*]] = kiln.add %[[C2]], %{{.*}} : (tensor<1x2x2x2xbf16>, tensor<1x1x1x2xbf16>)
// CHECK: %[[S:.*]] = kiln.add %[[B]], %[[P]]
// CHECK: %[[OUT:.*]] = kiln.transpose %[[S]] {perm = array<i64: 0, 3, 1, 2>}
// CHECK: return %[[OUT]]
func.func @block(%x: tensor<1x2x4x4xbf16>) -> tensor<1x2x2x2xbf16> {
  %w1 = kiln.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xbf16>
  %w3 = kiln.constant dense<0.5> : tensor<2x2x1x1xbf16>
  %bias = kiln.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xbf16>
  %c1 = kiln.conv %x, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xbf16>, tensor<2x2x1x1xbf16>) -> tensor<1x2x4x4xbf16>
  %r = kiln.relu %c1 : tensor<1x2x4x4xbf16>
  %p = kiln.max_pool %r {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xbf16>) -> tensor<1x2x2x2xbf16>
  %c2 = kiln.conv %p, %w3 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x2x2xbf16>, tensor<2x2x1x1xbf16>) -> tensor<1x2x2x2xbf16>
  %b = kiln.add %c2, %bias : (tensor<1x2x2x2xbf16>, tensor<2x1x1xbf16>) -> tensor<1x2x2x2xbf16>
  %s = kiln.add %b, %p : (tensor<1x2x2x2xbf16>, tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xbf16>
  return %s : tensor<1x2x2x2xbf16>
}

// -----

// KRSC: weight [M=1, C=2, R=1, S=2] with channel 0 = [1, 2], channel 1 = [3, 4] becomes
// [1, 1, 2, 2] holding, for each s, the channels: [1, 3], [2, 4].
// CHECK-LABEL: func.func @krsc
// CHECK: kiln.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xbf16>
func.func @krsc(%x: tensor<1x2x4x4xbf16>) -> tensor<1x1x4x3xbf16> {
  %w = kiln.constant dense<[[[[1.0, 2.0]], [[3.0, 4.0]]]]> : tensor<1x2x1x2xbf16>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xbf16>, tensor<1x2x1x2xbf16>) -> tensor<1x1x4x3xbf16>
  return %c : tensor<1x1x4x3xbf16>
}

// -----

// The SE gate: global pool, two 1x1 convs and a sigmoid give [N,C,1,1], which multiplies the
// feature map; everything stays channels last, and the classifier's global pool and flatten
// leave one transpose of unit axes (a reshape after canonicalize).
// CHECK-LABEL: func.func @squeeze_excite
// CHECK: kiln.transpose %arg0
// CHECK-NOT: kiln.transpose
// CHECK: %[[G:.*]] = kiln.global_avg_pool %{{.*}} {channels_last = true} : (tensor<2x3x3x4xf16>) -> tensor<2x1x1x4xf16>
// CHECK: kiln.conv %[[G]]
// CHECK: %[[GATE:.*]] = kiln.sigmoid %{{.*}} : tensor<2x1x1x4xf16>
// CHECK: %[[M:.*]] = kiln.mul %{{.*}}, %[[GATE]] : (tensor<2x3x3x4xf16>, tensor<2x1x1x4xf16>)
// CHECK: %[[H:.*]] = kiln.global_max_pool %[[M]] {channels_last = true}
// CHECK: kiln.transpose %[[H]] {perm = array<i64: 0, 3, 1, 2>} : (tensor<2x1x1x4xf16>) -> tensor<2x4x1x1xf16>
// CANON-LABEL: func.func @squeeze_excite
// CANON-COUNT-1: kiln.transpose
// CANON-NOT: kiln.transpose
// CANON: kiln.reshape %{{.*}} : tensor<2x1x1x4xf16> to tensor<2x4x1x1xf16>
func.func @squeeze_excite(%x: tensor<2x4x3x3xf16>) -> tensor<2x4xf16> {
  %w = kiln.constant dense<0.25> : tensor<4x4x1x1xf16>
  %w1 = kiln.constant dense<0.5> : tensor<2x4x1x1xf16>
  %w2 = kiln.constant dense<0.5> : tensor<4x2x1x1xf16>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<2x4x3x3xf16>, tensor<4x4x1x1xf16>) -> tensor<2x4x3x3xf16>
  %g = kiln.global_avg_pool %c : (tensor<2x4x3x3xf16>) -> tensor<2x4x1x1xf16>
  %s1 = kiln.conv %g, %w1 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<2x4x1x1xf16>, tensor<2x4x1x1xf16>) -> tensor<2x2x1x1xf16>
  %s2 = kiln.relu %s1 : tensor<2x2x1x1xf16>
  %s3 = kiln.conv %s2, %w2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<2x2x1x1xf16>, tensor<4x2x1x1xf16>) -> tensor<2x4x1x1xf16>
  %gate = kiln.sigmoid %s3 : tensor<2x4x1x1xf16>
  %m = kiln.mul %c, %gate : (tensor<2x4x3x3xf16>, tensor<2x4x1x1xf16>) -> tensor<2x4x3x3xf16>
  %h = kiln.global_max_pool %m : (tensor<2x4x3x3xf16>) -> tensor<2x4x1x1xf16>
  %flat = kiln.reshape %h : tensor<2x4x1x1xf16> to tensor<2x4xf16>
  return %flat : tensor<2x4xf16>
}

// -----

// auto leaves f32 convs channels first (nhwc takes them); conv_transpose and 1-d convs stay
// channels first in every layout. A weight that is not a constant gets a transpose. An
// elementwise op whose other operand would need a transpose of its own stops the sinking.
// CHECK-LABEL: func.func @stays
// CHECK-NOT: kiln.transpose
// CHECK-NOT: channels_last
// CHECK: return
// NHWC-LABEL: func.func @stays
// NHWC: %[[W:.*]] = kiln.transpose %arg1 {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x2x1x1xf32>) -> tensor<2x1x1x2xf32>
// NHWC: kiln.conv %{{.*}}, %[[W]] {channels_last = true
// NHWC: %[[T:.*]] = kiln.transpose %{{.*}} {perm = array<i64: 0, 3, 1, 2>}
// NHWC: kiln.add %[[T]], %arg2
// NHWC: kiln.conv_transpose
// NHWC-NOT: channels_last
// NHWC: kiln.conv %{{.*}} : (tensor<1x2x5xf32>
// NHWC-NOT: channels_last
// NHWC: return
func.func @stays(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %y: tensor<1x2x4x4xf32>, %z: tensor<1x2x5xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<1x2x5xf32>) {
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = kiln.add %c, %y : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %wt = kiln.constant dense<1.0> : tensor<2x2x2x2xf32>
  %t = kiln.conv_transpose %a, %wt {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, output_padding = array<i64: 0, 0>} : (tensor<1x2x4x4xf32>, tensor<2x2x2x2xf32>) -> tensor<1x2x8x8xf32>
  %w1 = kiln.constant dense<1.0> : tensor<2x2x1xf32>
  %d = kiln.conv %z, %w1 {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>} : (tensor<1x2x5xf32>, tensor<2x2x1xf32>) -> tensor<1x2x5xf32>
  return %a, %t, %d : tensor<1x2x4x4xf32>, tensor<1x2x8x8xf32>, tensor<1x2x5xf32>
}

// -----

// A QDQ model's convs: the per-tensor quantize and dequantize between them are elementwise,
// so the transpose sinks through them and the two convs meet channels last.
// CHECK-LABEL: func.func @qdq
// CHECK: kiln.conv {{.*}}channels_last = true
// CHECK-NOT: kiln.transpose
// CHECK: kiln.quantize {{.*}} -> tensor<1x4x4x32xi8>
// CHECK: kiln.dequantize {{.*}} -> tensor<1x4x4x32xbf16>
// CHECK: kiln.relu {{.*}} : tensor<1x4x4x32xbf16>
// CHECK-NOT: kiln.transpose
// CHECK: kiln.conv {{.*}}channels_last = true
func.func @qdq(%x: tensor<1x32x4x4xbf16>) -> tensor<1x32x4x4xbf16> {
  %w = kiln.constant dense<0.5> : tensor<32x32x1x1xbf16>
  %s = kiln.constant dense<0.05> : tensor<bf16>
  %z = kiln.constant dense<0> : tensor<i8>
  %c = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x32x4x4xbf16>, tensor<32x32x1x1xbf16>) -> tensor<1x32x4x4xbf16>
  %q = kiln.quantize %c, %s, %z : (tensor<1x32x4x4xbf16>, tensor<bf16>, tensor<i8>) -> tensor<1x32x4x4xi8>
  %d = kiln.dequantize %q, %s, %z : (tensor<1x32x4x4xi8>, tensor<bf16>, tensor<i8>) -> tensor<1x32x4x4xbf16>
  %r = kiln.relu %d : tensor<1x32x4x4xbf16>
  %c2 = kiln.conv %r, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x32x4x4xbf16>, tensor<32x32x1x1xbf16>) -> tensor<1x32x4x4xbf16>
  return %c2 : tensor<1x32x4x4xbf16>
}
