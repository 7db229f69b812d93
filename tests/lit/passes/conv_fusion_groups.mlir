// RUN: kiln-opt %s -kiln-form-fusion-groups -split-input-file | FileCheck %s

// A ResNet block's tail in bf16, channels last: conv (with its bias) + residual add + ReLU is
// one conv group computing in f32 and rounding once.
// CHECK-LABEL: func.func @conv_residual_relu
// CHECK: %[[G:.*]] = kiln.fusion_group "conv"(%arg0, {{.*}}, %arg1) : (tensor<1x8x8x16xbf16>, tensor<16x3x3x16xbf16>, tensor<16xbf16>, tensor<1x8x8x16xbf16>) -> tensor<1x8x8x16xbf16> {
// CHECK: kiln.conv {{.*}} {channels_last = true{{.*}}} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
// CHECK: kiln.add {{.*}} -> tensor<1x8x8x16xf32>
// CHECK: %[[R:.*]] = kiln.relu {{.*}} : tensor<1x8x8x16xf32>
// CHECK: %[[N:.*]] = kiln.cast %[[R]] : tensor<1x8x8x16xf32> to tensor<1x8x8x16xbf16>
// CHECK: kiln.yield %[[N]]
// CHECK: return %[[G]]
func.func @conv_residual_relu(%x: tensor<1x8x8x16xbf16>, %skip: tensor<1x8x8x16xbf16>) -> tensor<1x8x8x16xbf16> {
  %w = kiln.constant dense<0.5> : tensor<16x3x3x16xbf16>
  %b = kiln.constant dense<0.25> : tensor<16xbf16>
  %c = kiln.conv %x, %w, %b {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x8x8x16xbf16>, tensor<16x3x3x16xbf16>, tensor<16xbf16>) -> tensor<1x8x8x16xbf16>
  %a = kiln.add %c, %skip : (tensor<1x8x8x16xbf16>, tensor<1x8x8x16xbf16>) -> tensor<1x8x8x16xbf16>
  %r = kiln.relu %a : tensor<1x8x8x16xbf16>
  return %r : tensor<1x8x8x16xbf16>
}

// -----

// A bias-free conv takes a bias row add, then hard swish (MobileNetV3).
// CHECK-LABEL: func.func @conv_bias_row_hard_swish
// CHECK: kiln.fusion_group "conv"
// CHECK: kiln.conv
// CHECK: kiln.add
// CHECK: kiln.hard_swish
func.func @conv_bias_row_hard_swish(%x: tensor<1x4x4x8xbf16>) -> tensor<1x4x4x8xbf16> {
  %w = kiln.constant dense<0.5> : tensor<8x1x1x8xbf16>
  %b = kiln.constant dense<0.25> : tensor<1x1x1x8xbf16>
  %c = kiln.conv %x, %w {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x8xbf16>, tensor<8x1x1x8xbf16>) -> tensor<1x4x4x8xbf16>
  %a = kiln.add %c, %b : (tensor<1x4x4x8xbf16>, tensor<1x1x1x8xbf16>) -> tensor<1x4x4x8xbf16>
  %r = kiln.hard_swish %a : tensor<1x4x4x8xbf16>
  return %r : tensor<1x4x4x8xbf16>
}

// -----

// Clip with constant bounds (ReLU6) joins; the add after it does not (one activation, last).
// CHECK-LABEL: func.func @conv_clip
// CHECK: %[[G:.*]] = kiln.fusion_group "conv"
// CHECK: kiln.clip
// CHECK: kiln.yield
// CHECK: kiln.add %[[G]]
func.func @conv_clip(%x: tensor<1x4x4x8xf32>, %y: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<8x1x1x8xf32>
  %lo = kiln.constant dense<0.0> : tensor<f32>
  %hi = kiln.constant dense<6.0> : tensor<f32>
  %c = kiln.conv %x, %w {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x8xf32>, tensor<8x1x1x8xf32>) -> tensor<1x4x4x8xf32>
  %r = kiln.clip %c, %lo, %hi : (tensor<1x4x4x8xf32>, tensor<f32>, tensor<f32>) -> tensor<1x4x4x8xf32>
  %s = kiln.add %r, %y : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %s : tensor<1x4x4x8xf32>
}

