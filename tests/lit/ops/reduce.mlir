// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// The generic form (properties spelled out) parses back to the same ops.
// RUN: kiln-opt %s -mlir-print-op-generic | kiln-opt | FileCheck %s

// Reductions (axes as an optional operand), arg reductions and cumsum.

// CHECK-LABEL: func.func @reduce_constant_axes
func.func @reduce_constant_axes(%x: tensor<1x128x768xf32>) -> tensor<1x128x1xf32> {
  %axes = kiln.constant dense<[-1]> : tensor<1xi64>
  // CHECK: kiln.reduce_mean %{{.*}} axes %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %0 = kiln.reduce_mean %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  // CHECK: kiln.reduce_sum %{{.*}} axes %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %1 = kiln.reduce_sum %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  // CHECK: kiln.reduce_max %{{.*}} axes %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %2 = kiln.reduce_max %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  // CHECK: kiln.reduce_min %{{.*}} axes %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %3 = kiln.reduce_min %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  // CHECK: kiln.reduce_prod %{{.*}} axes %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %4 = kiln.reduce_prod %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  // CHECK: kiln.reduce_l1 %{{.*}} axes %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %5 = kiln.reduce_l1 %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  // CHECK: kiln.reduce_l2 %{{.*}} axes %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %6 = kiln.reduce_l2 %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  // CHECK: kiln.reduce_sum_square %{{.*}} axes %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %7 = kiln.reduce_sum_square %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  // CHECK: kiln.reduce_log_sum %{{.*}} axes %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %8 = kiln.reduce_log_sum %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  // CHECK: kiln.reduce_log_sum_exp %{{.*}} axes %{{.*}} : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %9 = kiln.reduce_log_sum_exp %x axes %axes : (tensor<1x128x768xf32>, tensor<1xi64>) -> tensor<1x128x1xf32>
  %s0 = kiln.add %0, %1 : (tensor<1x128x1xf32>, tensor<1x128x1xf32>) -> tensor<1x128x1xf32>
  %s1 = kiln.add %s0, %2 : (tensor<1x128x1xf32>, tensor<1x128x1xf32>) -> tensor<1x128x1xf32>
  %s2 = kiln.add %s1, %3 : (tensor<1x128x1xf32>, tensor<1x128x1xf32>) -> tensor<1x128x1xf32>
  %s3 = kiln.add %s2, %4 : (tensor<1x128x1xf32>, tensor<1x128x1xf32>) -> tensor<1x128x1xf32>
  %s4 = kiln.add %s3, %5 : (tensor<1x128x1xf32>, tensor<1x128x1xf32>) -> tensor<1x128x1xf32>
  %s5 = kiln.add %s4, %6 : (tensor<1x128x1xf32>, tensor<1x128x1xf32>) -> tensor<1x128x1xf32>
  %s6 = kiln.add %s5, %7 : (tensor<1x128x1xf32>, tensor<1x128x1xf32>) -> tensor<1x128x1xf32>
  %s7 = kiln.add %s6, %8 : (tensor<1x128x1xf32>, tensor<1x128x1xf32>) -> tensor<1x128x1xf32>
  %s8 = kiln.add %s7, %9 : (tensor<1x128x1xf32>, tensor<1x128x1xf32>) -> tensor<1x128x1xf32>
  return %s8 : tensor<1x128x1xf32>
}

