// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Data movement: reshape, transpose, concat, split, slice, gather, expand, tile, pad, range,
// trilu, topk, depth/space, resize.

func.func @reshape_count(%x: tensor<1x2048x1x1xf32>) -> tensor<1x1024xf32> {
  // expected-error @+1 {{'kiln.reshape' op cannot reshape 1x2048x1x1 (2048 elements) to 1x1024 (1024 elements)}}
  %0 = kiln.reshape %x : tensor<1x2048x1x1xf32> to tensor<1x1024xf32>
  return %0 : tensor<1x1024xf32>
}

// -----

func.func @reshape_element_type(%x: tensor<4xf32>) -> tensor<2x2xf16> {
  // expected-error @+1 {{'kiln.reshape' op element types differ}}
  %0 = kiln.reshape %x : tensor<4xf32> to tensor<2x2xf16>
  return %0 : tensor<2x2xf16>
}

// -----

func.func @transpose_bad_perm(%x: tensor<1x128x12x64xf32>) -> tensor<1x12x12x64xf32> {
  // expected-error @+2 {{'kiln.transpose': perm is not a permutation of [0, rank)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %x {perm = array<i64: 0, 2, 2, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x12x64xf32>
  return %0 : tensor<1x12x12x64xf32>
}

// -----

func.func @transpose_perm_length(%x: tensor<1x128x12x64xf32>) -> tensor<128x1x12x64xf32> {
  // expected-error @+2 {{'kiln.transpose': perm has 3 entries for rank 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<1x128x12x64xf32>) -> tensor<128x1x12x64xf32>
  return %0 : tensor<128x1x12x64xf32>
}

// -----

func.func @transpose_wrong_result(%x: tensor<1x128x12x64xf32>) -> tensor<1x128x12x64xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<1x12x128x64xf32>' are incompatible with return type(s) of operation 'tensor<1x128x12x64xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x128x12x64xf32>
  return %0 : tensor<1x128x12x64xf32>
}

// -----

