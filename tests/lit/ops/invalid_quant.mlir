// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// QuantizeLinear / DequantizeLinear parameters.

func.func @quantize_zero_point_type(%x: tensor<4x8xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4x8xi8> {
  // expected-error @+1 {{'kiln.quantize' op zero_point must have the result's element type}}
  %0 = kiln.quantize %x, %s, %z : (tensor<4x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x8xi8>
  return %0 : tensor<4x8xi8>
}

// -----

func.func @dequantize_zero_point_type(%x: tensor<4x8xi8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kiln.dequantize' op zero_point element type 'ui8' differs from the input's 'i8'}}
  %0 = kiln.dequantize %x, %s, %z : (tensor<4x8xi8>, tensor<f32>, tensor<ui8>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @dequantize_scale_type(%x: tensor<4x8xi8>, %s: tensor<f16>, %z: tensor<i8>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kiln.dequantize' op scale must have the result's element type}}
  %0 = kiln.dequantize %x, %s, %z : (tensor<4x8xi8>, tensor<f16>, tensor<i8>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @per_axis_scale_size(%w: tensor<64x3x7x7xf32>, %s: tensor<32xf32>, %z: tensor<32xi8>) -> tensor<64x3x7x7xi8> {
  // expected-error @+1 {{'kiln.quantize' op per-axis scale has 32 values, axis 0 has 64}}
  %0 = kiln.quantize %w, %s, %z {axis = 0 : i64} : (tensor<64x3x7x7xf32>, tensor<32xf32>, tensor<32xi8>) -> tensor<64x3x7x7xi8>
  return %0 : tensor<64x3x7x7xi8>
}

// -----

func.func @per_axis_default_axis(%w: tensor<64x3x7x7xi8>, %s: tensor<64xf32>, %z: tensor<64xi8>) -> tensor<64x3x7x7xf32> {
  // The default axis is 1.
  // expected-error @+1 {{'kiln.dequantize' op per-axis scale has 64 values, axis 1 has 3}}
  %0 = kiln.dequantize %w, %s, %z : (tensor<64x3x7x7xi8>, tensor<64xf32>, tensor<64xi8>) -> tensor<64x3x7x7xf32>
  return %0 : tensor<64x3x7x7xf32>
}

// -----

func.func @per_axis_axis_range(%w: tensor<64x3xf32>, %s: tensor<64xf32>, %z: tensor<64xi8>) -> tensor<64x3xi8> {
  // expected-error @+1 {{'kiln.quantize' op axis 2 must be in [0, rank) for per-axis scales}}
  %0 = kiln.quantize %w, %s, %z {axis = 2 : i64} : (tensor<64x3xf32>, tensor<64xf32>, tensor<64xi8>) -> tensor<64x3xi8>
  return %0 : tensor<64x3xi8>
}

// -----

func.func @scale_zero_point_shapes(%x: tensor<64x3xf32>, %s: tensor<64xf32>, %z: tensor<i8>) -> tensor<64x3xi8> {
  // expected-error @+1 {{'kiln.quantize' op scale and zero_point must have one shape}}
  %0 = kiln.quantize %x, %s, %z {axis = 0 : i64} : (tensor<64x3xf32>, tensor<64xf32>, tensor<i8>) -> tensor<64x3xi8>
  return %0 : tensor<64x3xi8>
}

// -----

func.func @scale_rank(%x: tensor<64x3xf32>, %s: tensor<64x3xf32>, %z: tensor<64x3xi8>) -> tensor<64x3xi8> {
  // expected-error @+1 {{'kiln.quantize' op 'scale' must have rank 0 or 1, got rank 2}}
  %0 = kiln.quantize %x, %s, %z : (tensor<64x3xf32>, tensor<64x3xf32>, tensor<64x3xi8>) -> tensor<64x3xi8>
  return %0 : tensor<64x3xi8>
}

// -----

func.func @quantize_shape(%x: tensor<64x3xf32>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<3x64xi8> {
  // expected-error @+1 {{'kiln.quantize' op result must have the input's shape}}
  %0 = kiln.quantize %x, %s, %z : (tensor<64x3xf32>, tensor<f32>, tensor<i8>) -> tensor<3x64xi8>
  return %0 : tensor<3x64xi8>
}

// -----

func.func @dequantize_shape(%x: tensor<64x3xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<192xf32> {
  // expected-error @+1 {{'kiln.dequantize' op result must have the input's shape}}
  %0 = kiln.dequantize %x, %s, %z : (tensor<64x3xi8>, tensor<f32>, tensor<i8>) -> tensor<192xf32>
  return %0 : tensor<192xf32>
}

// -----

func.func @quantize_to_float(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<f16>) -> tensor<4xf16> {
  // expected-error @+1 {{'kiln.quantize' op operand #2 must be statically shaped tensor of 8-bit signless integer or 8-bit unsigned integer or 32-bit signless integer or f8E4M3FN type values}}
  %0 = kiln.quantize %x, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<f16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @quantize_scale_type(%x: tensor<4x8xf32>, %s: tensor<f16>, %z: tensor<i8>) -> tensor<4x8xi8> {
  // expected-error @+1 {{scale element type 'f16' differs from the input's 'f32'}}
  %0 = kiln.quantize %x, %s, %z : (tensor<4x8xf32>, tensor<f16>, tensor<i8>) -> tensor<4x8xi8>
  return %0 : tensor<4x8xi8>
}
