// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// kiln.attention: views that leave their tensor, results written twice or not covered, types.

func.func @view_out_of_bounds(%x: tensor<1x8x32xbf16>) -> tensor<1x8x32xbf16> {
  // expected-error @+1 {{'kiln.attention' op k_view reaches element 271 of a tensor of 256}}
  %0 = kiln.attention %x, %x, %x {dims = array<i64: 1, 2, 8, 8, 16, 16>, q_view = array<i64: 0, 256, 16, 32, 1>, k_view = array<i64: 16, 256, 16, 32, 1>, v_view = array<i64: 0, 256, 16, 32, 1>, o_view = array<i64: 0, 256, 16, 32, 1>, scale = 2.5e-01 : f32} : (tensor<1x8x32xbf16>, tensor<1x8x32xbf16>, tensor<1x8x32xbf16>) -> tensor<1x8x32xbf16>
  return %0 : tensor<1x8x32xbf16>
}

// -----

func.func @result_written_twice(%x: tensor<1x8x32xbf16>) -> tensor<1x8x32xbf16> {
  // expected-error @+1 {{'kiln.attention' op o_view writes two elements of the result at one place}}
  %0 = kiln.attention %x, %x, %x {dims = array<i64: 1, 2, 8, 8, 16, 16>, q_view = array<i64: 0, 256, 16, 32, 1>, k_view = array<i64: 0, 256, 16, 32, 1>, v_view = array<i64: 0, 256, 16, 32, 1>, o_view = array<i64: 0, 256, 8, 32, 1>, scale = 2.5e-01 : f32} : (tensor<1x8x32xbf16>, tensor<1x8x32xbf16>, tensor<1x8x32xbf16>) -> tensor<1x8x32xbf16>
  return %0 : tensor<1x8x32xbf16>
}

// -----

func.func @result_not_covered(%x: tensor<1x8x32xbf16>) -> tensor<1x8x64xbf16> {
  // expected-error @+1 {{'kiln.attention' op o_view must cover every element of the result}}
  %0 = kiln.attention %x, %x, %x {dims = array<i64: 1, 2, 8, 8, 16, 16>, q_view = array<i64: 0, 256, 16, 32, 1>, k_view = array<i64: 0, 256, 16, 32, 1>, v_view = array<i64: 0, 256, 16, 32, 1>, o_view = array<i64: 0, 512, 16, 64, 1>, scale = 2.5e-01 : f32} : (tensor<1x8x32xbf16>, tensor<1x8x32xbf16>, tensor<1x8x32xbf16>) -> tensor<1x8x64xbf16>
  return %0 : tensor<1x8x64xbf16>
}

// -----

func.func @mask_type(%x: tensor<1x8x32xbf16>, %m: tensor<1x1x8x8xf32>) -> tensor<1x8x32xbf16> {
  // expected-error @+1 {{'kiln.attention' op mask must have q's element type}}
  %0 = kiln.attention %x, %x, %x, %m {dims = array<i64: 1, 2, 8, 8, 16, 16>, q_view = array<i64: 0, 256, 16, 32, 1>, k_view = array<i64: 0, 256, 16, 32, 1>, v_view = array<i64: 0, 256, 16, 32, 1>, o_view = array<i64: 0, 256, 16, 32, 1>, mask_view = array<i64: 0, 0, 0, 8, 1>, scale = 2.5e-01 : f32} : (tensor<1x8x32xbf16>, tensor<1x8x32xbf16>, tensor<1x8x32xbf16>, tensor<1x1x8x8xf32>) -> tensor<1x8x32xbf16>
  return %0 : tensor<1x8x32xbf16>
}

// -----

func.func @dims(%x: tensor<1x8x32xbf16>) -> tensor<1x8x32xbf16> {
  // expected-error @+1 {{'kiln.attention' op dims must be six positive sizes [B, H, Sq, Skv, D, Dv]}}
  %0 = kiln.attention %x, %x, %x {dims = array<i64: 1, 2, 8, 16, 16>, q_view = array<i64: 0, 256, 16, 32, 1>, k_view = array<i64: 0, 256, 16, 32, 1>, v_view = array<i64: 0, 256, 16, 32, 1>, o_view = array<i64: 0, 256, 16, 32, 1>, scale = 2.5e-01 : f32} : (tensor<1x8x32xbf16>, tensor<1x8x32xbf16>, tensor<1x8x32xbf16>) -> tensor<1x8x32xbf16>
  return %0 : tensor<1x8x32xbf16>
}
