// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Reductions, arg reductions and cumsum.

func.func @reduce_constant_axes_shape(%x: tensor<1x128x768xf32>) -> tensor<1x1x768xf32> {
  %axes = kiln.constant dense<[2]> : tensor<1xi64>
  // expected-error @+1 {{'kiln.reduce_mean' op result shape 1x1x768 differs from the shape its operands give, 1x128x1}}
  %0 = kiln.reduce_mean %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x1x768xf32>
  return %0 : tensor<1x1x768xf32>
}

// -----

func.func @reduce_keepdims_mismatch(%x: tensor<1x128x768xf32>) -> tensor<1x128x1xf32> {
  %axes = kiln.constant dense<[-1]> : tensor<1xi64>
  // keepdims = false drops the axis.
  // expected-error @+1 {{'kiln.reduce_sum' op result shape 1x128x1 differs from the shape its operands give, 1x128}}
  %0 = kiln.reduce_sum %x axes %axes {keepdims = false} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  return %0 : tensor<1x128x1xf32>
}

// -----

func.func @reduce_keepdims_default(%x: tensor<1x128x768xf32>) -> tensor<1x128xf32> {
  %axes = kiln.constant dense<[2]> : tensor<1xi64>
  // keepdims defaults to true.
  // expected-error @+1 {{'kiln.reduce_max' op result shape 1x128 differs from the shape its operands give, 1x128x1}}
  %0 = kiln.reduce_max %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128xf32>
  return %0 : tensor<1x128xf32>
}

// -----

