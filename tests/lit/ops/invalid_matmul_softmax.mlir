// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Matrix products and softmax.

func.func @matmul_contraction(%a: tensor<2x128x64xf32>, %b: tensor<32x128xf32>) -> tensor<2x128x128xf32> {
  // expected-error @+2 {{'kiln.matmul': matmul contraction sizes differ: 2x128x64 x 32x128}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<2x128x64xf32>, tensor<32x128xf32>) -> tensor<2x128x128xf32>
  return %0 : tensor<2x128x128xf32>
}

// -----

func.func @matmul_batch_broadcast(%a: tensor<3x4x8xf32>, %b: tensor<2x8x5xf32>) -> tensor<3x4x5xf32> {
  // expected-error @+2 {{'kiln.matmul': shapes 3 and 2 do not broadcast (axis 0: 3 vs 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<3x4x8xf32>, tensor<2x8x5xf32>) -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
}

// -----

func.func @matmul_vector_result(%a: tensor<64xf32>, %b: tensor<64x32xf32>) -> tensor<1x32xf32> {
  // The promoted axis of a 1-d lhs is removed again.
  // expected-error @+2 {{inferred type(s) 'tensor<32xf32>' are incompatible with return type(s) of operation 'tensor<1x32xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<64xf32>, tensor<64x32xf32>) -> tensor<1x32xf32>
  return %0 : tensor<1x32xf32>
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{'kiln.matmul': matmul operands must have rank >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @matmul_element_types(%a: tensor<4x8xf32>, %b: tensor<8x2xf16>) -> tensor<4x2xf32> {
  // expected-error @+2 {{'kiln.matmul': operand element types differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x2xf16>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @gemm_contraction(%a: tensor<1x2048xf32>, %b: tensor<1000x2048xf32>) -> tensor<1x1000xf32> {
  // Without trans_b, B is [K, N] = [1000, 2048].
  // expected-error @+2 {{'kiln.gemm': contraction sizes differ (2048 vs 1000)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gemm %a, %b : (tensor<1x2048xf32>, tensor<1000x2048xf32>) -> tensor<1x1000xf32>
  return %0 : tensor<1x1000xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{'kiln.gemm': A and B must be 2-d}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gemm %a, %b : (tensor<2x4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @gemm_c_shape(%a: tensor<4x8xf32>, %b: tensor<3x8xf32>, %c: tensor<4xf32>) -> tensor<4x3xf32> {
  // expected-error @+2 {{'kiln.gemm': C of shape 4 does not broadcast to 4x3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gemm %a, %b, %c {trans_b = true} : (tensor<4x8xf32>, tensor<3x8xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @gemm_c_too_big(%a: tensor<1x8xf32>, %b: tensor<8x3xf32>, %c: tensor<4x3xf32>) -> tensor<1x3xf32> {
  // C must broadcast to [M, N], not the other way round.
  // expected-error @+2 {{'kiln.gemm': C of shape 4x3 does not broadcast to 1x3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gemm %a, %b, %c : (tensor<1x8xf32>, tensor<8x3xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @gemm_trans_result(%a: tensor<8x4xf32>, %b: tensor<8x3xf32>) -> tensor<8x3xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s) of operation 'tensor<8x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gemm %a, %b {trans_a = true} : (tensor<8x4xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

func.func @einsum_operand_count(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+2 {{'kiln.einsum': einsum equation has 2 operands, the op has 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.einsum %a {equation = "ij,jk->ik"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @einsum_label_sizes(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>) -> tensor<3x6xf32> {
  // expected-error @+2 {{'kiln.einsum': einsum label 'j' has sizes 4 and 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

func.func @einsum_rank(%a: tensor<3x4x5xf32>) -> tensor<3x4xf32> {
  // expected-error @+2 {{'kiln.einsum': einsum term 'ij' does not match operand rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.einsum %a {equation = "ij->ij"} : (tensor<3x4x5xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @einsum_output_label(%a: tensor<3x4xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{'kiln.einsum': einsum output label 'k' is not an input label}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.einsum %a {equation = "ij->k"} : (tensor<3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @softmax_axis(%x: tensor<2x128xf32>) -> tensor<2x128xf32> {
  // expected-error @+1 {{'kiln.softmax' op axis 2 must be in [0, rank) after import}}
  %0 = kiln.softmax %x {axis = 2 : i64} : tensor<2x128xf32>
  return %0 : tensor<2x128xf32>
}

// -----

func.func @softmax_negative_axis(%x: tensor<2x128xf32>) -> tensor<2x128xf32> {
  // Negative axes are normalized at import.
  // expected-error @+1 {{'kiln.softmax' op axis -1 must be in [0, rank) after import}}
  %0 = kiln.softmax %x {axis = -1 : i64} : tensor<2x128xf32>
  return %0 : tensor<2x128xf32>
}

// -----

func.func @log_softmax_axis(%x: tensor<1x1000xf16>) -> tensor<1x1000xf16> {
  // expected-error @+1 {{'kiln.log_softmax' op axis 5 must be in [0, rank) after import}}
  %0 = kiln.log_softmax %x {axis = 5 : i64} : tensor<1x1000xf16>
  return %0 : tensor<1x1000xf16>
}

// -----

func.func @softmax_missing_axis(%x: tensor<2x128xf32>) -> tensor<2x128xf32> {
  // expected-error @+1 {{requires attribute 'axis'}}
  %0 = kiln.softmax %x : tensor<2x128xf32>
  return %0 : tensor<2x128xf32>
}

// -----

func.func @softmax_int(%x: tensor<2x128xi32>) -> tensor<2x128xi32> {
  // expected-error @+1 {{'kiln.softmax' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.softmax %x {axis = 1 : i64} : tensor<2x128xi32>
  return %0 : tensor<2x128xi32>
}

// -----

func.func @gemm_mixed_types(%a: tensor<4x8xf32>, %b: tensor<8x3xf16>) -> tensor<4x3xf32> {
  // expected-error @+2 {{'kiln.gemm': operand element type 'f16' differs from the input's 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gemm %a, %b : (tensor<4x8xf32>, tensor<8x3xf16>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @einsum_mixed_types(%a: tensor<4x8xf32>, %b: tensor<8x3xi8>) -> tensor<4x3xf32> {
  // expected-error @+2 {{'kiln.einsum': operand element types differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<4x8xf32>, tensor<8x3xi8>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @einsum_repeated_output(%a: tensor<3x4xf32>) -> tensor<3x3xf32> {
  // expected-error @+2 {{einsum output label 'i' is repeated}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.einsum %a {equation = "ij->ii"} : (tensor<3x4xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}