// -----

// Not taken: a depthwise conv (cuDNN has no fast engine for it with an epilogue: its bias and
// ReLU become an elementwise group), a channels-first conv, and a conv read twice.
// CHECK-LABEL: func.func @not_taken
// CHECK-NOT: kiln.fusion_group "conv"
// CHECK: kiln.conv {{.*}}group = 8
// CHECK-NEXT: kiln.fusion_group "elementwise"
// CHECK-NOT: kiln.fusion_group "conv"
// CHECK: return
func.func @not_taken(%x: tensor<1x4x4x8xbf16>, %n: tensor<1x8x4x4xbf16>) -> (tensor<1x4x4x8xbf16>, tensor<1x8x4x4xbf16>, tensor<1x4x4x8xbf16>, tensor<1x4x4x8xbf16>) {
  %dw = kiln.constant dense<0.5> : tensor<8x3x3x1xbf16>
  %b = kiln.constant dense<0.25> : tensor<1x1x1x8xbf16>
  %d = kiln.conv %x, %dw {channels_last = true, group = 8 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x8xbf16>, tensor<8x3x3x1xbf16>) -> tensor<1x4x4x8xbf16>
  %db = kiln.add %d, %b : (tensor<1x4x4x8xbf16>, tensor<1x1x1x8xbf16>) -> tensor<1x4x4x8xbf16>
  %dr = kiln.relu %db : tensor<1x4x4x8xbf16>
  %w = kiln.constant dense<0.5> : tensor<8x8x1x1xbf16>
  %f = kiln.conv %n, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x8x4x4xbf16>, tensor<8x8x1x1xbf16>) -> tensor<1x8x4x4xbf16>
  %fr = kiln.relu %f : tensor<1x8x4x4xbf16>
  %wl = kiln.constant dense<0.5> : tensor<8x1x1x8xbf16>
  %t = kiln.conv %x, %wl {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x8xbf16>, tensor<8x1x1x8xbf16>) -> tensor<1x4x4x8xbf16>
  %tr = kiln.relu %t : tensor<1x4x4x8xbf16>
  return %dr, %fr, %t, %tr : tensor<1x4x4x8xbf16>, tensor<1x8x4x4xbf16>, tensor<1x4x4x8xbf16>, tensor<1x4x4x8xbf16>
}

// -----

// A depthwise conv's own bias moves out into the elementwise group after it, and with it the
// ONNX value the conv node computes: the biasless product is no ONNX value.
// CHECK-LABEL: func.func @depthwise_bias
// CHECK: %[[D:.*]] = kiln.conv %arg0, %{{.*}} {channels_last = true, dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x4x8xbf16>, tensor<8x3x3x1xbf16>) -> tensor<1x4x4x8xbf16>
// CHECK: kiln.fusion_group "elementwise"(%[[D]], %{{.*}}) : (tensor<1x4x4x8xbf16>, tensor<8xbf16>) -> tensor<1x4x4x8xbf16>
// CHECK: kiln.add {{.*}}kiln.onnx_values = ["d"]
// CHECK: kiln.hard_swish
func.func @depthwise_bias(%x: tensor<1x4x4x8xbf16>) -> tensor<1x4x4x8xbf16> {
  %dw = kiln.constant dense<0.5> : tensor<8x3x3x1xbf16>
  %b = kiln.constant dense<0.25> : tensor<8xbf16>
  %d = kiln.conv %x, %dw, %b {channels_last = true, group = 8 : i64, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, kiln.onnx_values = ["d"]} : (tensor<1x4x4x8xbf16>, tensor<8x3x3x1xbf16>, tensor<8xbf16>) -> tensor<1x4x4x8xbf16>
  %r = kiln.hard_swish %d : tensor<1x4x4x8xbf16>
  return %r : tensor<1x4x4x8xbf16>
}