func.func @reduce_no_axes(%x: tensor<4x5xf32>) -> tensor<4x1xf32> {
  // Without axes every axis is reduced.
  // expected-error @+1 {{'kiln.reduce_min' op result shape 4x1 differs from the shape its operands give, 1x1}}
  %0 = kiln.reduce_min %x : (tensor<4x5xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_noop_empty_axes(%x: tensor<4x5xf32>) -> tensor<1x1xf32> {
  %axes = kiln.constant dense<> : tensor<0xi64>
  // expected-error @+1 {{'kiln.reduce_prod' op result shape 1x1 differs from the shape its operands give, 4x5}}
  %0 = kiln.reduce_prod %x axes %axes {noop_with_empty_axes = true} : (tensor<4x5xf32>, tensor<0xi64>) -> tensor<1x1xf32>
  return %0 : tensor<1x1xf32>
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<4x5xf32>) -> tensor<4x1xf32> {
  %axes = kiln.constant dense<[2]> : tensor<1xi64>
  // expected-error @+1 {{'kiln.reduce_l1' op reduction axis 2 is out of range for rank 2 (valid: [-2, 1])}}
  %0 = kiln.reduce_l1 %x axes %axes : (tensor<4x5xf32>, tensor<1xi64>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_axis_repeated(%x: tensor<4x5xf32>) -> tensor<4x1xf32> {
  %axes = kiln.constant dense<[1, -1]> : tensor<2xi64>
  // expected-error @+1 {{'kiln.reduce_l2' op reduction axis 1 is repeated}}
  %0 = kiln.reduce_l2 %x axes %axes : (tensor<4x5xf32>, tensor<2xi64>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_axes_not_1d(%x: tensor<4x5xf32>, %axes: tensor<1x1xi64>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'kiln.reduce_sum_square' op axes must be 1-d}}
  %0 = kiln.reduce_sum_square %x axes %axes : (tensor<4x5xf32>, tensor<1x1xi64>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_axes_type(%x: tensor<4x5xf32>, %axes: tensor<1xi32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{'kiln.reduce_log_sum' op operand #1 must be statically shaped tensor of 64-bit signless integer values}}
  %0 = kiln.reduce_log_sum %x axes %axes : (tensor<4x5xf32>, tensor<1xi32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @reduce_computed_axes_keepdims(%x: tensor<4x5xf32>, %axes: tensor<1xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.reduce_log_sum_exp' op result rank does not fit keepdims}}
  %0 = kiln.reduce_log_sum_exp %x axes %axes : (tensor<4x5xf32>, tensor<1xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_computed_axes_no_keepdims(%x: tensor<4x5xf32>, %axes: tensor<1xi64>) -> tensor<4x5x1xf32> {
  // expected-error @+1 {{'kiln.reduce_mean' op result rank does not fit keepdims}}
  %0 = kiln.reduce_mean %x axes %axes {keepdims = false} : (tensor<4x5xf32>, tensor<1xi64>) -> tensor<4x5x1xf32>
  return %0 : tensor<4x5x1xf32>
}

// -----

func.func @reduce_element_type(%x: tensor<4x5xf32>) -> tensor<1x1xf16> {
  // expected-error @+1 {{'kiln.reduce_sum' op result must have the input's element type}}
  %0 = kiln.reduce_sum %x : (tensor<4x5xf32>) -> tensor<1x1xf16>
  return %0 : tensor<1x1xf16>
}

// -----

func.func @argmax_axis(%x: tensor<1x1000xf32>) -> tensor<1x1xi64> {
  // expected-error @+2 {{'kiln.argmax': axis 2 must be in [0, rank) after import}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.argmax %x {axis = 2 : i64} : (tensor<1x1000xf32>) -> tensor<1x1xi64>
  return %0 : tensor<1x1xi64>
}

// -----

func.func @argmin_negative_axis(%x: tensor<1x1000xf32>) -> tensor<1x1xi64> {
  // expected-error @+2 {{'kiln.argmin': axis -1 must be in [0, rank) after import}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.argmin %x {axis = -1 : i64} : (tensor<1x1000xf32>) -> tensor<1x1xi64>
  return %0 : tensor<1x1xi64>
}

// -----

func.func @argmax_keepdims(%x: tensor<1x1000xf32>) -> tensor<1x1xi64> {
  // expected-error @+2 {{inferred type(s) 'tensor<1xi64>' are incompatible with return type(s) of operation 'tensor<1x1xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<1x1000xf32>) -> tensor<1x1xi64>
  return %0 : tensor<1x1xi64>
}

// -----

func.func @argmax_result_type(%x: tensor<1x1000xf32>) -> tensor<1x1xi32> {
  // expected-error @+1 {{'kiln.argmax' op result #0 must be statically shaped tensor of 64-bit signless integer values}}
  %0 = kiln.argmax %x {axis = 1 : i64} : (tensor<1x1000xf32>) -> tensor<1x1xi32>
  return %0 : tensor<1x1xi32>
}

// -----

func.func @cumsum_axis_shape(%x: tensor<2x16xf32>, %a: tensor<2xi64>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'kiln.cumsum' op axis must be a single integer (rank 0 or shape [1])}}
  %0 = kiln.cumsum %x, %a : tensor<2x16xf32>, tensor<2xi64>
  return %0 : tensor<2x16xf32>
}

// -----

func.func @cumsum_axis_range(%x: tensor<2x16xf32>) -> tensor<2x16xf32> {
  %a = kiln.constant dense<2> : tensor<i64>
  // expected-error @+1 {{'kiln.cumsum' op cumsum axis 2 is out of range for rank 2 (valid: [-2, 1])}}
  %0 = kiln.cumsum %x, %a : tensor<2x16xf32>, tensor<i64>
  return %0 : tensor<2x16xf32>
}

// -----

func.func @reduce_keepdims_dim_neither(%x: tensor<4x5x6xi32>, %axes: tensor<2xi64>) -> tensor<4x7x1xi32> {
  // expected-error @+1 {{with keepdims every result dim is the input's or 1, got 4x7x1 for input 4x5x6}}
  %0 = kiln.reduce_sum %x axes %axes : (tensor<4x5x6xi32>, tensor<2xi64>) -> tensor<4x7x1xi32>
  return %0 : tensor<4x7x1xi32>
}
