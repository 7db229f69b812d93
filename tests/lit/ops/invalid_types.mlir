// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Every kiln value is a ranked tensor with a static shape and a supported element type.

func.func @dynamic_shape(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'kiln.relu' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.relu %a : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @dynamic_shape_binary(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'kiln.add' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.add %a, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @dynamic_result(%a: tensor<4x3xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'kiln.reshape' op result #0 must be statically shaped tensor of}}
  %0 = kiln.reshape %a : tensor<4x3xf32> to tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @dynamic_conv_input(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  // expected-error @+1 {{'kiln.conv' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>}
      : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return %0 : tensor<1x4x6x6xf32>
}

// -----

func.func @unranked(%a: tensor<*xf32>) -> tensor<*xf32> {
  // The custom syntax of unary ops parses a ranked tensor type.
  // expected-error @+1 {{custom op 'kiln.exp' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = kiln.exp %a : tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unranked_generic(%a: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'kiln.exp' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type values, but got 'tensor<*xf32>'}}
  %0 = "kiln.exp"(%a) : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @unranked_matmul(%a: tensor<*xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'kiln.matmul' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.matmul %a, %b : (tensor<*xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @not_a_tensor(%a: memref<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.add' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.add %a, %a : (memref<4xf32>, memref<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f80(%a: tensor<4xf80>) -> tensor<4xf80> {
  // expected-error @+1 {{'kiln.neg' op operand #0 must be statically shaped tensor of 64-bit float or 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or 8-bit signless integer}}
  %0 = kiln.neg %a : tensor<4xf80>
  return %0 : tensor<4xf80>
}

// -----

func.func @complex(%a: tensor<4xcomplex<f32>>, %b: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{'kiln.mul' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.mul %a, %b : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @f8e5m2(%a: tensor<4xf8E5M2>) -> tensor<4xf8E5M2> {
  // expected-error @+1 {{'kiln.abs' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.abs %a : tensor<4xf8E5M2>
  return %0 : tensor<4xf8E5M2>
}

// -----

func.func @i4(%a: tensor<4xi4>) -> tensor<4xi4> {
  // expected-error @+1 {{'kiln.relu' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.relu %a : tensor<4xi4>
  return %0 : tensor<4xi4>
}

// -----

func.func @signed_integer(%a: tensor<4xsi32>) -> tensor<4xsi32> {
  // Signed-semantics integers are not used: ONNX's int types are signless.
  // expected-error @+1 {{'kiln.sign' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.sign %a : tensor<4xsi32>
  return %0 : tensor<4xsi32>
}

// -----

func.func @index_element(%a: tensor<4xindex>) -> tensor<2x2xindex> {
  // expected-error @+1 {{'kiln.reshape' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.reshape %a : tensor<4xindex> to tensor<2x2xindex>
  return %0 : tensor<2x2xindex>
}

// -----

func.func @cast_to_unsupported(%a: tensor<4xf32>) -> tensor<4xf80> {
  // expected-error @+1 {{'kiln.cast' op result #0 must be statically shaped tensor of}}
  %0 = kiln.cast %a : tensor<4xf32> to tensor<4xf80>
  return %0 : tensor<4xf80>
}

// -----

func.func @constant_unsupported_element() -> tensor<2xcomplex<f32>> {
  // expected-error @+1 {{'kiln.constant' op result #0 must be statically shaped tensor of}}
  %0 = kiln.constant dense<[(1.0, 0.0), (0.0, 1.0)]> : tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

func.func @constant_type_mismatch() -> tensor<2xi32> {
  // expected-error @+1 {{'kiln.constant' op failed to verify that all of {value, output} have same type}}
  %0 = "kiln.constant"() <{value = dense<[1, 2]> : tensor<2xi64>}> : () -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @constant_not_elements() -> tensor<i64> {
  // expected-error @+1 {{invalid properties {value = 1 : i64} for op kiln.constant: Invalid attribute `value` in property conversion}}
  %0 = "kiln.constant"() <{value = 1 : i64}> : () -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

func.func @unknown_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{custom op 'kiln.swish' is unknown}}
  %0 = kiln.swish %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