// CHECK-LABEL: func.func @reduce_variants
func.func @reduce_variants(%x: tensor<1x64x7x7xf16>, %i: tensor<4x5x6xi32>, %dyn: tensor<2xi64>)
    -> (tensor<1x64xf16>, tensor<i32>, tensor<1x1x1xi32>, tensor<4x5x6xi32>, tensor<4x5x6xi32>,
        tensor<4x6xi32>, tensor<4x1x1xi32>) {
  %hw = kiln.constant dense<[2, 3]> : tensor<2xi64>
  // keepdims = false drops the reduced axes.
  // CHECK: kiln.reduce_mean %{{.*}} axes %{{.*}} {keepdims = false} : (tensor<1x64x7x7xf16>, tensor<2xi64>) -> tensor<1x64xf16>
  %0 = kiln.reduce_mean %x axes %hw {keepdims = false}
      : (tensor<1x64x7x7xf16>, tensor<2xi64>) -> tensor<1x64xf16>
  // No axes: all axes are reduced.
  // CHECK: kiln.reduce_sum %{{.*}} {keepdims = false} : (tensor<4x5x6xi32>) -> tensor<i32>
  %1 = kiln.reduce_sum %i {keepdims = false} : (tensor<4x5x6xi32>) -> tensor<i32>
  // CHECK: kiln.reduce_max %{{.*}} : (tensor<4x5x6xi32>) -> tensor<1x1x1xi32>
  %2 = kiln.reduce_max %i : (tensor<4x5x6xi32>) -> tensor<1x1x1xi32>
  // noop_with_empty_axes without axes is the identity.
  // CHECK: kiln.reduce_min %{{.*}} {noop_with_empty_axes = true} : (tensor<4x5x6xi32>) -> tensor<4x5x6xi32>
  %3 = kiln.reduce_min %i {noop_with_empty_axes = true} : (tensor<4x5x6xi32>) -> tensor<4x5x6xi32>
  // ... and so with empty constant axes.
  %none = kiln.constant dense<> : tensor<0xi64>
  // CHECK: kiln.reduce_prod %{{.*}} axes %{{.*}} {noop_with_empty_axes = true} : (tensor<4x5x6xi32>, tensor<0xi64>) -> tensor<4x5x6xi32>
  %4 = kiln.reduce_prod %i axes %none {noop_with_empty_axes = true}
      : (tensor<4x5x6xi32>, tensor<0xi64>) -> tensor<4x5x6xi32>
  %mid = kiln.constant dense<1> : tensor<1xi64>
  // CHECK: kiln.reduce_l1 %{{.*}} axes %{{.*}} {keepdims = false} : (tensor<4x5x6xi32>, tensor<1xi64>) -> tensor<4x6xi32>
  %5 = kiln.reduce_l1 %i axes %mid {keepdims = false}
      : (tensor<4x5x6xi32>, tensor<1xi64>) -> tensor<4x6xi32>
  // Computed axes: only the rank is checked.
  // CHECK: kiln.reduce_sum_square %{{.*}} axes %{{.*}} : (tensor<4x5x6xi32>, tensor<2xi64>) -> tensor<4x1x1xi32>
  %6 = kiln.reduce_sum_square %i axes %dyn
      : (tensor<4x5x6xi32>, tensor<2xi64>) -> tensor<4x1x1xi32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<1x64xf16>, tensor<i32>, tensor<1x1x1xi32>,
      tensor<4x5x6xi32>, tensor<4x5x6xi32>, tensor<4x6xi32>, tensor<4x1x1xi32>
}

// CHECK-LABEL: func.func @arg_reduce
func.func @arg_reduce(%x: tensor<1x1000xf32>, %y: tensor<3x4x5xui8>)
    -> (tensor<1x1xi64>, tensor<3x5xi64>) {
  // CHECK: kiln.argmax %{{.*}} {axis = 1 : i64} : (tensor<1x1000xf32>) -> tensor<1x1xi64>
  %0 = kiln.argmax %x {axis = 1 : i64} : (tensor<1x1000xf32>) -> tensor<1x1xi64>
  // CHECK: kiln.argmin %{{.*}} {axis = 1 : i64, keepdims = false, select_last_index = true} : (tensor<3x4x5xui8>) -> tensor<3x5xi64>
  %1 = kiln.argmin %y {axis = 1 : i64, keepdims = false, select_last_index = true}
      : (tensor<3x4x5xui8>) -> tensor<3x5xi64>
  return %0, %1 : tensor<1x1xi64>, tensor<3x5xi64>
}

// CHECK-LABEL: func.func @cumsum
func.func @cumsum(%x: tensor<2x16xf32>, %a: tensor<i32>, %y: tensor<8xi64>)
    -> (tensor<2x16xf32>, tensor<8xi64>) {
  // CHECK: kiln.cumsum %{{.*}}, %{{.*}} : tensor<2x16xf32>, tensor<i32>
  %0 = kiln.cumsum %x, %a : tensor<2x16xf32>, tensor<i32>
  %axis = kiln.constant dense<[-1]> : tensor<1xi64>
  // CHECK: kiln.cumsum %{{.*}}, %{{.*}} {exclusive = true, reverse = true} : tensor<8xi64>, tensor<1xi64>
  %1 = kiln.cumsum %y, %axis {exclusive = true, reverse = true} : tensor<8xi64>, tensor<1xi64>
  return %0, %1 : tensor<2x16xf32>, tensor<8xi64>
}