func.func @concat_mismatch(%a: tensor<1x64x56x56xf32>, %b: tensor<1x32x28x28xf32>) -> tensor<1x96x56x56xf32> {
  // expected-error @+2 {{'kiln.concat': concat input 1 has shape 1x32x28x28, which differs from 1x64x56x56 off the concat axis}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x64x56x56xf32>, tensor<1x32x28x28xf32>) -> tensor<1x96x56x56xf32>
  return %0 : tensor<1x96x56x56xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<5x3xf32> {
  // expected-error @+2 {{'kiln.concat': concat inputs differ in rank}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{'kiln.concat': concat axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concat %a, %b {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{'kiln.concat': operand element types differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_wrong_result(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<2x7xf32>' are incompatible with return type(s) of operation 'tensor<2x6xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @split_sizes(%x: tensor<1x128x2304xf32>) -> (tensor<1x128x768xf32>, tensor<1x128x768xf32>) {
  // expected-error @+1 {{'kiln.split' op split sizes add up to 1536, the axis has 2304}}
  %0:2 = kiln.split %x {axis = 2 : i64} : (tensor<1x128x2304xf32>) -> (tensor<1x128x768xf32>, tensor<1x128x768xf32>)
  return %0#0, %0#1 : tensor<1x128x768xf32>, tensor<1x128x768xf32>
}

// -----

func.func @split_off_axis(%x: tensor<1x128x2304xf32>) -> (tensor<1x128x1152xf32>, tensor<1x64x1152xf32>) {
  // expected-error @+1 {{'kiln.split' op result shape 1x64x1152 differs from the input off the split axis}}
  %0:2 = kiln.split %x {axis = 2 : i64} : (tensor<1x128x2304xf32>) -> (tensor<1x128x1152xf32>, tensor<1x64x1152xf32>)
  return %0#0, %0#1 : tensor<1x128x1152xf32>, tensor<1x64x1152xf32>
}

// -----

func.func @split_axis(%x: tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  // expected-error @+1 {{'kiln.split' op axis -1 must be in [0, rank) after import}}
  %0:2 = kiln.split %x {axis = -1 : i64} : (tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
  return %0#0, %0#1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

func.func @split_element_type(%x: tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x3xf16>) {
  // expected-error @+1 {{'kiln.split' op results must have the input's element type and rank}}
  %0:2 = kiln.split %x {axis = 1 : i64} : (tensor<4x6xf32>) -> (tensor<4x3xf32>, tensor<4x3xf16>)
  return %0#0, %0#1 : tensor<4x3xf32>, tensor<4x3xf16>
}

// -----

func.func @slice_result_shape(%x: tensor<1x128x768xf32>) -> tensor<1x128x768xf32> {
  %starts = kiln.constant dense<[0]> : tensor<1xi64>
  %ends = kiln.constant dense<[64]> : tensor<1xi64>
  %axes = kiln.constant dense<[1]> : tensor<1xi64>
  %steps = kiln.constant dense<[2]> : tensor<1xi64>
  // expected-error @+1 {{'kiln.slice' op result shape 1x128x768 differs from the shape its operands give, 1x32x768}}
  %0 = kiln.slice %x, %starts, %ends, %axes, %steps
      : (tensor<1x128x768xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x128x768xf32>
  return %0 : tensor<1x128x768xf32>
}

// -----

func.func @slice_param_lengths(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %starts = kiln.constant dense<[0, 0]> : tensor<2xi64>
  %ends = kiln.constant dense<[2]> : tensor<1xi64>
  %axes = kiln.constant dense<[0]> : tensor<1xi64>
  %steps = kiln.constant dense<[1]> : tensor<1xi64>
  // expected-error @+1 {{'kiln.slice' op starts, ends, axes and steps must be 1-d tensors of one length, got 2, 1, 1 and 1}}
  %0 = kiln.slice %x, %starts, %ends, %axes, %steps
      : (tensor<4x8xf32>, tensor<2xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_axis_range(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %starts = kiln.constant dense<[0]> : tensor<1xi32>
  %ends = kiln.constant dense<[2]> : tensor<1xi32>
  %axes = kiln.constant dense<[2]> : tensor<1xi32>
  %steps = kiln.constant dense<[1]> : tensor<1xi32>
  // expected-error @+1 {{'kiln.slice' op slice axis 2 is out of range for rank 2 (valid: [-2, 1])}}
  %0 = kiln.slice %x, %starts, %ends, %axes, %steps
      : (tensor<4x8xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %starts = kiln.constant dense<[0]> : tensor<1xi64>
  %ends = kiln.constant dense<[2]> : tensor<1xi64>
  %axes = kiln.constant dense<[0]> : tensor<1xi64>
  %steps = kiln.constant dense<[0]> : tensor<1xi64>
  // expected-error @+1 {{'kiln.slice' op slice step must not be 0}}
  %0 = kiln.slice %x, %starts, %ends, %axes, %steps
      : (tensor<4x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_repeated_axis(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %starts = kiln.constant dense<[0, 0]> : tensor<2xi64>
  %ends = kiln.constant dense<[2, 2]> : tensor<2xi64>
  %axes = kiln.constant dense<[0, -2]> : tensor<2xi64>
  %steps = kiln.constant dense<[1, 1]> : tensor<2xi64>
  // expected-error @+1 {{'kiln.slice' op slice axis 0 is repeated}}
  %0 = kiln.slice %x, %starts, %ends, %axes, %steps
      : (tensor<4x8xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_rank(%x: tensor<4x8xf32>, %p: tensor<1xi64>) -> tensor<8xf32> {
  // expected-error @+1 {{'kiln.slice' op result must have the input's element type and rank}}
  %0 = kiln.slice %x, %p, %p, %p, %p
      : (tensor<4x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @slice_params_not_1d(%x: tensor<4x8xf32>, %p: tensor<1xi64>, %q: tensor<i64>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'kiln.slice' op starts, ends, axes and steps must be 1-d}}
  %0 = kiln.slice %x, %p, %q, %p, %p
      : (tensor<4x8xf32>, tensor<1xi64>, tensor<i64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @gather_axis(%x: tensor<30522x768xf32>, %i: tensor<1x128xi64>) -> tensor<1x128x768xf32> {
  // expected-error @+2 {{'kiln.gather': gather axis out of range}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather %x, %i {axis = 2 : i64} : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
  return %0 : tensor<1x128x768xf32>
}

// -----

func.func @gather_wrong_result(%x: tensor<30522x768xf32>, %i: tensor<1x128xi64>) -> tensor<128x768xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<1x128x768xf32>' are incompatible with return type(s) of operation 'tensor<128x768xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<128x768xf32>
  return %0 : tensor<128x768xf32>
}

// -----

func.func @gather_index_type(%x: tensor<16x4xf32>, %i: tensor<3xi8>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'kiln.gather' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = kiln.gather %x, %i {axis = 0 : i64} : (tensor<16x4xf32>, tensor<3xi8>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_elements_rank(%x: tensor<4x10xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  // expected-error @+2 {{'kiln.gather_elements': indices must have the input's rank and axis must be in [0, rank)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @expand_not_broadcastable(%x: tensor<3x4xf32>) -> tensor<2x3x5xf32> {
  // expected-error @+1 {{'kiln.expand' op shapes 3x4 and 2x3x5 do not broadcast (axis 2: 4 vs 5)}}
  %0 = kiln.expand %x : tensor<3x4xf32> to tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----

func.func @expand_shrinks(%x: tensor<3x4xf32>) -> tensor<1x4xf32> {
  // Broadcasting 3x4 with 1x4 gives 3x4, not the declared 1x4.
  // expected-error @+1 {{'kiln.expand' op result shape 1x4 differs from the shape its operands give, 3x4}}
  %0 = kiln.expand %x : tensor<3x4xf32> to tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @expand_element_type(%x: tensor<3x1xf32>) -> tensor<3x4xi32> {
  // expected-error @+1 {{'kiln.expand' op element types differ}}
  %0 = kiln.expand %x : tensor<3x1xf32> to tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
}

// -----

func.func @tile_non_multiple(%x: tensor<2x3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kiln.tile' op result axis 1 (8) is not a whole multiple of the input's 3}}
  %0 = kiln.tile %x : tensor<2x3xf32> to tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @tile_rank(%x: tensor<2x3xf32>) -> tensor<2x2x3xf32> {
  // expected-error @+1 {{'kiln.tile' op result must have the input's element type and rank}}
  %0 = kiln.tile %x : tensor<2x3xf32> to tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// -----

func.func @tile_empty_axis(%x: tensor<0x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.tile' op result axis 0 (2) is not a whole multiple of the input's 0}}
  %0 = kiln.tile %x : tensor<0x3xf32> to tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @pad_constant_shape(%x: tensor<1x3x224x224xf32>, %v: tensor<f32>) -> tensor<1x3x224x224xf32> {
  %pads = kiln.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  // expected-error @+1 {{'kiln.pad' op result shape 1x3x224x224 differs from the shape its operands give, 1x3x226x226}}
  %0 = kiln.pad %x, %pads, %v : (tensor<1x3x224x224xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x3x224x224xf32>
  return %0 : tensor<1x3x224x224xf32>
}

// -----

func.func @pad_count(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<4x3xf32> {
  %pads = kiln.constant dense<[1, 1]> : tensor<2xi64>
  // expected-error @+1 {{'kiln.pad' op pads must have shape [4] (begins then ends of every axis)}}
  %0 = kiln.pad %x, %pads, %v : (tensor<2x3xf32>, tensor<2xi64>, tensor<f32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @pad_crop_below_zero(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<0x3xf32> {
  %pads = kiln.constant dense<[-2, 0, -1, 0]> : tensor<4xi64>
  // expected-error @+1 {{'kiln.pad' op pads crop axis 0 below zero (-1)}}
  %0 = kiln.pad %x, %pads, %v : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}

// -----

func.func @pad_value_rank(%x: tensor<2x3xf32>, %p: tensor<4xi64>, %v: tensor<1xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'kiln.pad' op padding value must be rank 0}}
  %0 = kiln.pad %x, %p, %v : (tensor<2x3xf32>, tensor<4xi64>, tensor<1xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @pad_value_type(%x: tensor<2x3xf32>, %p: tensor<4xi64>, %v: tensor<f16>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'kiln.pad' op result and padding value must have the input's element type}}
  %0 = kiln.pad %x, %p, %v : (tensor<2x3xf32>, tensor<4xi64>, tensor<f16>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @pad_computed_rank(%x: tensor<2x3xf32>, %p: tensor<4xi64>, %v: tensor<f32>) -> tensor<4x5x1xf32> {
  // expected-error @+1 {{'kiln.pad' op result must have the input's rank}}
  %0 = kiln.pad %x, %p, %v : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x5x1xf32>
  return %0 : tensor<4x5x1xf32>
}

// -----

func.func @pad_bad_mode(%x: tensor<2x3xf32>, %p: tensor<4xi64>, %v: tensor<f32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'kiln.pad' op attribute 'mode' failed to satisfy constraint: string attribute one of: constant, reflect, edge, wrap}}
  %0 = kiln.pad %x, %p, %v {mode = "symmetric"} : (tensor<2x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @range_count(%v: tensor<i64>) -> tensor<6xi64> {
  %start = kiln.constant dense<0> : tensor<i64>
  %limit = kiln.constant dense<10> : tensor<i64>
  %delta = kiln.constant dense<2> : tensor<i64>
  // expected-error @+1 {{'kiln.range' op result has 6 elements, the range 5}}
  %0 = kiln.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<6xi64>
  return %0 : tensor<6xi64>
}

// -----

func.func @range_float_count() -> tensor<3xf32> {
  %start = kiln.constant dense<1.0> : tensor<f32>
  %limit = kiln.constant dense<0.0> : tensor<f32>
  %delta = kiln.constant dense<-0.25> : tensor<f32>
  // expected-error @+1 {{'kiln.range' op result has 3 elements, the range 4}}
  %0 = kiln.range %start, %limit, %delta : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @range_zero_delta() -> tensor<3xi32> {
  %start = kiln.constant dense<0> : tensor<i32>
  %limit = kiln.constant dense<3> : tensor<i32>
  %delta = kiln.constant dense<0> : tensor<i32>
  // expected-error @+1 {{'kiln.range' op range delta must not be 0}}
  %0 = kiln.range %start, %limit, %delta : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @range_operand_types(%a: tensor<i32>, %b: tensor<i64>) -> tensor<4xi64> {
  // expected-error @+1 {{'kiln.range' op start, limit and delta must be rank-0 tensors of the result's type}}
  %0 = kiln.range %a, %b, %b : (tensor<i32>, tensor<i64>, tensor<i64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @range_result_rank(%a: tensor<i64>) -> tensor<2x2xi64> {
  // expected-error @+1 {{'kiln.range' op result must be 1-d}}
  %0 = kiln.range %a, %a, %a : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

func.func @trilu_rank(%x: tensor<8xf32>, %k: tensor<i64>) -> tensor<8xf32> {
  // expected-error @+1 {{'kiln.trilu' op input must have rank >= 2}}
  %0 = kiln.trilu %x, %k : tensor<8xf32>, tensor<i64>
  return %0 : tensor<8xf32>
}

// -----

func.func @trilu_k_rank(%x: tensor<8x8xf32>, %k: tensor<1xi64>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'kiln.trilu' op k must be rank 0}}
  %0 = kiln.trilu %x, %k : tensor<8x8xf32>, tensor<1xi64>
  return %0 : tensor<8x8xf32>
}

// -----

func.func @topk_axis(%x: tensor<1x1000xf32>) -> (tensor<1x5xf32>, tensor<1x5xi64>) {
  // expected-error @+1 {{'kiln.topk' op axis 2 must be in [0, rank) after import}}
  %v, %i = kiln.topk %x {axis = 2 : i64} : (tensor<1x1000xf32>) -> (tensor<1x5xf32>, tensor<1x5xi64>)
  return %v, %i : tensor<1x5xf32>, tensor<1x5xi64>
}

// -----

func.func @topk_k_too_large(%x: tensor<1x10xf32>) -> (tensor<1x11xf32>, tensor<1x11xi64>) {
  // expected-error @+1 {{'kiln.topk' op result shape 1x11 must equal the input's off the axis and be at most it along it}}
  %v, %i = kiln.topk %x {axis = 1 : i64} : (tensor<1x10xf32>) -> (tensor<1x11xf32>, tensor<1x11xi64>)
  return %v, %i : tensor<1x11xf32>, tensor<1x11xi64>
}

// -----

func.func @topk_off_axis(%x: tensor<2x10xf32>) -> (tensor<1x5xf32>, tensor<1x5xi64>) {
  // expected-error @+1 {{'kiln.topk' op result shape 1x5 must equal the input's off the axis and be at most it along it}}
  %v, %i = kiln.topk %x {axis = 1 : i64} : (tensor<2x10xf32>) -> (tensor<1x5xf32>, tensor<1x5xi64>)
  return %v, %i : tensor<1x5xf32>, tensor<1x5xi64>
}

// -----

func.func @topk_results_differ(%x: tensor<1x10xf32>) -> (tensor<1x5xf32>, tensor<1x4xi64>) {
  // expected-error @+1 {{'kiln.topk' op values and indices must have one shape; values the input's element type}}
  %v, %i = kiln.topk %x {axis = 1 : i64} : (tensor<1x10xf32>) -> (tensor<1x5xf32>, tensor<1x4xi64>)
  return %v, %i : tensor<1x5xf32>, tensor<1x4xi64>
}

// -----

func.func @topk_indices_type(%x: tensor<1x10xf32>) -> (tensor<1x5xf32>, tensor<1x5xi32>) {
  // expected-error @+1 {{'kiln.topk' op result #1 must be statically shaped tensor of 64-bit signless integer values}}
  %v, %i = kiln.topk %x {axis = 1 : i64} : (tensor<1x10xf32>) -> (tensor<1x5xf32>, tensor<1x5xi32>)
  return %v, %i : tensor<1x5xf32>, tensor<1x5xi32>
}

// -----

func.func @depth_to_space_channels(%x: tensor<1x6x8x8xf32>) -> tensor<1x1x16x16xf32> {
  // expected-error @+2 {{'kiln.depth_to_space': depth_to_space needs a rank-4 input whose channels divide by blocksize^2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.depth_to_space %x {blocksize = 2 : i64} : (tensor<1x6x8x8xf32>) -> tensor<1x1x16x16xf32>
  return %0 : tensor<1x1x16x16xf32>
}

// -----

func.func @depth_to_space_mode(%x: tensor<1x64x8x8xf32>) -> tensor<1x16x16x16xf32> {
  // expected-error @+1 {{'kiln.depth_to_space' op attribute 'mode' failed to satisfy constraint: string attribute one of: DCR, CRD}}
  %0 = kiln.depth_to_space %x {blocksize = 2 : i64, mode = "RCD"} : (tensor<1x64x8x8xf32>) -> tensor<1x16x16x16xf32>
  return %0 : tensor<1x16x16x16xf32>
}

// -----

func.func @space_to_depth_spatial(%x: tensor<1x4x9x8xf32>) -> tensor<1x16x4x4xf32> {
  // expected-error @+2 {{'kiln.space_to_depth': space_to_depth needs a rank-4 input whose height and width divide by blocksize}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.space_to_depth %x {blocksize = 2 : i64} : (tensor<1x4x9x8xf32>) -> tensor<1x16x4x4xf32>
  return %0 : tensor<1x16x4x4xf32>
}

// -----

func.func @resize_scales_shape(%x: tensor<1x3x32x32xf32>, %s: tensor<2xf32>) -> tensor<1x3x64x64xf32> {
  // expected-error @+1 {{'kiln.resize' op scales must have shape [4]}}
  %0 = kiln.resize %x scales %s : (tensor<1x3x32x32xf32>, tensor<2xf32>) -> tensor<1x3x64x64xf32>
  return %0 : tensor<1x3x64x64xf32>
}

// -----

func.func @resize_roi_shape(%x: tensor<1x3x32x32xf32>, %r: tensor<4xf32>) -> tensor<1x3x64x64xf32> {
  // expected-error @+1 {{'kiln.resize' op roi must have shape [8]}}
  %0 = kiln.resize %x roi %r {coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x3x32x32xf32>, tensor<4xf32>) -> tensor<1x3x64x64xf32>
  return %0 : tensor<1x3x64x64xf32>
}

// -----

func.func @resize_crop_without_roi(%x: tensor<1x3x32x32xf32>) -> tensor<1x3x64x64xf32> {
  // expected-error @+1 {{'kiln.resize' op tf_crop_and_resize needs a roi operand}}
  %0 = kiln.resize %x {coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x3x32x32xf32>) -> tensor<1x3x64x64xf32>
  return %0 : tensor<1x3x64x64xf32>
}

// -----

func.func @resize_rank(%x: tensor<1x3x32x32xf32>) -> tensor<3x64x64xf32> {
  // expected-error @+1 {{'kiln.resize' op result must have the input's element type and rank}}
  %0 = kiln.resize %x : (tensor<1x3x32x32xf32>) -> tensor<3x64x64xf32>
  return %0 : tensor<3x64x64xf32>
}

// -----

func.func @resize_bad_mode(%x: tensor<1x3x32x32xf32>) -> tensor<1x3x64x64xf32> {
  // expected-error @+1 {{'kiln.resize' op attribute 'mode' failed to satisfy constraint: string attribute one of: nearest, linear, cubic}}
  %0 = kiln.resize %x {mode = "bilinear"} : (tensor<1x3x32x32xf32>) -> tensor<1x3x64x64xf32>
  return %0 : tensor<1x3x64x64xf32>
}

// -----

func.func @pad_wrong_pads_length(%x: tensor<2x3xf32>, %p: tensor<3xi64>, %v: tensor<f32>) -> tensor<5x5xf32> {
  // expected-error @+1 {{pads must have shape [4] (begins then ends of every axis)}}
  %0 = kiln.pad %x, %p, %v : (tensor<2x3xf32>, tensor<3xi64>, tensor<f32>) -> tensor<5x5xf32>
  return %0 : tensor<5x5xf32>
}

// -----

func.func @gather_nd_tuple_too_long(%x: tensor<2x3xf32>, %i: tensor<4x3xi64>) -> tensor<4xf32> {
  // expected-error @+2 {{gather_nd index tuples have 3 entries; the input has 2 axes after the batch axes}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather_nd %x, %i : (tensor<2x3xf32>, tensor<4x3xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_result_larger_than_input(%x: tensor<4x4xf32>, %p: tensor<1xi64>) -> tensor<9x4xf32> {
  // expected-error @+1 {{result shape 9x4 is larger than the input's 4x4}}
  %0 = kiln.slice %x, %p, %p, %p, %p : (tensor<4x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<9x4xf32>
  return %0 : tensor<9x4xf32>
}
