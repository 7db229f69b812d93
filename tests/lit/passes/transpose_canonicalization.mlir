// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// MultiheadAttention's [B, S, E] -> [S, B, E] transpose at batch 1 moves no bytes: a reshape.
// CHECK-LABEL: func.func @unit_axis_moves
// CHECK-NEXT: %[[R:.*]] = kiln.reshape %arg0 : tensor<1x197x768xbf16> to tensor<197x1x768xbf16>
// CHECK-NEXT: return %[[R]]
func.func @unit_axis_moves(%x: tensor<1x197x768xbf16>) -> tensor<197x1x768xbf16> {
  %t = kiln.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<1x197x768xbf16>) -> tensor<197x1x768xbf16>
  return %t : tensor<197x1x768xbf16>
}

// -----

// At batch 2 the same transpose moves data and stays.
// CHECK-LABEL: func.func @data_moves
// CHECK-NEXT: kiln.transpose
func.func @data_moves(%x: tensor<2x197x768xbf16>) -> tensor<197x2x768xbf16> {
  %t = kiln.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<2x197x768xbf16>) -> tensor<197x2x768xbf16>
  return %t : tensor<197x2x768xbf16>
}

// -----

// Two axes of size > 1 swapped around unit axes: not a reshape.
// CHECK-LABEL: func.func @swaps_around_unit_axes
// CHECK-NEXT: kiln.transpose
func.func @swaps_around_unit_axes(%x: tensor<3x1x4xf32>) -> tensor<4x1x3xf32> {
  %t = kiln.transpose %x {perm = array<i64: 2, 1, 0>} : (tensor<3x1x4xf32>) -> tensor<4x1x3xf32>
  return %t : tensor<4x1x3xf32>
}
