// RUN: kiln-opt %s --kiln-merge-equivalent-ops | FileCheck %s

// An exporter's per-layer copies of one computation, each named after its own ONNX value, are
// one op afterwards (the first, with its name); so is what is computed from them.
// CHECK-LABEL: func.func @repeated_mask
// CHECK: %[[W:.*]] = kiln.where %arg0, %{{.*}}, %{{.*}} {kiln.onnx_values = ["layer0/Where"]}
// CHECK-NOT: kiln.where
// CHECK: %[[C:.*]] = kiln.cast %[[W]] {kiln.onnx_values = ["layer0/Cast"]}
// CHECK-NOT: kiln.cast
// CHECK: %[[A:.*]] = kiln.add %arg1, %[[C]]
// CHECK: %[[B:.*]] = kiln.add %arg2, %[[C]]
// CHECK: return %[[A]], %[[B]]
func.func @repeated_mask(%m: tensor<2x4xi1>, %s0: tensor<2x4xbf16>, %s1: tensor<2x4xbf16>)
    -> (tensor<2x4xbf16>, tensor<2x4xbf16>) {
  %zero = kiln.constant dense<0.0> : tensor<1xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<1xf32>
  %w0 = kiln.where %m, %zero, %ninf {kiln.onnx_values = ["layer0/Where"]} : (tensor<2x4xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4xf32>
  %c0 = kiln.cast %w0 {kiln.onnx_values = ["layer0/Cast"]} : tensor<2x4xf32> to tensor<2x4xbf16>
  %a = kiln.add %s0, %c0 : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  %w1 = kiln.where %m, %zero, %ninf {kiln.onnx_values = ["layer1/Where"]} : (tensor<2x4xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4xf32>
  %c1 = kiln.cast %w1 {kiln.onnx_values = ["layer1/Cast"]} : tensor<2x4xf32> to tensor<2x4xbf16>
  %b = kiln.add %s1, %c1 : (tensor<2x4xbf16>, tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %a, %b : tensor<2x4xbf16>, tensor<2x4xbf16>
}

// Ops that differ in an operand, an attribute or a result type stay apart.
// CHECK-LABEL: func.func @different
// CHECK-COUNT-3: kiln.cast
// CHECK-COUNT-2: kiln.transpose
func.func @different(%x: tensor<4xf32>, %y: tensor<4xf32>, %z: tensor<2x3x2xf32>)
    -> (tensor<4xbf16>, tensor<4xbf16>, tensor<4xf16>, tensor<2x3x2xf32>, tensor<2x3x2xf32>) {
  %a = kiln.cast %x : tensor<4xf32> to tensor<4xbf16>
  %b = kiln.cast %y : tensor<4xf32> to tensor<4xbf16>
  %c = kiln.cast %x : tensor<4xf32> to tensor<4xf16>
  %t0 = kiln.transpose %z {perm = array<i64: 2, 1, 0>} : (tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  %t1 = kiln.transpose %z {perm = array<i64: 0, 1, 2>} : (tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  return %a, %b, %c, %t0, %t1 : tensor<4xbf16>, tensor<4xbf16>, tensor<4xf16>, tensor<2x3x2xf32>, tensor<2x3x2xf32>
}
