// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// An expand to its input's own shape is its input.
// CHECK-LABEL: func.func @identity
// CHECK-NEXT: return %arg0
func.func @identity(%x: tensor<2x1x4x4xi1>) -> tensor<2x1x4x4xi1> {
  %e = kiln.expand %x : tensor<2x1x4x4xi1> to tensor<2x1x4x4xi1>
  return %e : tensor<2x1x4x4xi1>
}

// -----

// An add whose other operand spans the result reads the row unexpanded: the broadcast is
// never written out.
// CHECK-LABEL: func.func @into_add
// CHECK-NEXT: %[[R:.*]] = kiln.add %arg0, %arg1 : (tensor<2x4x3xf32>, tensor<1x1x3xf32>) -> tensor<2x4x3xf32>
// CHECK-NEXT: return %[[R]]
func.func @into_add(%x: tensor<2x4x3xf32>, %row: tensor<1x1x3xf32>) -> tensor<2x4x3xf32> {
  %e = kiln.expand %row : tensor<1x1x3xf32> to tensor<2x4x3xf32>
  %r = kiln.add %x, %e : (tensor<2x4x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %r : tensor<2x4x3xf32>
}

// -----

// Where the other operands do not span the result the expand stays for that reader (here the
// add's result would shrink), and a reader that does not broadcast (relu) keeps it too. The
// where reads the row unexpanded (its expanded mask spans the result), then must keep the
// mask expanded: the row and the column alone would shrink it.
// CHECK-LABEL: func.func @stays
// CHECK: %[[E:.*]] = kiln.expand %arg0
// CHECK: %[[M:.*]] = kiln.expand %arg2
// CHECK: kiln.add %[[E]], %arg1
// CHECK: kiln.relu %[[E]]
// CHECK: kiln.where %[[M]], %arg0, %arg1 : (tensor<2x4x3xi1>, tensor<1x1x3xf32>, tensor<1x4x3xf32>)
func.func @stays(%row: tensor<1x1x3xf32>, %col: tensor<1x4x3xf32>, %mask: tensor<1x1x3xi1>)
    -> (tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4x3xf32>) {
  %e = kiln.expand %row : tensor<1x1x3xf32> to tensor<2x4x3xf32>
  %m = kiln.expand %mask : tensor<1x1x3xi1> to tensor<2x4x3xi1>
  %a = kiln.add %e, %col : (tensor<2x4x3xf32>, tensor<1x4x3xf32>) -> tensor<2x4x3xf32>
  %r = kiln.relu %e : tensor<2x4x3xf32>
  %w = kiln.where %m, %e, %col : (tensor<2x4x3xi1>, tensor<2x4x3xf32>, tensor<1x4x3xf32>) -> tensor<2x4x3xf32>
  return %a, %r, %w : tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x4x3xf32>
}
