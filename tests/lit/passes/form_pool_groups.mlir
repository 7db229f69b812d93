// RUN: kiln-opt %s -kiln-form-fusion-groups -split-input-file | FileCheck %s

// ResNet's stem max pool in an int8 plan: the bf16 pool and the quantization of its result for
// the first INT8 conv become one pool group, each op in its own types (the pool is not widened:
// it rounds to bf16 as it would alone, then the quantize reads that value).
// CHECK-LABEL: func.func @stem_pool_quantized
// CHECK: %[[G:.*]] = kiln.fusion_group "pool"(%arg0, %{{.*}}, %{{.*}}) : (tensor<1x8x8x32xbf16>, tensor<bf16>, tensor<i8>) -> tensor<1x4x4x32xi8> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<1x8x8x32xbf16>, %[[S:.*]]: tensor<bf16>, %[[Z:.*]]: tensor<i8>):
// CHECK-NEXT: %[[P:.*]] = kiln.max_pool %[[X]] {{.*}} : (tensor<1x8x8x32xbf16>) -> tensor<1x4x4x32xbf16>
// CHECK-NEXT: %[[Q:.*]] = kiln.quantize %[[P]], %[[S]], %[[Z]] : (tensor<1x4x4x32xbf16>, tensor<bf16>, tensor<i8>) -> tensor<1x4x4x32xi8>
// CHECK-NEXT: kiln.yield %[[Q]]
// CHECK: return %[[G]]
func.func @stem_pool_quantized(%x: tensor<1x8x8x32xbf16>) -> tensor<1x4x4x32xi8> {
  %p = kiln.max_pool %x {channels_last = true, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                         pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x8x8x32xbf16>) -> tensor<1x4x4x32xbf16>
  %s = kiln.constant dense<0.5> : tensor<bf16>
  %z = kiln.constant dense<0> : tensor<i8>
  %q = kiln.quantize %p, %s, %z : (tensor<1x4x4x32xbf16>, tensor<bf16>, tensor<i8>) -> tensor<1x4x4x32xi8>
  return %q : tensor<1x4x4x32xi8>
}

// -----

// What stays out of a pool group: a channels-first pool (its kernel takes no epilogue); a pool
// whose value another op reads too (the group would write it as well); an op reading a tensor
// besides the pool's value (a broadcast add: an elementwise group's); a pool with nothing after
// it.
// CHECK-LABEL: func.func @not_pooled
// CHECK-NOT: "pool"
// CHECK: kiln.max_pool
// CHECK: kiln.relu
// CHECK: kiln.avg_pool
// CHECK: kiln.relu
// CHECK: kiln.max_pool
// CHECK: kiln.fusion_group "elementwise"
// CHECK: kiln.max_pool
// CHECK-NOT: "pool"
func.func @not_pooled(%x: tensor<1x4x4x8xf32>, %b: tensor<8xf32>)
    -> (tensor<1x4x2x4xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>) {
  %nchw = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x8xf32>) -> tensor<1x4x2x4xf32>
  %r = kiln.relu %nchw : tensor<1x4x2x4xf32>
  %a = kiln.avg_pool %x {channels_last = true, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x8xf32>) -> tensor<1x2x2x8xf32>
  %ra = kiln.relu %a : tensor<1x2x2x8xf32>
  %m = kiln.max_pool %x {channels_last = true, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x8xf32>) -> tensor<1x2x2x8xf32>
  %s = kiln.add %m, %b : (tensor<1x2x2x8xf32>, tensor<8xf32>) -> tensor<1x2x2x8xf32>
  %t = kiln.relu %s : tensor<1x2x2x8xf32>
  %alone = kiln.max_pool %x {channels_last = true, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x8xf32>) -> tensor<1x2x2x8xf32>
  return %r, %a, %ra, %t, %alone : tensor<1x4x2x4xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>
}
