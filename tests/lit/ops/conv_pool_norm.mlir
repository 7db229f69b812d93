// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// The generic form (properties spelled out) parses back to the same ops.
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// Convolution, transposed convolution, pooling and normalization (NCHW).

// CHECK-LABEL: func.func @conv_stem
func.func @conv_stem(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>,
                     %b: tensor<64xf32>) -> tensor<1x64x112x112xf32> {
  // CHECK: kiln.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
                             pads = array<i64: 3, 3, 3, 3>}
      : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  return %0 : tensor<1x64x112x112xf32>
}

// CHECK-LABEL: func.func @conv_depthwise_no_bias
func.func @conv_depthwise_no_bias(%x: tensor<1x32x112x112xf16>, %w: tensor<32x1x3x3xf16>)
    -> tensor<1x32x112x112xf16> {
  // CHECK: kiln.conv %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 32 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x32x112x112xf16>, tensor<32x1x3x3xf16>) -> tensor<1x32x112x112xf16>
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
                         pads = array<i64: 1, 1, 1, 1>, group = 32 : i64}
      : (tensor<1x32x112x112xf16>, tensor<32x1x3x3xf16>) -> tensor<1x32x112x112xf16>
  return %0 : tensor<1x32x112x112xf16>
}

// CHECK-LABEL: func.func @conv_1d_dilated
func.func @conv_1d_dilated(%x: tensor<1x16x100xbf16>, %w: tensor<32x16x3xbf16>)
    -> tensor<1x32x96xbf16> {
  // CHECK: kiln.conv %{{.*}}, %{{.*}} {dilations = array<i64: 2>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x16x100xbf16>, tensor<32x16x3xbf16>) -> tensor<1x32x96xbf16>
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 2>, pads = array<i64: 0, 0>}
      : (tensor<1x16x100xbf16>, tensor<32x16x3xbf16>) -> tensor<1x32x96xbf16>
  return %0 : tensor<1x32x96xbf16>
}

// CHECK-LABEL: func.func @conv_3d_grouped
func.func @conv_3d_grouped(%x: tensor<2x4x8x16x16xf32>, %w: tensor<8x2x3x3x3xf32>,
                           %b: tensor<8xf32>) -> tensor<2x8x8x16x16xf32> {
  // CHECK: kiln.conv %{{.*}}, %{{.*}}, %{{.*}} {{.*}}group = 2 : i64{{.*}} -> tensor<2x8x8x16x16xf32>
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1, 1>,
                             pads = array<i64: 1, 1, 1, 1, 1, 1>, group = 2 : i64}
      : (tensor<2x4x8x16x16xf32>, tensor<8x2x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x8x16x16xf32>
  return %0 : tensor<2x8x8x16x16xf32>
}

// CHECK-LABEL: func.func @conv_transpose
func.func @conv_transpose(%x: tensor<1x64x14x14xf32>, %w: tensor<64x32x4x4xf32>,
                          %b: tensor<32xf32>, %wg: tensor<64x16x4x4xf32>)
    -> (tensor<1x32x28x28xf32>, tensor<1x32x29x29xf32>) {
  // CHECK: kiln.conv_transpose %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x14x14xf32>, tensor<64x32x4x4xf32>, tensor<32xf32>) -> tensor<1x32x28x28xf32>
  %0 = kiln.conv_transpose %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
                                       pads = array<i64: 1, 1, 1, 1>,
                                       output_padding = array<i64: 0, 0>}
      : (tensor<1x64x14x14xf32>, tensor<64x32x4x4xf32>, tensor<32xf32>) -> tensor<1x32x28x28xf32>
  // Two groups of 16 output channels; output_padding adds one row and column.
  // CHECK: kiln.conv_transpose %{{.*}}, %{{.*}} {{.*}}group = 2 : i64, output_padding = array<i64: 1, 1>{{.*}} : (tensor<1x64x14x14xf32>, tensor<64x16x4x4xf32>) -> tensor<1x32x29x29xf32>
  %1 = kiln.conv_transpose %x, %wg {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>,
                                    pads = array<i64: 1, 1, 1, 1>,
                                    output_padding = array<i64: 1, 1>, group = 2 : i64}
      : (tensor<1x64x14x14xf32>, tensor<64x16x4x4xf32>) -> tensor<1x32x29x29xf32>
  return %0, %1 : tensor<1x32x28x28xf32>, tensor<1x32x29x29xf32>
}

