// RUN: kiln-opt %s -kiln-form-fusion-groups -split-input-file | FileCheck %s

// An image's cast, its 2x2 blocks gathered by a transpose and the pad to 16 channels and the
// borders (kiln-space-to-depth-convs' stem input): one gather group, every op in its own types
// (the bf16 chain is not widened), and the relu before the cast inside it too.
// CHECK-LABEL: func.func @stem_input
// CHECK: %[[G:.*]] = kiln.fusion_group "gather"(%arg0, %{{.*}}, %{{.*}}) : (tensor<1x3x8x8xf32>, tensor<8xi64>, tensor<bf16>) -> tensor<1x7x7x16xbf16> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<1x3x8x8xf32>, %[[P:.*]]: tensor<8xi64>, %[[V:.*]]: tensor<bf16>):
// CHECK-NEXT: %[[R:.*]] = kiln.relu %[[X]] : tensor<1x3x8x8xf32>
// CHECK-NEXT: %[[C:.*]] = kiln.cast %[[R]] : tensor<1x3x8x8xf32> to tensor<1x3x8x8xbf16>
// CHECK-NEXT: %[[S:.*]] = kiln.reshape %[[C]]
// CHECK-NEXT: %[[T:.*]] = kiln.transpose %[[S]] {perm = array<i64: 0, 2, 4, 3, 5, 1>} : (tensor<1x3x4x2x4x2xbf16>) -> tensor<1x4x4x2x2x3xbf16>
// CHECK-NEXT: %[[B:.*]] = kiln.reshape %[[T]]
// CHECK-NEXT: %[[D:.*]] = kiln.pad %[[B]], %[[P]], %[[V]] : (tensor<1x4x4x12xbf16>, tensor<8xi64>, tensor<bf16>) -> tensor<1x7x7x16xbf16>
// CHECK-NEXT: kiln.yield %[[D]]
// CHECK: return %[[G]]
func.func @stem_input(%x: tensor<1x3x8x8xf32>) -> tensor<1x7x7x16xbf16> {
  %r = kiln.relu %x : tensor<1x3x8x8xf32>
  %c = kiln.cast %r : tensor<1x3x8x8xf32> to tensor<1x3x8x8xbf16>
  %s = kiln.reshape %c : tensor<1x3x8x8xbf16> to tensor<1x3x4x2x4x2xbf16>
  %t = kiln.transpose %s {perm = array<i64: 0, 2, 4, 3, 5, 1>} : (tensor<1x3x4x2x4x2xbf16>) -> tensor<1x4x4x2x2x3xbf16>
  %b = kiln.reshape %t : tensor<1x4x4x2x2x3xbf16> to tensor<1x4x4x12xbf16>
  %pads = kiln.constant dense<[0, 2, 2, 0, 0, 1, 1, 4]> : tensor<8xi64>
  %zero = kiln.constant dense<0.0> : tensor<bf16>
  %p = kiln.pad %b, %pads, %zero : (tensor<1x4x4x12xbf16>, tensor<8xi64>, tensor<bf16>) -> tensor<1x7x7x16xbf16>
  return %p : tensor<1x7x7x16xbf16>
}

// -----

// What stays out of a gather group: a chain that does not end in a pad (a cast and a transpose
// keep the transpose's tiled kernel); an elementwise op reading a tensor besides the chain (it
// broadcasts: an elementwise group's); a value the chain computes that another op reads too; a
// pad that crops or repeats the edge.
// CHECK-LABEL: func.func @not_gathered
// CHECK-NOT: "gather"
// CHECK: kiln.cast
// CHECK: kiln.transpose
// CHECK: kiln.add
// CHECK: kiln.transpose
// CHECK: kiln.transpose
// CHECK: kiln.pad
// CHECK: kiln.transpose
// CHECK: kiln.pad {{.*}}mode = "edge"
// CHECK-NOT: "gather"
func.func @not_gathered(%x: tensor<2x3x4xf32>, %m: tensor<2x3x1xf32>)
    -> (tensor<4x3x2xf16>, tensor<4x3x2xf32>, tensor<4x3x2xf32>, tensor<5x3x1xf32>, tensor<6x3x2xf32>) {
  %x16 = kiln.cast %x : tensor<2x3x4xf32> to tensor<2x3x4xf16>
  %t = kiln.transpose %x16 {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf16>) -> tensor<4x3x2xf16>
  %a = kiln.add %x, %m : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32>
  %u = kiln.transpose %a {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %v = kiln.transpose %x {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %crop = kiln.constant dense<[1, 0, 0, 0, 0, -1]> : tensor<6xi64>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %c = kiln.pad %v, %crop, %zero : (tensor<4x3x2xf32>, tensor<6xi64>, tensor<f32>) -> tensor<5x3x1xf32>
  %w = kiln.transpose %x {perm = array<i64: 2, 1, 0>} : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %grow = kiln.constant dense<[1, 0, 0, 1, 0, 0]> : tensor<6xi64>
  %e = kiln.pad %w, %grow, %zero {mode = "edge"} : (tensor<4x3x2xf32>, tensor<6xi64>, tensor<f32>) -> tensor<6x3x2xf32>
  return %t, %u, %v, %c, %e : tensor<4x3x2xf16>, tensor<4x3x2xf32>, tensor<4x3x2xf32>, tensor<5x3x1xf32>, tensor<6x3x2xf32>
}
