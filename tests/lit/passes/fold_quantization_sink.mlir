// kiln-fold-quantization moves a per-tensor quantization (zero point 0) above the reshapes,
// transposes, zero paddings and max pools whose only reader it is: they then move 8-bit values,
// and the quantize can join what computes their input. A padding with another value, a move
// whose result is also read elsewhere, or the max pool of a float convolution's result (cuDNN's
// bf16 convs writing int8 are slower than the int8 pool saves) keeps its quantize after it.
// RUN: kiln-opt %s --kiln-fold-quantization | FileCheck %s
// RUN: kiln-opt %s --kiln-fold-quantization -o %t.mlir && kiln eval %s --output-dir %t.before > /dev/null && kiln eval %t.mlir --output-dir %t.after > /dev/null
// RUN: %python -c "import numpy as np, sys; [sys.exit(n) for n in ('q', 'p', 'o', 'c') if np.any(np.load('%t.before/' + n + '.npy') != np.load('%t.after/' + n + '.npy'))]"

// CHECK-LABEL: func.func @main
// CHECK: %[[XQ:.*]] = kiln.quantize %arg0, {{.*}} -> tensor<1x4x4x6xi8>
// CHECK: %[[T:.*]] = kiln.transpose %[[XQ]] {{.*}} -> tensor<1x4x6x4xi8>
// CHECK: %[[Z:.*]] = kiln.constant dense<0> : tensor<i8>
// CHECK: %[[P:.*]] = kiln.pad %[[T]], %{{.*}}, %[[Z]] : {{.*}} -> tensor<1x4x6x8xi8>
// CHECK: %[[M:.*]] = kiln.max_pool %[[P]] {{.*}} -> tensor<1x2x3x8xi8>
// The padding with 1 keeps its quantize after it.
// CHECK: %[[O:.*]] = kiln.pad %arg0
// CHECK: kiln.quantize %[[O]]
// A transpose also read as it is keeps its quantize.
// CHECK: %[[R:.*]] = kiln.transpose %arg0
// CHECK: kiln.quantize %[[R]]
// The max pool of a float conv's ReLU keeps its quantize after it.
// CHECK: %[[CP:.*]] = kiln.max_pool {{.*}} -> tensor<1x2x2x8xbf16>
// CHECK: kiln.quantize %[[CP]]

func.func @main(%x: tensor<1x4x4x6xf32> {kiln.name = "x"})
    -> (tensor<1x2x3x8xi8> {kiln.name = "q"}, tensor<1x4x4x8xi8> {kiln.name = "p"},
        tensor<1x4x6x4xi8> {kiln.name = "o"}, tensor<1x4x6x4xf32> {kiln.name = "r"},
        tensor<1x2x2x8xi8> {kiln.name = "c"}) {
  %s = kiln.constant dense<0.0625> : tensor<f32>
  %z = kiln.constant dense<0> : tensor<i8>
  %t = kiln.transpose %x {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x4x6xf32>) -> tensor<1x4x6x4xf32>
  %pads = kiln.constant dense<[0, 0, 0, 0, 0, 0, 0, 4]> : tensor<8xi64>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %p = kiln.pad %t, %pads, %zero : (tensor<1x4x6x4xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x4x6x8xf32>
  %m = kiln.max_pool %p {kernel_shape = array<i64: 3, 3>, dilations = array<i64: 1, 1>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, channels_last = true} : (tensor<1x4x6x8xf32>) -> tensor<1x2x3x8xf32>
  %q = kiln.quantize %m, %s, %z : (tensor<1x2x3x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x2x3x8xi8>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %pads2 = kiln.constant dense<[0, 0, 0, 0, 0, 0, 0, 2]> : tensor<8xi64>
  %o = kiln.pad %x, %pads2, %one : (tensor<1x4x4x6xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x4x4x8xf32>
  %oq = kiln.quantize %o, %s, %z : (tensor<1x4x4x8xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4x4x8xi8>
  %r = kiln.transpose %x {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x4x4x6xf32>) -> tensor<1x4x6x4xf32>
  %rq = kiln.quantize %r, %s, %z : (tensor<1x4x6x4xf32>, tensor<f32>, tensor<i8>) -> tensor<1x4x6x4xi8>
  %xb = kiln.cast %x : tensor<1x4x4x6xf32> to tensor<1x4x4x6xbf16>
  %w = kiln.constant dense<0.25> : tensor<8x1x1x6xbf16>
  %c = kiln.conv %xb, %w {channels_last = true, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x4x4x6xbf16>, tensor<8x1x1x6xbf16>) -> tensor<1x4x4x8xbf16>
  %cr = kiln.relu %c : tensor<1x4x4x8xbf16>
  %cp = kiln.max_pool %cr {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 1, 1>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, channels_last = true} : (tensor<1x4x4x8xbf16>) -> tensor<1x2x2x8xbf16>
  %s16 = kiln.constant dense<0.0625> : tensor<bf16>
  %cq = kiln.quantize %cp, %s16, %z : (tensor<1x2x2x8xbf16>, tensor<bf16>, tensor<i8>) -> tensor<1x2x2x8xi8>
  return %q, %oq, %rq, %r, %cq : tensor<1x2x3x8xi8>, tensor<1x4x4x8xi8>, tensor<1x4x6x4xi8>, tensor<1x4x6x4xf32>, tensor<1x2x2x8xi8>
}
