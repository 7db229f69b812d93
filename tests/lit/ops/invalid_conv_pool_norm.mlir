// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Convolution, pooling and normalization shape rules.

func.func @conv_channel_mismatch(%x: tensor<1x3x32x32xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+2 {{'kiln.conv': weight expects 4 input channels per group, the input has 3 channels in 1 groups}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
      : (tensor<1x3x32x32xf32>, tensor<16x4x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

func.func @conv_group_not_dividing(%x: tensor<1x32x8x8xf32>, %w: tensor<30x4x3x3xf32>) -> tensor<1x30x6x6xf32> {
  // expected-error @+2 {{'kiln.conv': group 8 must divide input channels 32 and output channels 30}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 8 : i64}
      : (tensor<1x32x8x8xf32>, tensor<30x4x3x3xf32>) -> tensor<1x30x6x6xf32>
  return %0 : tensor<1x30x6x6xf32>
}

// -----

func.func @conv_group_channels(%x: tensor<1x32x8x8xf32>, %w: tensor<32x2x3x3xf32>) -> tensor<1x32x6x6xf32> {
  // A depthwise weight [32, 1, 3, 3] is needed with group = 32; [32, 2, 3, 3] is not.
  // expected-error @+2 {{weight expects 2 input channels per group, the input has 32 channels in 32 groups}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, group = 32 : i64}
      : (tensor<1x32x8x8xf32>, tensor<32x2x3x3xf32>) -> tensor<1x32x6x6xf32>
  return %0 : tensor<1x32x6x6xf32>
}

// -----

func.func @conv_bias_shape(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+2 {{'kiln.conv': bias must have shape [16]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
      : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

func.func @conv_wrong_result(%x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>) -> tensor<1x64x224x224xf32> {
  // expected-error @+2 {{'kiln.conv' op inferred type(s) 'tensor<1x64x112x112xf32>' are incompatible with return type(s) of operation 'tensor<1x64x224x224xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 3, 3, 3, 3>}
      : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>) -> tensor<1x64x224x224xf32>
  return %0 : tensor<1x64x224x224xf32>
}

// -----

func.func @conv_pads_count(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x32x32xf32> {
  // expected-error @+2 {{'kiln.conv': needs 2 strides, 2 dilations and 4 pads, got 2, 2 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>}
      : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x32x32xf32>
  return %0 : tensor<1x16x32x32xf32>
}

// -----

func.func @conv_weight_rank(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+2 {{'kiln.conv': weight rank 3 differs from input rank 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1>, pads = array<i64: 0, 0>}
      : (tensor<1x3x32x32xf32>, tensor<16x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+2 {{'kiln.conv': strides and dilations must be >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
      : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

func.func @conv_kernel_too_large(%x: tensor<1x3x4x4xf32>, %w: tensor<16x3x7x7xf32>) -> tensor<1x16x1x1xf32> {
  // expected-error @+2 {{'kiln.conv': spatial axis 0: padded size 4 is smaller than the dilated kernel 7}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
      : (tensor<1x3x4x4xf32>, tensor<16x3x7x7xf32>) -> tensor<1x16x1x1xf32>
  return %0 : tensor<1x16x1x1xf32>
}

// -----

func.func @conv_missing_attr(%x: tensor<1x3x32x32xf32>, %w: tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32> {
  // expected-error @+1 {{requires attribute 'pads'}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x30x30xf32>
  return %0 : tensor<1x16x30x30xf32>
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x64x14x14xf32>, %w: tensor<32x32x4x4xf32>) -> tensor<1x32x28x28xf32> {
  // expected-error @+2 {{'kiln.conv_transpose': weight expects 32 input channels, the input has 64}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 0, 0>}
      : (tensor<1x64x14x14xf32>, tensor<32x32x4x4xf32>) -> tensor<1x32x28x28xf32>
  return %0 : tensor<1x32x28x28xf32>
}

// -----

func.func @conv_transpose_bias(%x: tensor<1x64x14x14xf32>, %w: tensor<64x32x4x4xf32>, %b: tensor<64xf32>) -> tensor<1x32x28x28xf32> {
  // expected-error @+2 {{'kiln.conv_transpose': bias must have shape [32]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv_transpose %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 0, 0>}
      : (tensor<1x64x14x14xf32>, tensor<64x32x4x4xf32>, tensor<64xf32>) -> tensor<1x32x28x28xf32>
  return %0 : tensor<1x32x28x28xf32>
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x64x14x14xf32>, %w: tensor<64x32x4x4xf32>) -> tensor<1x32x28x28xf32> {
  // expected-error @+2 {{'kiln.conv_transpose': needs 2 output_padding values, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 0>}
      : (tensor<1x64x14x14xf32>, tensor<64x32x4x4xf32>) -> tensor<1x32x28x28xf32>
  return %0 : tensor<1x32x28x28xf32>
}

// -----

func.func @pool_pads_count(%x: tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32> {
  // expected-error @+2 {{'kiln.max_pool': needs 2 strides, 2 dilations and 4 pads, got 2, 2 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1>}
      : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  return %0 : tensor<1x64x56x56xf32>
}

// -----

func.func @pool_kernel_rank(%x: tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32> {
  // expected-error @+2 {{'kiln.avg_pool': kernel has 1 spatial axes but the input has 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.avg_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>}
      : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  return %0 : tensor<1x64x56x56xf32>
}

// -----

func.func @pool_negative_pads(%x: tensor<1x64x112x112xf32>) -> tensor<1x64x55x55xf32> {
  // expected-error @+2 {{'kiln.max_pool': pads must be >= 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: -1, -1, 0, 0>}
      : (tensor<1x64x112x112xf32>) -> tensor<1x64x55x55xf32>
  return %0 : tensor<1x64x55x55xf32>
}

// -----

func.func @pool_wrong_result(%x: tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32> {
  // With ceil_mode the 3x3/2 window over 112 + 2 gives 57.
  // expected-error @+2 {{inferred type(s) 'tensor<1x64x57x57xf32>' are incompatible with return type(s) of operation 'tensor<1x64x56x56xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, ceil_mode = true}
      : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  return %0 : tensor<1x64x56x56xf32>
}

// -----

func.func @pool_rank_2(%x: tensor<64x112xf32>) -> tensor<64x56xf32> {
  // expected-error @+2 {{'kiln.max_pool': expects an input of rank >= 3 ([N, C, spatial...]), got 64x112}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2>, dilations = array<i64: 1>, pads = array<i64: 0, 0>}
      : (tensor<64x112xf32>) -> tensor<64x56xf32>
  return %0 : tensor<64x56xf32>
}

// -----

func.func @global_pool_rank(%x: tensor<1x2048xf32>) -> tensor<1x2048xf32> {
  // expected-error @+2 {{'kiln.global_avg_pool': input must have rank >= 3, got 1x2048}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.global_avg_pool %x : (tensor<1x2048xf32>) -> tensor<1x2048xf32>
  return %0 : tensor<1x2048xf32>
}

// -----

func.func @batch_norm_params(%x: tensor<1x64x8x8xf32>, %s: tensor<64xf32>, %b: tensor<32xf32>) -> tensor<1x64x8x8xf32> {
  // expected-error @+2 {{'kiln.batch_norm': parameters must have shape [64], got 32}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.batch_norm %x, %s, %b, %s, %s
      : (tensor<1x64x8x8xf32>, tensor<64xf32>, tensor<32xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x8x8xf32>
  return %0 : tensor<1x64x8x8xf32>
}

// -----

func.func @batch_norm_param_type(%x: tensor<1x64x8x8xf16>, %s: tensor<64xf32>, %b: tensor<64xf16>) -> tensor<1x64x8x8xf16> {
  // expected-error @+2 {{'kiln.batch_norm': parameters must have the input's element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.batch_norm %x, %s, %b, %b, %b
      : (tensor<1x64x8x8xf16>, tensor<64xf32>, tensor<64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<1x64x8x8xf16>
  return %0 : tensor<1x64x8x8xf16>
}

// -----

func.func @instance_norm_rank(%x: tensor<2x16xf32>, %s: tensor<16xf32>) -> tensor<2x16xf32> {
  // expected-error @+2 {{'kiln.instance_norm': input must have rank >= 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.instance_norm %x, %s, %s : (tensor<2x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

func.func @group_norm_groups(%x: tensor<1x64x8x8xf32>, %s: tensor<64xf32>) -> tensor<1x64x8x8xf32> {
  // expected-error @+2 {{'kiln.group_norm': num_groups 6 must divide the channels of a rank >= 3 input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.group_norm %x, %s, %s {num_groups = 6 : i64}
      : (tensor<1x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x8x8xf32>
  return %0 : tensor<1x64x8x8xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<1x128x768xf32>, %s: tensor<768xf32>) -> tensor<1x128x768xf32> {
  // expected-error @+2 {{'kiln.layer_norm': axis -1 must be in [0, rank) after import}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.layer_norm %x, %s {axis = -1 : i64} : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  return %0 : tensor<1x128x768xf32>
}

// -----

func.func @layer_norm_axis_too_large(%x: tensor<1x128x768xf32>, %s: tensor<768xf32>) -> tensor<1x128x768xf32> {
  // expected-error @+2 {{'kiln.layer_norm': axis 3 must be in [0, rank) after import}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.layer_norm %x, %s {axis = 3 : i64} : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  return %0 : tensor<1x128x768xf32>
}

// -----

func.func @layer_norm_scale_shape(%x: tensor<1x128x768xf32>, %s: tensor<128xf32>) -> tensor<1x128x768xf32> {
  // expected-error @+2 {{'kiln.layer_norm': scale/bias shape 128 does not broadcast to 768}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.layer_norm %x, %s {axis = 2 : i64} : (tensor<1x128x768xf32>, tensor<128xf32>) -> tensor<1x128x768xf32>
  return %0 : tensor<1x128x768xf32>
}

// -----

func.func @layer_norm_scale_too_big(%x: tensor<1x128x768xf32>, %s: tensor<128x768xf32>) -> tensor<1x128x768xf32> {
  // Broadcasting scale would grow the normalized shape.
  // expected-error @+2 {{'kiln.layer_norm': scale/bias shape 128x768 does not broadcast to 768}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.layer_norm %x, %s {axis = 2 : i64} : (tensor<1x128x768xf32>, tensor<128x768xf32>) -> tensor<1x128x768xf32>
  return %0 : tensor<1x128x768xf32>
}

// -----

func.func @conv_mixed_weight_type(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32> {
  // expected-error @+2 {{'kiln.conv': operand element type 'f16' differs from the input's 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @depth_to_space_huge_blocksize(%x: tensor<1x64x8x8xf32>) -> tensor<1x16x16x16xf32> {
  // expected-error @+2 {{depth_to_space needs a rank-4 input whose channels divide by blocksize^2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.depth_to_space %x {blocksize = 4294967296 : i64} : (tensor<1x64x8x8xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}
