// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// A cast to the operand's own type is the operand.
// CHECK-LABEL: func.func @identity
// CHECK-NEXT: return %arg0
func.func @identity(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = kiln.cast %x : tensor<4xf32> to tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// A back-and-forth that loses nothing disappears: bf16 -> f32 -> bf16.
// CHECK-LABEL: func.func @lossless_round_trip
// CHECK-NEXT: return %arg0
func.func @lossless_round_trip(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %w = kiln.cast %x : tensor<4xbf16> to tensor<4xf32>
  %n = kiln.cast %w : tensor<4xf32> to tensor<4xbf16>
  return %n : tensor<4xbf16>
}

// -----

// f32 -> bf16 -> f32 rounds: both casts stay.
// CHECK-LABEL: func.func @lossy_round_trip
// CHECK-NEXT: %[[N:.*]] = kiln.cast %arg0 : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT: %[[W:.*]] = kiln.cast %[[N]] : tensor<4xbf16> to tensor<4xf32>
// CHECK-NEXT: return %[[W]]
func.func @lossy_round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = kiln.cast %x : tensor<4xf32> to tensor<4xbf16>
  %w = kiln.cast %n : tensor<4xbf16> to tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// Through an exact intermediate type the chain is one cast: bf16 -> f32 -> f16 is bf16 -> f16.
// CHECK-LABEL: func.func @exact_chain
// CHECK-NEXT: %[[C:.*]] = kiln.cast %arg0 : tensor<4xbf16> to tensor<4xf16>
// CHECK-NEXT: return %[[C]]
func.func @exact_chain(%x: tensor<4xbf16>) -> tensor<4xf16> {
  %w = kiln.cast %x : tensor<4xbf16> to tensor<4xf32>
  %h = kiln.cast %w : tensor<4xf32> to tensor<4xf16>
  return %h : tensor<4xf16>
}

// -----

// i32 -> f64 is exact, but f64 -> i8 saturates where i32 -> i8 wraps: both casts stay.
// i8 -> f32 -> i32 keeps every value: one cast.
// CHECK-LABEL: func.func @integer_chains
// CHECK-NEXT: %[[D:.*]] = kiln.cast %arg0 : tensor<4xi32> to tensor<4xf64>
// CHECK-NEXT: %[[S:.*]] = kiln.cast %[[D]] : tensor<4xf64> to tensor<4xi8>
// CHECK-NEXT: %[[W:.*]] = kiln.cast %arg1 : tensor<4xi8> to tensor<4xi32>
// CHECK-NEXT: return %[[S]], %[[W]]
func.func @integer_chains(%x: tensor<4xi32>, %y: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi32>) {
  %d = kiln.cast %x : tensor<4xi32> to tensor<4xf64>
  %s = kiln.cast %d : tensor<4xf64> to tensor<4xi8>
  %f = kiln.cast %y : tensor<4xi8> to tensor<4xf32>
  %w = kiln.cast %f : tensor<4xf32> to tensor<4xi32>
  return %s, %w : tensor<4xi8>, tensor<4xi32>
}

// -----

// A cast of a constant is a constant, rounded half to even: in f16, 1 + 2^-11 is a tie that
// rounds to 1, 1 + 3 * 2^-11 rounds up to 1 + 2^-9; 70000 is beyond f16 (inf); the smallest
// subnormal 2^-24 survives and 2^-25 (a tie) rounds to 0.
// CHECK-LABEL: func.func @constant_f16
// CHECK-NEXT: kiln.constant dense<[1.000000e+00, 1.001950e+00, 0x7C00, 5.960460e-08, 0.000000e+00]> : tensor<5xf16>
func.func @constant_f16() -> tensor<5xf16> {
  %c = kiln.constant dense<[1.00048828125, 1.00146484375, 70000.0, 5.9604644775390625e-08, 2.98023223876953125e-08]> : tensor<5xf32>
  %h = kiln.cast %c : tensor<5xf32> to tensor<5xf16>
  return %h : tensor<5xf16>
}

// -----

// bf16 keeps f32's exponent: 1 + 2^-8 is a tie (rounds to 1), 1 + 3 * 2^-8 rounds up, 1e38 stays
// finite, NaN stays NaN.
// CHECK-LABEL: func.func @constant_bf16
// CHECK-NEXT: kiln.constant dense<[1.000000e+00, 1.015630e+00, 9.9692{{[0-9]*}}e+37, 0x7FC0]> : tensor<4xbf16>
func.func @constant_bf16() -> tensor<4xbf16> {
  %c = kiln.constant dense<[1.00390625, 1.01171875, 1.0e38, 0x7FC00000]> : tensor<4xf32>
  %h = kiln.cast %c : tensor<4xf32> to tensor<4xbf16>
  return %h : tensor<4xbf16>
}

// -----

// Weights of any size are cast at compile time into a new blob; a splat stays a splat.
// CHECK-LABEL: func.func @weights
// CHECK-DAG: kiln.constant dense_resource<w_bf16> : tensor<20xbf16>
// CHECK-DAG: kiln.constant dense<1.500000e+00> : tensor<4096x1024xbf16>
// CHECK-NOT: kiln.cast
func.func @weights() -> (tensor<20xbf16>, tensor<4096x1024xbf16>) {
  %w = kiln.constant dense_resource<w> : tensor<20xf32>
  %s = kiln.constant dense<1.5> : tensor<4096x1024xf32>
  %a = kiln.cast %w : tensor<20xf32> to tensor<20xbf16>
  %b = kiln.cast %s : tensor<4096x1024xf32> to tensor<4096x1024xbf16>
  return %a, %b : tensor<20xbf16>, tensor<4096x1024xbf16>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}
