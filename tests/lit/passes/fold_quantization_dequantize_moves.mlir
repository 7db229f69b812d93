// kiln-fold-quantization: a reshape or transpose of a per-tensor int8 dequantization moves the
// int8 values and is dequantized after (the same values; a quarter of f32's bytes; an INT8
// convolution reading it then reads a dequantization). Equal moves of one value become one;
// other readers keep the dequantization as it was.
// RUN: kiln-opt %s --kiln-fold-quantization | FileCheck %s
// RUN: kiln-opt %s --kiln-fold-quantization | grep -c kiln.transpose | FileCheck %s --check-prefix=ONE

// ONE: {{^}}1{{$}}

// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[T:.*]] = kiln.transpose %arg0 {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x32x4x4xi8>) -> tensor<2x4x4x32xi8>
// CHECK-DAG: %[[TD:.*]] = kiln.dequantize %[[T]], {{.*}} -> tensor<2x4x4x32xf32>
// CHECK-DAG: %[[R:.*]] = kiln.reshape %arg0 : tensor<2x32x4x4xi8> to tensor<2x512xi8>
// CHECK-DAG: %[[RD:.*]] = kiln.dequantize %[[R]], {{.*}} -> tensor<2x512xf32>
// CHECK-DAG: %[[D:.*]] = kiln.dequantize %arg0, {{.*}} -> tensor<2x32x4x4xf32>
// CHECK-DAG: %[[E:.*]] = kiln.relu %[[D]]
// CHECK: return %[[TD]], %[[TD]], %[[RD]], %[[E]]
func.func @main(%q: tensor<2x32x4x4xi8>) -> (tensor<2x4x4x32xf32>, tensor<2x4x4x32xf32>, tensor<2x512xf32>, tensor<2x32x4x4xf32>) {
  %s = kiln.constant dense<0.05> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %d = kiln.dequantize %q, %s, %z : (tensor<2x32x4x4xi8>, tensor<f32>, tensor<i8>) -> tensor<2x32x4x4xf32>
  %t1 = kiln.transpose %d {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x32x4x4xf32>) -> tensor<2x4x4x32xf32>
  %t2 = kiln.transpose %d {perm = array<i64: 0, 2, 3, 1>} : (tensor<2x32x4x4xf32>) -> tensor<2x4x4x32xf32>
  %r = kiln.reshape %d : tensor<2x32x4x4xf32> to tensor<2x512xf32>
  %e = kiln.relu %d : tensor<2x32x4x4xf32>
  return %t1, %t2, %r, %e : tensor<2x4x4x32xf32>, tensor<2x4x4x32xf32>, tensor<2x512xf32>, tensor<2x32x4x4xf32>
}