// CHECK-LABEL: func.func @pools
func.func @pools(%x: tensor<1x64x112x112xf32>, %y: tensor<1x8x7x7xf16>)
    -> (tensor<1x64x28x28xf32>, tensor<1x8x4x4xf16>, tensor<1x64x57x57xf32>) {
  // CHECK: kiln.max_pool %{{.*}} {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                         dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.avg_pool %{{.*}} {count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>
  %1 = kiln.avg_pool %0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                         dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                         count_include_pad = true}
      : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>
  // ceil_mode rounds 7 -> 4 windows of 2 with stride 2.
  // CHECK: kiln.max_pool %{{.*}} {ceil_mode = true, {{.*}}} : (tensor<1x8x7x7xf16>) -> tensor<1x8x4x4xf16>
  %2 = kiln.max_pool %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                         dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>,
                         ceil_mode = true}
      : (tensor<1x8x7x7xf16>) -> tensor<1x8x4x4xf16>
  // CHECK: kiln.avg_pool %{{.*}} {ceil_mode = true, {{.*}}} : (tensor<1x64x112x112xf32>) -> tensor<1x64x57x57xf32>
  %3 = kiln.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                         dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
                         ceil_mode = true}
      : (tensor<1x64x112x112xf32>) -> tensor<1x64x57x57xf32>
  return %1, %2, %3 : tensor<1x64x28x28xf32>, tensor<1x8x4x4xf16>, tensor<1x64x57x57xf32>
}

// CHECK-LABEL: func.func @global_pools
func.func @global_pools(%x: tensor<1x2048x7x7xf32>, %y: tensor<2x16x10xbf16>)
    -> (tensor<1x2048x1x1xf32>, tensor<2x16x1xbf16>) {
  // CHECK: kiln.global_avg_pool %{{.*}} : (tensor<1x2048x7x7xf32>) -> tensor<1x2048x1x1xf32>
  %0 = kiln.global_avg_pool %x : (tensor<1x2048x7x7xf32>) -> tensor<1x2048x1x1xf32>
  // CHECK: kiln.global_max_pool %{{.*}} : (tensor<2x16x10xbf16>) -> tensor<2x16x1xbf16>
  %1 = kiln.global_max_pool %y : (tensor<2x16x10xbf16>) -> tensor<2x16x1xbf16>
  return %0, %1 : tensor<1x2048x1x1xf32>, tensor<2x16x1xbf16>
}

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<1x64x112x112xf32>, %s: tensor<64xf32>, %b: tensor<64xf32>,
                      %m: tensor<64xf32>, %v: tensor<64xf32>) -> tensor<1x64x112x112xf32> {
  // CHECK: kiln.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f32} : (tensor<1x64x112x112xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  %0 = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f32}
      : (tensor<1x64x112x112xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>)
      -> tensor<1x64x112x112xf32>
  return %0 : tensor<1x64x112x112xf32>
}

// CHECK-LABEL: func.func @instance_group_norm
func.func @instance_group_norm(%x: tensor<2x64x32x32xf16>, %s: tensor<64xf16>,
                               %b: tensor<64xf16>) -> tensor<2x64x32x32xf16> {
  // CHECK: kiln.instance_norm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x64x32x32xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<2x64x32x32xf16>
  %0 = kiln.instance_norm %x, %s, %b
      : (tensor<2x64x32x32xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<2x64x32x32xf16>
  // CHECK: kiln.group_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 9.99999997E-7 : f32, num_groups = 8 : i64} : (tensor<2x64x32x32xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<2x64x32x32xf16>
  %1 = kiln.group_norm %0, %s, %b {num_groups = 8 : i64, epsilon = 1.0e-6 : f32}
      : (tensor<2x64x32x32xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<2x64x32x32xf16>
  return %1 : tensor<2x64x32x32xf16>
}

// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<1x128x768xf32>, %s: tensor<768xf32>, %b: tensor<768xf32>,
                      %s2: tensor<128x768xf32>) -> tensor<1x128x768xf32> {
  // CHECK: kiln.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 9.99999996E-13 : f32} : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  %0 = kiln.layer_norm %x, %s, %b {axis = 2 : i64, epsilon = 1.0e-12 : f32}
      : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  // Without bias, normalizing the last two axes.
  // CHECK: kiln.layer_norm %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x128x768xf32>, tensor<128x768xf32>) -> tensor<1x128x768xf32>
  %1 = kiln.layer_norm %0, %s2 {axis = 1 : i64}
      : (tensor<1x128x768xf32>, tensor<128x768xf32>) -> tensor<1x128x768xf32>
  return %1 : tensor<1x128x768xf32>
}
