// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Elementwise ops: broadcasting, element types, comparison results, attributes.

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{shapes 2x3 and 4 do not broadcast (axis 1: 3 vs 4)}}
  // expected-error @+1 {{'kiln.add' op failed to infer returned types}}
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'kiln.mul' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @broadcast_rank_too_low(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<2x3xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @element_types_differ(%a: tensor<2x3xf32>, %b: tensor<3xf16>) -> tensor<2x3xf32> {
  // expected-error @+2 {{operand element types differ: 'f32' vs 'f16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf16>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @compare_result_not_i1(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.equal' op result #0 must be statically shaped tensor of 1-bit signless integer values, but got 'tensor<2x3xf32>'}}
  %0 = kiln.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @compare_result_i8(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi8> {
  // expected-error @+1 {{'kiln.greater' op result #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = kiln.greater %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @compare_bool_operands(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{'kiln.less' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.less %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @logical_not_bool(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+1 {{'kiln.and' op operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = kiln.and %a, %b : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

func.func @float_unary_on_int(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'kiln.exp' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.exp %a : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @gelu_bad_approximate(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.gelu' op attribute 'approximate' failed to satisfy constraint: string attribute one of: none, tanh}}
  %0 = kiln.gelu %a {approximate = "fast"} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @where_types_differ(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf16>) -> tensor<4xf32> {
  // expected-error @+2 {{'kiln.where': x and y element types differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @where_broadcast(%c: tensor<3xi1>, %x: tensor<2x4xf32>, %y: tensor<f32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{'kiln.where': shapes 3 and 2x4 do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.where %c, %x, %y : (tensor<3xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @where_condition_not_bool(%c: tensor<4xi8>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.where' op operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = kiln.where %c, %x, %y : (tensor<4xi8>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clip_bounds_not_scalar(%x: tensor<4xf32>, %lo: tensor<1xf32>, %hi: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+2 {{'kiln.clip': min and max must be rank-0 tensors of 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.clip %x, %lo, %hi : (tensor<4xf32>, tensor<1xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clip_bounds_type(%x: tensor<4xf32>, %lo: tensor<f16>, %hi: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+2 {{min and max must be rank-0 tensors of 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.clip %x, %lo, %hi : (tensor<4xf32>, tensor<f16>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-note @+1 {{prior use here}}
func.func @unary_type_mismatch(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{use of value '%a' expects different type than prior uses: 'tensor<4xf16>' vs 'tensor<4xf32>'}}
  %0 = kiln.relu %a : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @cast_shape_mismatch(%a: tensor<4x2xf32>) -> tensor<8xf16> {
  // expected-error @+1 {{'kiln.cast' op requires the same shape for all operands and results}}
  %0 = kiln.cast %a : tensor<4x2xf32> to tensor<8xf16>
  return %0 : tensor<8xf16>
}
