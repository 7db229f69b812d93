// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// BERT's flattened attention mask gathered at 0, 1, ..., n - 1: every slice stays where it is,
// a reshape (a view) and no gather step.
// CHECK-LABEL: func.func @every_index_in_order
// CHECK-NEXT: %[[R:.*]] = kiln.reshape %arg0 : tensor<8x1xi1> to tensor<2x1x4x1xi1>
// CHECK-NEXT: return %[[R]]
func.func @every_index_in_order(%x: tensor<8x1xi1>) -> tensor<2x1x4x1xi1> {
  %i = kiln.constant dense<[[[0, 1, 2, 3]], [[4, 5, 6, 7]]]> : tensor<2x1x4xi64>
  %g = kiln.gather %x, %i {axis = 0 : i64} : (tensor<8x1xi1>, tensor<2x1x4xi64>) -> tensor<2x1x4x1xi1>
  return %g : tensor<2x1x4x1xi1>
}

// -----

// Along an inner axis too: [2, 3] at [0, 1, 2] of axis 1.
// CHECK-LABEL: func.func @inner_axis
// CHECK-NEXT: kiln.reshape %arg0 : tensor<2x3xf32> to tensor<2x3xf32>
func.func @inner_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %i = kiln.constant dense<[0, 1, 2]> : tensor<3xi64>
  %g = kiln.gather %x, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  return %g : tensor<2x3xf32>
}

// -----

// A permutation, or fewer indices than the axis holds, moves or drops slices: the gathers stay.
// CHECK-LABEL: func.func @moves_or_drops
// CHECK: kiln.gather
// CHECK: kiln.gather
func.func @moves_or_drops(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<3x2xf32>) {
  %p = kiln.constant dense<[1, 0, 2, 3]> : tensor<4xi64>
  %f = kiln.constant dense<[0, 1, 2]> : tensor<3xi64>
  %a = kiln.gather %x, %p {axis = 0 : i64} : (tensor<4x2xf32>, tensor<4xi64>) -> tensor<4x2xf32>
  %b = kiln.gather %x, %f {axis = 0 : i64} : (tensor<4x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return %a, %b : tensor<4x2xf32>, tensor<3x2xf32>
}
